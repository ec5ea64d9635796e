// The hot functions' verdict: each side's profile merged over its rounds, the diff of self-time
// shares, and a paired interval per function so that growth is told from sampling noise. Used by
// report() and by rounds: auto's looks alike (through judgeScenario).
import { crossProfileKey, mergeProfiles } from '@hotpath/tick-parser';
import type { HotFunction, HotFunctionDiff, Profile, ScenarioRound } from '../model.js';
import { functionFlag } from './hot-functions.js';
import { roundMetrics } from './round-pairs.js';
import { mean, pairedDifference } from './statistics.js';

/** A side's profile merged over its rounds (undefined when no round has one). */
export function mergeRounds(profiles: readonly Profile[]): Profile | undefined {
  if (profiles.length === 0) return undefined;
  return profiles.length === 1 ? profiles[0] : mergeProfiles(profiles);
}

/** Self-time share of each function (by tick-parser's cross-profile key) in one round's profile. */
function shares(profile: Profile | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (!profile || profile.totalTicks === 0) return out;
  for (const f of profile.functions) {
    const key = crossProfileKey(f);
    out.set(key, (out.get(key) ?? 0) + f.self / profile.totalTicks);
  }
  return out;
}

/** Samples in which the main thread was not idle (everything but the `(idle)` entry). */
function busySamples(profile: Profile): number {
  const idle = profile.functions.reduce((s, f) => (f.name === '(idle)' ? s + f.self : s), 0);
  return profile.totalTicks - idle;
}

/**
 * Each function's main-thread CPU time per request (µs) in one round: its self samples over the
 * non-idle samples, times the main thread's CPU per request. Empty without a profile or
 * per-thread CPU time.
 */
function costs(round: ScenarioRound): Map<string, number> {
  const out = new Map<string, number>();
  const perRequest = roundMetrics(round).mainThreadCpuPerRequest;
  const profile = round.profile;
  if (!profile || !Number.isFinite(perRequest)) return out;
  const busy = busySamples(profile);
  if (busy <= 0) return out;
  for (const f of profile.functions) {
    if (f.name === '(idle)') continue;
    const key = crossProfileKey(f);
    out.set(key, (out.get(key) ?? 0) + (f.self / busy) * perRequest);
  }
  return out;
}

/**
 * A paired interval of each listed function's per-pair share growth, to tell growth from
 * sampling noise; growth past the threshold stays flagged only when its interval is above zero.
 * Returns a new diff (the input is not changed).
 */
export function withFunctionIntervals(
  diff: HotFunctionDiff,
  pairs: [ScenarioRound, ScenarioRound][],
  alpha: number,
): HotFunctionDiff {
  const perPair = pairs.map(([b, h]) => [shares(b.profile), shares(h.profile)] as const);
  const perPairCost = pairs.map(([b, h]) => [costs(b), costs(h)] as const);
  const withCost = pairs.length > 0 && perPairCost.every(([b, h]) => b.size > 0 && h.size > 0);
  const tested = new Set([...diff.rows, ...diff.flagged].filter((f) => f.reason === 'grew'));
  const perTest = tested.size > 0 ? alpha / tested.size : alpha;
  const judged = new Map<string, HotFunction>();
  const judge = (f: HotFunction) => {
    const key = crossProfileKey(f);
    const known = judged.get(key);
    if (known) return known;
    const cost = withCost
      ? {
          baseCost: mean(perPairCost.map(([b]) => b.get(key) ?? 0)),
          headCost: mean(perPairCost.map(([, h]) => h.get(key) ?? 0)),
          ...(pairs.length >= 2
            ? {
                costCi: pairedDifference(
                  perPairCost.map(([b, h]) => (h.get(key) ?? 0) - (b.get(key) ?? 0)),
                  alpha,
                ).ci,
              }
            : {}),
        }
      : {};
    if (pairs.length < 2) {
      // No interval can test a growth (too few pairs, or the others spoiled by other load): it
      // is not flagged, as no metric is flagged without an interval.
      const shown = { ...f, ...cost, ...(f.reason === 'grew' ? functionFlag(false, f) : {}) };
      judged.set(key, shown);
      return shown;
    }
    const d = pairedDifference(
      perPair.map(([b, h]) => (h.get(key) ?? 0) - (b.get(key) ?? 0)),
      f.reason === 'grew' ? perTest : alpha,
    );
    const next = { ...f, ...cost, ci: d.ci, significant: d.ci[0] > 0 || d.ci[1] < 0 };
    // Growth past the threshold in the merged profiles is flagged only when the per-pair interval
    // is above zero too: otherwise it is sampling noise, and marking it hotter raises a false alarm.
    const judgedFn = f.reason === 'grew' && !(d.ci[0] > 0) ? { ...next, ...functionFlag(false, f) } : next;
    judged.set(key, judgedFn);
    return judgedFn;
  };
  const rows = diff.rows.map(judge);
  return { ...diff, rows, flagged: diff.flagged.map(judge).filter((f) => f.flagged) };
}
