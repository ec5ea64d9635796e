import type { FunctionEntry, Profile } from './model.js';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfileJson {
  nodes: CpuProfileNode[];
  samples?: number[];
  startTime: number;
  endTime: number;
}

function isCpuProfile(value: unknown): value is CpuProfileJson {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as CpuProfileJson).nodes) &&
    typeof (value as CpuProfileJson).startTime === 'number'
  );
}

const GC_NAMES = new Set(['(garbage collector)']);
const META_NAMES = new Set(['(program)', '(idle)', '(root)']);

/** Reads a `.cpuprofile` (from `node --cpu-prof`, DevTools or v8-profiler-next) into a Profile. */
export function parseCpuProfile(json: string | unknown): Profile {
  const value: unknown = typeof json === 'string' ? JSON.parse(json) : json;
  if (!isCpuProfile(value)) {
    throw new TypeError(
      'not a .cpuprofile: expected an object with "nodes" (array) and "startTime" (number)',
    );
  }
  const byId = new Map<number, CpuProfileNode>();
  for (const node of value.nodes) byId.set(node.id, node);

  // Hit counts per node: prefer the samples array (exact), fall back to hitCount.
  const hits = new Map<number, number>();
  if (value.samples && value.samples.length > 0) {
    for (const id of value.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  } else {
    for (const node of value.nodes) if (node.hitCount) hits.set(node.id, node.hitCount);
  }

  const functions = new Map<string, FunctionEntry>();
  let total = 0;
  for (const [id, count] of hits) {
    const node = byId.get(id);
    if (!node) continue;
    total += count;
    const frame = node.callFrame;
    const name = frame.functionName || '(anonymous)';
    const kind = GC_NAMES.has(name) ? 'gc' : META_NAMES.has(name) ? 'meta' : frame.url ? 'js' : 'builtin';
    const key = `${name}\u0000${frame.url}`;
    let entry = functions.get(key);
    if (!entry) {
      entry = {
        name,
        file: frame.url,
        // .cpuprofile positions are 0-based; the model is 1-based like editors.
        line: frame.lineNumber + 1,
        column: frame.columnNumber + 1,
        kind,
        self: 0,
      };
      functions.set(key, entry);
    }
    entry.self += count;
  }
  const list = [...functions.values()].sort((a, b) => b.self - a.self);
  return { source: 'cpuprofile', totalTicks: total, functions: list };
}
