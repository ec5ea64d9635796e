import {
  buildTopDownTree,
  type CallTreeNode,
  crossProfileKey,
  functionLabel,
  type Profile,
} from '@hotpath/tick-parser';

/**
 * A flame graph's tree as report.html carries it, in d3-flame-graph's compact field names:
 * `n` indexes the names table, `v` is the samples through the frame, `c` its callees and, in
 * the differential tree, `d` how many more samples the frame had on top of the stack in head
 * than in base (base scaled to head's sample count; absent when equal).
 */
export interface FlameNode {
  n: number;
  v: number;
  c?: FlameNode[];
  d?: number;
}

/** The three trees of one scenario and the names they index. */
export interface FlameData {
  names: string[];
  base?: FlameNode;
  head?: FlameNode;
  diff?: FlameNode;
  /** Frames narrower than this share of their graph's samples are folded into their caller. */
  minShare: number;
  /** Frames folded away over the trees. */
  folded: number;
  /** `(idle)` samples left out of each side's graphs (they are no cost; see the report's shares). */
  idle: { base: number; head: number };
  /**
   * What `v` and `d` count: CPU samples, bytes allocated per request (the allocation graphs) or
   * µs waited on downstream calls per request (the waiting graphs); per request, the differential
   * is not scaled: `d` is the change per request.
   */
  unit: 'samples' | 'bytes' | 'micros';
}

/** Default fold: a frame under 1/2000 of the samples is under a pixel at any page width. */
export const MIN_FRAME_SHARE = 0.0005;

class NameTable {
  readonly names: string[] = [];
  private readonly index = new Map<string, number>();
  id(name: string): number {
    let i = this.index.get(name);
    if (i === undefined) {
      i = this.names.length;
      this.names.push(name);
      this.index.set(name, i);
    }
    return i;
  }
}

/** Self samples of each stack node, keyed by the path of cross-profile function keys. */
function selfByPath(profile: Profile): Map<string, number> {
  const keys = profile.functions.map(crossProfileKey);
  const map = new Map<string, number>();
  for (const { frames, count } of profile.stacks) {
    let path = '';
    for (const fn of frames) path += `${keys[fn] ?? ''}\u0001`;
    map.set(path, (map.get(path) ?? 0) + count);
  }
  return map;
}

interface TreeOptions {
  names: NameTable;
  minSamples: number;
  counter: { folded: number };
  /** Differential: base self per path and the factor that scales base samples to head's. */
  base?: { self: Map<string, number>; scale: number };
}

const isIdle = (profile: Profile, fn: number) => {
  const entry = profile.functions[fn];
  return entry?.kind === 'meta' && entry.name === '(idle)';
};

/** Samples whose stack is only `(idle)`. */
function idleSamples(profile: Profile): number {
  let idle = 0;
  for (const { frames, count } of profile.stacks) {
    const [only] = frames;
    if (frames.length === 1 && only !== undefined && isIdle(profile, only)) idle += count;
  }
  return idle;
}

function tree(profile: Profile, options: TreeOptions): FlameNode {
  const labels = profile.functions.map((fn) => options.names.id(functionLabel(fn)));
  const keys = options.base ? profile.functions.map(crossProfileKey) : [];
  const visit = (node: CallTreeNode, path: string): FlameNode => {
    const out: FlameNode = {
      n: node.fn < 0 ? options.names.id('all') : (labels[node.fn] ?? 0),
      v: node.total,
    };
    if (node.fn < 0) out.v -= idleSamples(profile);
    // samples are whole; bytes per request to a tenth (the page's JSON stays small)
    out.v = Math.round(out.v * 10) / 10;
    if (options.base && node.fn >= 0) {
      const before = (options.base.self.get(path) ?? 0) * options.base.scale;
      const delta = Math.round((node.self - before) * 10) / 10;
      if (delta !== 0) out.d = delta;
    }
    const children: FlameNode[] = [];
    for (const child of [...node.children.values()].sort((a, b) => b.total - a.total || a.fn - b.fn)) {
      if (node.fn < 0 && isIdle(profile, child.fn) && child.children.size === 0) continue;
      if (child.total < options.minSamples) {
        options.counter.folded++;
        continue;
      }
      children.push(visit(child, options.base ? `${path}${keys[child.fn] ?? ''}\u0001` : ''));
    }
    if (children.length) out.c = children;
    return out;
  };
  return visit(buildTopDownTree(profile), '');
}

/**
 * The flame-graph trees of a scenario: base, head and the differential (head's shape, each
 * frame's `d` its self change against base: CPU samples with base scaled to head's count, bytes
 * per request as they are). Pure; names stay data (the page shows them as text only).
 */
export function flameData(
  profiles: { base?: Profile; head?: Profile },
  minShare = MIN_FRAME_SHARE,
  unit: FlameData['unit'] = 'samples',
): FlameData {
  const names = new NameTable();
  names.id('all');
  const counter = { folded: 0 };
  const data: FlameData = {
    names: names.names,
    minShare,
    folded: 0,
    unit,
    idle: {
      base: profiles.base ? idleSamples(profiles.base) : 0,
      head: profiles.head ? idleSamples(profiles.head) : 0,
    },
  };
  const min = (p: Profile) => Math.max(1, p.totalTicks * minShare);
  const { base, head } = profiles;
  if (base && base.totalTicks > 0) data.base = tree(base, { names, minSamples: min(base), counter });
  if (head && head.totalTicks > 0) data.head = tree(head, { names, minSamples: min(head), counter });
  if (base && head && base.totalTicks > 0 && head.totalTicks > 0)
    data.diff = tree(head, {
      names,
      minSamples: min(head),
      counter: { folded: 0 },
      base: { self: selfByPath(base), scale: unit === 'samples' ? head.totalTicks / base.totalTicks : 1 },
    });
  data.folded = counter.folded;
  return data;
}
