/** Frame ids must stay below this so an edge key (parent * FRAME_LIMIT + frame) is an exact double. */
export const FRAME_LIMIT = 2 ** 22;

/**
 * Distinct call stacks as a prefix tree (root first), counting samples at the node where a stack
 * ends. Nodes live in typed arrays; edges in one Map keyed by `parent * FRAME_LIMIT + frame`, so a
 * sample costs a few map lookups and no allocation. When `maxNodes` is reached, new stacks are
 * kept by their sampled frame only (counted in `truncated`).
 */
export class StackTrie {
  private readonly edges = new Map<number, number>();
  private parents = new Int32Array(4096);
  private frames = new Int32Array(4096);
  private counts = new Float64Array(4096);
  private used = 1; // node 0 is the root
  truncated = 0;

  constructor(private readonly maxNodes: number) {}

  get nodeCount(): number {
    return this.used;
  }

  /** Adds one sample whose frames are `top[0..length)`, sampled function first, outermost caller last. */
  add(top: Int32Array, length: number): void {
    let node = 0;
    for (let i = length - 1; i >= 0; i--) {
      const frame = top[i];
      if (frame === undefined) continue; // only when length > top.length
      const key = node * FRAME_LIMIT + frame;
      let child = this.edges.get(key);
      if (child === undefined) {
        if (this.used >= this.maxNodes) {
          // Full: the sample keeps its sampled frame only (top[0], there since top[i] is).
          this.truncated++;
          node = this.child(0, top[0] ?? frame);
          break;
        }
        child = this.create(node, frame, key);
      }
      node = child;
    }
    this.counts[node] = (this.counts[node] ?? 0) + 1;
  }

  /** Calls `visit(frames, length, count)` once per distinct stack, frames root first. */
  forEachStack(visit: (frames: Int32Array, length: number, count: number) => void): void {
    const path = new Int32Array(this.maxDepth());
    for (let node = 1; node < this.used; node++) {
      const count = this.counts[node];
      if (!count) continue;
      // From the node up to the root (node 0, also where a walk off the arrays would end), then turned round.
      let depth = 0;
      for (let n = node; n !== 0; n = this.parents[n] ?? 0) {
        const frame = this.frames[n];
        if (frame === undefined) break;
        path[depth++] = frame;
      }
      visit(path.subarray(0, depth).reverse(), depth, count);
    }
  }

  /** Rewrites every frame id through `map` (e.g. pending addresses → resolved functions). */
  remapFrames(map: (frame: number) => number): void {
    const frames = this.frames.subarray(1, this.used);
    frames.forEach((frame, k) => {
      frames[k] = map(frame);
    });
  }

  private maxDepth(): number {
    let max = 1;
    const depth = new Int32Array(this.used);
    for (let node = 1; node < this.used; node++) {
      const d = (depth[this.parents[node] ?? 0] ?? 0) + 1; // parents are created before children
      depth[node] = d;
      if (d > max) max = d;
    }
    return max;
  }

  private child(parent: number, frame: number): number {
    const key = parent * FRAME_LIMIT + frame;
    return this.edges.get(key) ?? this.create(parent, frame, key);
  }

  private create(parent: number, frame: number, key: number): number {
    if (this.used === this.parents.length) this.grow();
    const node = this.used++;
    this.parents[node] = parent;
    this.frames[node] = frame;
    this.edges.set(key, node);
    return node;
  }

  private grow(): void {
    const size = this.parents.length * 2;
    const parents = new Int32Array(size);
    parents.set(this.parents);
    const frames = new Int32Array(size);
    frames.set(this.frames);
    const counts = new Float64Array(size);
    counts.set(this.counts);
    this.parents = parents;
    this.frames = frames;
    this.counts = counts;
  }
}
