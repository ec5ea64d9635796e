import { diffProfiles, type FunctionDiff, type Profile } from '@hotpath/tick-parser';
import type { HotFunction, HotFunctionDiff } from '../model.js';

const MIN_NEW_SHARE = 0.01;
const TOP = 10;

/**
 * Whether a function is flagged, and why: it grew (past the threshold; analyse also asks for an
 * interval above zero), or it is absent from base and among head's 10 hottest with at least 1 %
 * of its samples.
 */
export function functionFlag(
  grew: boolean,
  f: Pick<HotFunction, 'status' | 'headRank' | 'headShare'>,
): Pick<HotFunction, 'flagged' | 'reason'> {
  const isNew = f.status === 'new' && f.headRank > 0 && f.headRank <= TOP && f.headShare >= MIN_NEW_SHARE;
  return { flagged: grew || isNew, reason: grew ? 'grew' : isNew ? 'new-in-top-10' : undefined };
}

/**
 * Measurement overhead, not the user's code: hotpath's own probe (marked `hotpath:probe` when
 * measured; `…/dist/probe.cjs` in older shards) and node:inspector, through which the probe
 * takes the profile.
 */
export function isProbeFrame(file: string): boolean {
  return (
    file === 'hotpath:probe' ||
    /(^|\/)dist\/probe\.cjs$/.test(file) ||
    file === 'node:inspector' ||
    file.startsWith('node:inspector/') ||
    file.startsWith('node:internal/inspector')
  );
}

/**
 * The JS function that most often called the function at `index` when it was on top of the
 * stack (native bindings such as `run` have no file; their caller, e.g. `pbkdf2Sync`, says
 * what they are).
 */
export function dominantCaller(
  profile: Profile,
  index: number,
): { name: string; file: string; line: number } | undefined {
  const counts = new Map<number, number>();
  for (const stack of profile.stacks ?? []) {
    const frames = stack.frames;
    if (frames[frames.length - 1] !== index) continue;
    for (let i = frames.length - 2; i >= 0; i--) {
      const frame = frames[i];
      if (frame === undefined) continue;
      const fn = profile.functions[frame];
      if (fn?.file) {
        counts.set(frame, (counts.get(frame) ?? 0) + stack.count);
        break;
      }
    }
  }
  let best = -1;
  let bestCount = 0;
  for (const [i, n] of counts) {
    if (n > bestCount) {
      best = i;
      bestCount = n;
    }
  }
  const fn = profile.functions[best];
  if (!fn) return undefined;
  return { name: fn.name, file: fn.file, line: fn.line };
}

/**
 * Which functions got hotter, base → head. A function is flagged when its self-time share grew
 * by at least `hotThreshold` (a fraction: 0.05 = 5 points) or when it is new in head's top 10
 * (with at least 1 % of head's samples, so sampling noise alone does not flag it).
 * Pure; shares come from @hotpath/tick-parser's diffProfiles (keyed by name + file).
 */
export function diffHotFunctions(base: Profile, head: Profile, hotThreshold: number): HotFunctionDiff {
  const diff = diffProfiles(base, head);
  const ranked = head.functions.filter((f) => f.kind !== 'meta' && !isProbeFrame(f.file));
  const rank = new Map<string, number>();
  ranked.forEach((f, i) => {
    const key = `${f.name}\u0000${f.file}`;
    if (!rank.has(key)) rank.set(key, i + 1);
  });
  const indexIn = (profile: Profile, f: FunctionDiff) =>
    profile.functions.findIndex((g) => g.name === f.name && g.file === f.file && g.kind === f.kind);
  const all: HotFunction[] = diff.functions
    .filter((f: FunctionDiff) => f.kind !== 'meta' && !isProbeFrame(f.file))
    .flatMap((f: FunctionDiff) => {
      const headRank = rank.get(`${f.name}\u0000${f.file}`) ?? 0;
      let caller: HotFunction['caller'];
      if (!f.file) {
        const side = f.headSelf >= f.baseSelf ? head : base;
        const index = indexIn(side, f);
        if (index >= 0) caller = dominantCaller(side, index);
        // A native frame the probe or the inspector called (`dispatch` from `post`) is overhead too.
        if (caller && isProbeFrame(caller.file)) return [];
      }
      const grew = f.delta >= hotThreshold - 1e-12 && hotThreshold > 0;
      const row: HotFunction = {
        name: f.name,
        file: f.file,
        kind: f.kind,
        line: f.line,
        baseShare: f.baseShare,
        headShare: f.headShare,
        delta: f.delta,
        status: f.status,
        headRank,
        caller,
        ...functionFlag(grew, { status: f.status, headRank, headShare: f.headShare }),
      };
      return [row];
    });
  return {
    rows: all.slice(0, TOP),
    flagged: all.filter((f) => f.flagged),
    baseTotal: diff.baseTotal,
    headTotal: diff.headTotal,
  };
}
