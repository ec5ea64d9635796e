import { functionKey, functionLabel } from './function-label.js';
import type { FunctionEntry, FunctionKind, Profile, ProfileMeta, StackSample } from './model.js';

export interface FunctionFields {
  name: string;
  file: string;
  line: number;
  column: number;
  kind: FunctionKind;
}

/**
 * Collects functions and stacks, then produces a consistent Profile: self and total derived from
 * the stacks, functions sorted by self, stack frames remapped to the sorted order.
 */
export class ProfileBuilder {
  private readonly fields: FunctionFields[] = [];
  private readonly ids = new Map<string, number>();
  private readonly tiers: (Set<string> | undefined)[] = [];
  private readonly stacks = new Map<string, StackSample>();

  /** Returns the id of the function with these fields, creating it on first sight. */
  internFunction(fields: FunctionFields): number {
    const key = functionKey(fields);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.fields.length;
      this.fields.push(fields);
      this.tiers.push(undefined);
      this.ids.set(key, id);
    }
    return id;
  }

  /** The fields a function was interned with (undefined for an id this builder did not give). */
  fieldsOf(id: number): FunctionFields | undefined {
    return this.fields[id];
  }

  addTier(id: number, tier: string): void {
    let set = this.tiers[id];
    if (!set) this.tiers[id] = set = new Set();
    set.add(tier);
  }

  /** Adds `count` samples of a stack given root first; identical stacks are merged. */
  addStack(frames: ArrayLike<number>, length: number, count: number): void {
    if (count <= 0 || length <= 0) return;
    const copy: number[] = [];
    for (let i = 0; i < length; i++) {
      const frame = frames[i];
      if (frame === undefined) break; // `length` beyond the frames given
      copy.push(frame);
    }
    const key = copy.join(',');
    const existing = this.stacks.get(key);
    if (existing) existing.count += count;
    else this.stacks.set(key, { frames: copy, count });
  }

  build(source: Profile['source'], warnings: string[], meta?: ProfileMeta): Profile {
    const n = this.fields.length;
    const self = new Float64Array(n);
    const total = new Float64Array(n);
    const stamp = new Int32Array(n).fill(-1);
    let totalTicks = 0;
    let stackNo = 0;
    // Every frame of a stack is an id this builder gave (below n): the counts start at 0.
    for (const stack of this.stacks.values()) {
      const { frames, count } = stack;
      totalTicks += count;
      const top = frames.at(-1);
      if (top !== undefined) self[top] = (self[top] ?? 0) + count;
      for (const id of frames) {
        if (stamp[id] === stackNo) continue; // recursion: count a function once per sample
        stamp[id] = stackNo;
        total[id] = (total[id] ?? 0) + count;
      }
      stackNo++;
    }
    const used: { entry: FunctionEntry; label: string; id: number }[] = [];
    for (const [id, fields] of this.fields.entries()) {
      const entry: FunctionEntry = { ...fields, self: self[id] ?? 0, total: total[id] ?? 0 };
      if (entry.total === 0) continue;
      const tierSet = this.tiers[id];
      if (tierSet && tierSet.size > 0) entry.tiers = [...tierSet].sort();
      used.push({ entry, label: functionLabel(entry), id });
    }
    used.sort(
      (a, b) =>
        b.entry.self - a.entry.self ||
        b.entry.total - a.entry.total ||
        (a.label < b.label ? -1 : a.label > b.label ? 1 : 0),
    );
    const remap = new Int32Array(n).fill(-1);
    const functions = used.map(({ entry, id }, rank) => {
      remap[id] = rank;
      return entry;
    });
    const stacks: StackSample[] = [];
    for (const stack of this.stacks.values()) {
      const frames = stack.frames.map((id) => remap[id] ?? -1);
      stacks.push({ frames, count: stack.count });
    }
    stacks.sort((a, b) => b.count - a.count);
    const profile: Profile = { source, totalTicks, functions, stacks, warnings };
    if (meta) profile.meta = meta;
    return profile;
  }
}
