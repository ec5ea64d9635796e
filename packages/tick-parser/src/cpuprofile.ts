import { HotpathTicksError } from './errors.js';
import type { FunctionKind, Profile, ProfileMeta } from './model.js';
import { ProfileBuilder } from './profile-builder.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface CpuProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

/** The older tree-shaped format (v8-profiler-next's default): nested `head.children`. */
interface TreeNode {
  id: number;
  callFrame?: CallFrame;
  functionName?: string;
  url?: string;
  lineNumber?: number;
  columnNumber?: number;
  hitCount?: number;
  children?: TreeNode[];
}

interface CpuProfileJson {
  nodes?: CpuProfileNode[];
  head?: TreeNode;
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

/** The nodes of a .cpuprofile (its `nodes`, or its `head` tree flattened), or undefined when `value` is not one. */
function profileNodes(value: unknown): { profile: CpuProfileJson; nodes: unknown[] } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const profile = value as CpuProfileJson;
  if (typeof profile.startTime !== 'number') return undefined;
  if (Array.isArray(profile.nodes)) return { profile, nodes: profile.nodes };
  if (typeof profile.head === 'object' && profile.head !== null)
    return { profile, nodes: flattenTree(profile.head) };
  return undefined;
}

/** Turns the nested `head` format into the flat `nodes` format. */
function flattenTree(head: TreeNode): CpuProfileNode[] {
  const nodes: CpuProfileNode[] = [];
  const pending: TreeNode[] = [head];
  const seen = new Set<TreeNode>();
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    const children = (Array.isArray(node.children) ? node.children : []).filter(
      (c): c is TreeNode => typeof c === 'object' && c !== null,
    );
    nodes.push({
      id: node.id,
      callFrame: node.callFrame ?? {
        functionName: node.functionName ?? '',
        url: node.url ?? '',
        lineNumber: (node.lineNumber ?? 0) - 1,
        columnNumber: (node.columnNumber ?? 0) - 1,
      },
      hitCount: node.hitCount,
      children: children.map((c) => c.id),
    });
    for (const child of children) pending.push(child);
  }
  return nodes;
}

/** A node with the fields this parser reads, or undefined when it lacks an id or a call frame. */
function cleanNode(node: unknown): CpuProfileNode | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  const n = node as Partial<CpuProfileNode>;
  const frame = n.callFrame as Partial<CallFrame> | undefined;
  if (typeof n.id !== 'number' || typeof frame !== 'object' || frame === null) return undefined;
  return {
    id: n.id,
    callFrame: {
      functionName: typeof frame.functionName === 'string' ? frame.functionName : '',
      url: typeof frame.url === 'string' ? frame.url : '',
      lineNumber: typeof frame.lineNumber === 'number' ? frame.lineNumber : -1,
      columnNumber: typeof frame.columnNumber === 'number' ? frame.columnNumber : -1,
    },
    hitCount: typeof n.hitCount === 'number' ? n.hitCount : undefined,
    children: Array.isArray(n.children) ? n.children.filter((c): c is number => typeof c === 'number') : [],
  };
}

const KIND_BY_NAME = new Map<string, FunctionKind>([
  ['(garbage collector)', 'gc'],
  ['(program)', 'meta'],
  ['(idle)', 'meta'],
  ['(root)', 'meta'],
]);

function kindOf(frame: CallFrame): FunctionKind {
  const known = KIND_BY_NAME.get(frame.functionName);
  if (known) return known;
  if (frame.url) return 'js';
  if (frame.functionName.startsWith('/') || frame.functionName.startsWith('RegExp:')) return 'regexp';
  return 'builtin';
}

/**
 * Reads a `.cpuprofile` (from `node --cpu-prof`, DevTools, node:inspector or v8-profiler-next) into
 * a Profile. Positions there are 0-based; the model is 1-based like editors.
 */
export function parseCpuProfile(json: string | unknown): Profile {
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (error) {
      throw new HotpathTicksError(
        'HP_TICKS_BAD_CPUPROFILE',
        `not a .cpuprofile: expected JSON with "nodes" (array) and "startTime" (number), got unparsable text (${(error as Error).message})`,
        { cause: error },
      );
    }
  }
  const parsed = profileNodes(value);
  if (!parsed) {
    throw new HotpathTicksError(
      'HP_TICKS_BAD_CPUPROFILE',
      'not a .cpuprofile: expected an object with "nodes" (array) and "startTime" (number)',
    );
  }
  const { profile, nodes } = parsed;
  const warnings: string[] = [];
  const byId = new Map<number, CpuProfileNode>();
  let malformed = 0;
  for (const node of nodes) {
    const clean = cleanNode(node);
    if (clean) byId.set(clean.id, clean);
    else malformed++;
  }
  if (malformed > 0) warnings.push(`${malformed} nodes without a numeric id or a callFrame skipped`);
  const parent = new Map<number, number>();
  for (const node of byId.values()) {
    for (const child of node.children ?? []) {
      if (byId.has(child) && !parent.has(child)) parent.set(child, node.id);
    }
  }

  // Hit counts per node: the samples array is exact; hitCount is the fallback.
  const hits = new Map<number, number>();
  if (Array.isArray(profile.samples) && profile.samples.length > 0) {
    let unknown = 0;
    for (const id of profile.samples as unknown[]) {
      if (typeof id === 'number' && byId.has(id)) hits.set(id, (hits.get(id) ?? 0) + 1);
      else unknown++;
    }
    if (unknown > 0) warnings.push(`${unknown} samples name node ids that are not in "nodes"; skipped`);
  } else {
    for (const node of byId.values()) {
      if (typeof node.hitCount === 'number' && node.hitCount > 0)
        hits.set(node.id, Math.floor(node.hitCount));
    }
  }

  const builder = new ProfileBuilder();
  const functionOf = new Map<number, number>();
  const idOf = (node: CpuProfileNode): number => {
    let id = functionOf.get(node.id);
    if (id === undefined) {
      const frame = node.callFrame;
      const name = frame.functionName || (frame.url ? '(anonymous)' : '(anonymous)');
      id = builder.internFunction({
        name,
        file: frame.url ?? '',
        line: frame.lineNumber >= 0 ? frame.lineNumber + 1 : 0,
        column: frame.columnNumber >= 0 ? frame.columnNumber + 1 : 0,
        kind: kindOf(frame),
      });
      functionOf.set(node.id, id);
    }
    return id;
  };

  const path: number[] = [];
  let cyclic = false;
  let gcTicks = 0;
  for (const [nodeId, count] of hits) {
    path.length = 0;
    let current: number | undefined = nodeId;
    let guard = 0;
    // Every id here is in byId: the sampled ones were checked, and parents are nodes.
    while (current !== undefined && guard++ <= byId.size) {
      const node = byId.get(current);
      if (node === undefined) break;
      // The root ("(root)") is left out, unless it is the sampled node itself: the first one.
      // (Not `current === nodeId`: an id of NaN, which a hand-made profile can have, equals nothing.)
      if (parent.has(current) || path.length === 0) path.push(idOf(node));
      current = parent.get(current);
    }
    if (guard > byId.size + 1) cyclic = true;
    path.reverse();
    if (byId.get(nodeId)?.callFrame.functionName === '(garbage collector)') gcTicks += count;
    builder.addStack(path, path.length, count);
  }
  if (cyclic) warnings.push('the node tree has a cycle; stacks were cut where it repeats');

  const meta: ProfileMeta = { gcTicks };
  if (typeof profile.endTime === 'number')
    meta.durationMicros = Math.max(0, profile.endTime - profile.startTime);
  return builder.build('cpuprofile', warnings, meta);
}
