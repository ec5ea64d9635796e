// Each side's allocation profiles merged over its rounds into one Profile (tick-parser's shape:
// V8's sampling heap profile is a tree of call frames like a .cpuprofile) for report.html's
// allocation flame graphs. A stack's count is the bytes it allocated per request, the mean over
// the side's rounds, each round scaled as the allocation table scales it; stacks through
// hotpath's probe are left out. Pure.
import type { FunctionEntry, Profile } from '@hotpath/tick-parser';
import type { AllocationFunction, ScenarioRound } from '../model.js';
import { allocationScale } from '../verdict/allocation-diff.js';
import { isProbeFrame } from '../verdict/hot-functions.js';

/** The side's allocated bytes per request by stack; undefined when no round has a profile. */
export function allocationFlameProfile(rounds: readonly ScenarioRound[]): Profile | undefined {
  const profiled = rounds.flatMap((round) => {
    const scale = allocationScale(round);
    return round.allocations && scale !== undefined ? [{ profile: round.allocations, scale }] : [];
  });
  if (profiled.length === 0) return undefined;
  const functions: FunctionEntry[] = [];
  const index = new Map<string, number>();
  const stacks = new Map<string, { frames: number[]; count: number }>();
  for (const { profile, scale } of profiled) {
    // functions get an id when a stack that is kept reaches them (the probe's are never listed)
    const ids = new Map<number, number>();
    const idOf = (at: number) => {
      let id = ids.get(at);
      if (id !== undefined) return id;
      const f = profile.functions[at] as AllocationFunction;
      const key = `${f.name}\u0000${f.file}\u0000${f.line}\u0000${f.column}`;
      id = index.get(key);
      if (id === undefined) {
        id =
          functions.push({
            name: f.name,
            file: f.file,
            line: f.line,
            column: f.column,
            kind: 'js',
            self: 0,
            total: 0,
          }) - 1;
        index.set(key, id);
      }
      ids.set(at, id);
      return id;
    };
    for (const stack of profile.stacks) {
      if (stack.frames.some((f) => isProbeFrame(profile.functions[f]?.file ?? ''))) continue;
      const frames = stack.frames.map(idOf);
      const key = frames.join(',');
      const count = (stack.bytes * scale) / profiled.length;
      const known = stacks.get(key);
      if (known) known.count += count;
      else stacks.set(key, { frames, count });
    }
  }
  let totalTicks = 0;
  for (const { frames, count } of stacks.values()) {
    totalTicks += count;
    const top = functions[frames[frames.length - 1] as number];
    if (top) top.self += count;
    for (const f of new Set(frames)) (functions[f] as FunctionEntry).total += count;
  }
  // Profile's order: functions by self bytes, largest first.
  const order = functions
    .map((_, i) => i)
    .sort((a, b) => (functions[b]?.self ?? 0) - (functions[a]?.self ?? 0));
  const renumber = new Map(order.map((old, i) => [old, i]));
  return {
    source: 'cpuprofile',
    totalTicks,
    functions: order.map((i) => functions[i] as FunctionEntry),
    stacks: [...stacks.values()].map((s) => ({
      frames: s.frames.map((f) => renumber.get(f) as number),
      count: s.count,
    })),
    warnings: [],
  };
}
