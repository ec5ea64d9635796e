import { crossProfileKey } from './function-label.js';
import type { FunctionKind, Profile } from './model.js';

export interface FunctionDiff {
  name: string;
  file: string;
  kind: FunctionKind;
  /** 1-based line in head (in base when the function vanished). */
  line: number;
  baseSelf: number;
  headSelf: number;
  /** Self ticks over all ticks, 0..1. */
  baseShare: number;
  headShare: number;
  /** headShare - baseShare. */
  delta: number;
  status: 'new' | 'vanished' | 'changed';
}

export interface ProfileDiff {
  baseTotal: number;
  headTotal: number;
  /** Sorted by |delta|, largest first. */
  functions: FunctionDiff[];
}

export interface DiffOptions {
  /** Leave out functions whose |delta| is below this share (0..1). Default 0: keep all. */
  minDelta?: number;
  /** Keep at most this many functions (after sorting). Default: all. */
  limit?: number;
}

interface Side {
  self: number;
  line: number;
  kind: FunctionKind;
  name: string;
  file: string;
}

function selfByKey(profile: Profile): Map<string, Side> {
  const map = new Map<string, Side>();
  for (const fn of profile.functions) {
    const key = crossProfileKey(fn);
    const side = map.get(key);
    if (side) {
      if (fn.self > side.self) side.line = fn.line;
      side.self += fn.self;
    } else {
      map.set(key, { self: fn.self, line: fn.line, kind: fn.kind, name: fn.name, file: fn.file });
    }
  }
  return map;
}

/**
 * Compares two profiles by each function's share of self time. Functions are matched by name and
 * file, not line, so edits above a function do not break the match.
 */
export function diffProfiles(base: Profile, head: Profile, options: DiffOptions = {}): ProfileDiff {
  const minDelta = options.minDelta ?? 0;
  const baseMap = selfByKey(base);
  const headMap = selfByKey(head);
  const keys = new Set([...baseMap.keys(), ...headMap.keys()]);
  const functions: FunctionDiff[] = [];
  for (const key of keys) {
    const b = baseMap.get(key);
    const h = headMap.get(key);
    const baseSelf = b?.self ?? 0;
    const headSelf = h?.self ?? 0;
    if (baseSelf === 0 && headSelf === 0) continue;
    const baseShare = base.totalTicks > 0 ? baseSelf / base.totalTicks : 0;
    const headShare = head.totalTicks > 0 ? headSelf / head.totalTicks : 0;
    const delta = headShare - baseShare;
    if (Math.abs(delta) < minDelta) continue;
    const ref = h ?? b;
    if (!ref) continue; // (every key is in one of the two maps)
    functions.push({
      name: ref.name,
      file: ref.file,
      kind: ref.kind,
      line: ref.line,
      baseSelf,
      headSelf,
      baseShare,
      headShare,
      delta,
      status: baseSelf === 0 ? 'new' : headSelf === 0 ? 'vanished' : 'changed',
    });
  }
  functions.sort(
    (x, y) =>
      Math.abs(y.delta) - Math.abs(x.delta) ||
      y.headSelf - x.headSelf ||
      (x.name < y.name ? -1 : x.name > y.name ? 1 : 0),
  );
  if (options.limit !== undefined && functions.length > options.limit) functions.length = options.limit;
  return { baseTotal: base.totalTicks, headTotal: head.totalTicks, functions };
}
