// The `.heapprofile` files the probes wrote (V8's sampling heap profiles: a tree of call frames,
// each with the bytes its samples stand for) as one AllocationProfile per window: the functions
// that allocated and the stacks, merged over the window's processes, paths checkout-relative.
import { readFileSync } from 'node:fs';
import type { AllocationFunction, AllocationProfile } from '../model.js';
import { PROBE_FILE, relativeLocation } from './locations.js';

interface RawFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface RawNode {
  callFrame: RawFrame;
  selfSize: number;
  children: RawNode[];
}

const isRawNode = (x: unknown): x is RawNode => {
  const node = x as RawNode | null;
  const frame = node?.callFrame;
  return (
    typeof node === 'object' &&
    node !== null &&
    typeof frame === 'object' &&
    frame !== null &&
    typeof frame.functionName === 'string' &&
    typeof frame.url === 'string' &&
    Number.isFinite(frame.lineNumber) &&
    Number.isFinite(frame.columnNumber) &&
    Number.isFinite(node.selfSize) &&
    node.selfSize >= 0 &&
    Array.isArray(node.children)
  );
};

/** Functions and stacks as they are built up: a function by name, file, line and column. */
class ProfileBuilder {
  readonly functions: AllocationFunction[] = [];
  private readonly index = new Map<string, number>();
  private readonly stacks = new Map<string, { frames: number[]; bytes: number }>();

  fn(entry: Omit<AllocationFunction, 'selfBytes'>): number {
    const key = `${entry.name}\u0000${entry.file}\u0000${entry.line}\u0000${entry.column}`;
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.functions.push({ ...entry, selfBytes: 0 }) - 1;
      this.index.set(key, i);
    }
    return i;
  }

  add(frames: number[], bytes: number): void {
    if (bytes <= 0 || frames.length === 0) return;
    const top = this.functions[frames[frames.length - 1] as number];
    if (top) top.selfBytes += bytes;
    const key = frames.join(',');
    const known = this.stacks.get(key);
    if (known) known.bytes += bytes;
    else this.stacks.set(key, { frames, bytes });
  }

  /** The profile, functions sorted by their bytes (largest first), stack frames renumbered. */
  done(samplingInterval: number): AllocationProfile {
    const order = this.functions.map((_, i) => i).sort((a, b) => this.selfOf(b) - this.selfOf(a));
    const renumber = new Map(order.map((old, i) => [old, i]));
    const functions = order.map((i) => this.functions[i] as AllocationFunction);
    const stacks = [...this.stacks.values()].map((s) => ({
      frames: s.frames.map((f) => renumber.get(f) as number),
      bytes: s.bytes,
    }));
    const sampledBytes = functions.reduce((sum, f) => sum + f.selfBytes, 0);
    return { samplingInterval, sampledBytes, functions, stacks };
  }

  private selfOf(i: number): number {
    return this.functions[i]?.selfBytes ?? 0;
  }
}

/** Where a script is, as the report names it: checkout-relative, the probe's own frames marked. */
type Locate = (url: string) => string;

/** Adds one raw profile's tree to the builder (iterative: a deep tree must not overflow the stack). */
function addTree(builder: ProfileBuilder, head: unknown, locate: Locate): void {
  if (!isRawNode(head)) throw new Error('the sample tree does not have the expected shape');
  const todo: [RawNode, number[]][] = head.children.map((child) => [child, []]);
  for (let item = todo.pop(); item; item = todo.pop()) {
    const [node, callers] = item;
    if (!isRawNode(node)) throw new Error('a node of the sample tree does not have the expected shape');
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    const frames = [
      ...callers,
      builder.fn({
        name: functionName || '(anonymous)',
        file: locate(url),
        line: lineNumber >= 0 ? lineNumber + 1 : 0,
        column: columnNumber >= 0 ? columnNumber + 1 : 0,
      }),
    ];
    builder.add(frames, node.selfSize);
    for (const child of node.children) todo.push([child, frames]);
  }
}

/**
 * Reads the window's `.heapprofile` files (one per process) into one AllocationProfile. A file
 * that cannot be read or does not have the shape of a sampled heap profile becomes a warning, and
 * the window has no allocation profile (part of its processes would understate the bytes).
 */
export function readHeapProfiles(
  paths: readonly string[],
  where: { root?: string; probePath: string },
): { allocations?: AllocationProfile; warnings: string[] } {
  const warnings: string[] = [];
  const builder = new ProfileBuilder();
  const probeUrl = `file://${where.probePath}`;
  const locate: Locate = (url) =>
    url === where.probePath || url === probeUrl ? PROBE_FILE : relativeLocation(url, where.root);
  let interval = 0;
  for (const path of paths) {
    try {
      const raw = JSON.parse(readFileSync(path, 'utf8')) as { head?: unknown; samplingInterval?: unknown };
      addTree(builder, raw.head, locate);
      if (typeof raw.samplingInterval === 'number' && raw.samplingInterval > 0)
        interval = raw.samplingInterval;
    } catch (err) {
      warnings.push(`could not read the allocation profile ${path}: ${(err as Error).message}`);
      return { warnings };
    }
  }
  return paths.length > 0 ? { allocations: builder.done(interval), warnings } : { warnings };
}
