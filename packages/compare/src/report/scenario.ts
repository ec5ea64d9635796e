import { crossProfileKey, mergeProfiles } from '@hotpath/tick-parser';
import type {
  HotFunction,
  HotFunctionDiff,
  Measurements,
  Profile,
  RoundMetrics,
  RoundRow,
  ScenarioReport,
  ScenarioRound,
  Side,
} from '../model.js';
import type { Scenario, Settings } from '../settings/schema.js';
import { diagnose } from './diagnosis.js';
import { diffHotFunctions, flagOf } from './hot-functions.js';
import { pairedDifference } from './statistics.js';
import { judgeMetrics, type RoundPair } from './verdict.js';

/** A side's profile merged over its rounds (undefined when no round has one). */
export function mergeRounds(profiles: readonly Profile[]): Profile | undefined {
  if (profiles.length === 0) return undefined;
  return profiles.length === 1 ? profiles[0] : mergeProfiles(profiles);
}

/** One round's verdict metrics from its load result and its processes' CPU time. */
export function roundMetrics(round: ScenarioRound): RoundMetrics {
  const { load } = round;
  const failed = load.errors + load.non2xx;
  const attempts = load.requests.total + load.errors;
  const cpu = round.monitors.reduce((sum, m) => sum + m.cpuMicros, 0);
  return {
    requestsPerSecond: load.requests.mean,
    p50: load.latency.p50,
    p90: load.latency.p90,
    p99: load.latency.p99,
    errorRate: attempts > 0 ? failed / attempts : 0,
    cpuPerRequest:
      round.monitors.length > 0 && load.requests.total > 0 ? cpu / load.requests.total : Number.NaN,
  };
}

/**
 * Base round k of a shard with head round k of the same shard: in the interleaved order B H B H
 * they ran next to each other, so what the machine did in between (drift, a faster runner for a
 * whole shard) cancels in the pair's ratio.
 */
export function roundPairs<T extends { shard?: number }>(base: readonly T[], head: readonly T[]): [T, T][] {
  const byShard = (list: readonly T[]) => {
    const map = new Map<number, T[]>();
    for (const r of list) {
      const key = r.shard ?? 0;
      const rounds = map.get(key);
      if (rounds) rounds.push(r);
      else map.set(key, [r]);
    }
    return map;
  };
  const heads = byShard(head);
  const pairs: [T, T][] = [];
  for (const [shard, bases] of byShard(base)) {
    const others = heads.get(shard) ?? [];
    bases.forEach((b, i) => {
      const h = others[i];
      if (h) pairs.push([b, h]);
    });
  }
  return pairs;
}

/** A scenario's rounds (with their shard), in the order they ran. */
function scenarioRounds(
  measurements: Measurements,
  name: string,
): Record<Side, (ScenarioRound & { shard: number; round: number })[]> {
  const pick = (side: Side) =>
    measurements[side].map((r) => {
      const found = r.scenarios.find((s) => s.scenario === name);
      if (!found)
        throw new Error(`round ${side} ${r.round} has no result for scenario ${JSON.stringify(name)}`);
      return { ...found, shard: r.shard ?? 1, round: r.round };
    });
  return { base: pick('base'), head: pick('head') };
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

/**
 * A paired interval of each listed function's per-pair share growth, to tell growth from
 * sampling noise; growth past the threshold stays flagged only when its interval is above zero.
 * Returns a new diff (the input is not changed).
 */
function withFunctionIntervals(
  diff: HotFunctionDiff,
  pairs: [ScenarioRound, ScenarioRound][],
  alpha: number,
): HotFunctionDiff {
  if (pairs.length < 2) return diff;
  const perPair = pairs.map(([b, h]) => [shares(b.profile), shares(h.profile)] as const);
  const tested = new Set([...diff.rows, ...diff.flagged].filter((f) => f.reason === 'grew'));
  const perTest = tested.size > 0 ? alpha / tested.size : alpha;
  const judged = new Map<string, HotFunction>();
  const judge = (f: HotFunction) => {
    const key = crossProfileKey(f);
    const known = judged.get(key);
    if (known) return known;
    const d = pairedDifference(
      perPair.map(([b, h]) => (h.get(key) ?? 0) - (b.get(key) ?? 0)),
      f.reason === 'grew' ? perTest : alpha,
    );
    const next = { ...f, ci: d.ci, significant: d.ci[0] > 0 || d.ci[1] < 0 };
    // Growth past the threshold in the merged profiles is flagged only when the per-pair interval
    // is above zero too: otherwise it is sampling noise, and marking it hotter raises a false alarm.
    const judgedFn = f.reason === 'grew' && !(d.ci[0] > 0) ? { ...next, ...flagOf(false, f) } : next;
    judged.set(key, judgedFn);
    return judgedFn;
  };
  const rows = diff.rows.map(judge);
  return { ...diff, rows, flagged: diff.flagged.map(judge).filter((f) => f.flagged) };
}

function describeTarget(scenario: Scenario): string {
  if (scenario.requests?.length) {
    const first = scenario.requests.map((r) => `${r.method ?? scenario.method} ${r.path ?? scenario.url}`);
    return first.length > 3
      ? `${first.slice(0, 3).join(', ')} … (${first.length} requests in turn)`
      : first.join(', ');
  }
  return `${scenario.method} ${scenario.url}`;
}

/** Metrics with intervals, hot functions, diagnosis and the verdict of one scenario. */
export function analyseScenario(
  measurements: Measurements,
  scenario: Scenario,
  settings: Settings,
  alpha: number,
): ScenarioReport {
  const rounds = scenarioRounds(measurements, scenario.name);
  const pairs = roundPairs(rounds.base, rounds.head);
  const metrics = judgeMetrics(
    pairs.map(([b, h]): RoundPair => ({ base: roundMetrics(b), head: roundMetrics(h) })),
    { threshold: settings.threshold / 100, metrics: settings.metrics, alpha },
  );
  const profileOf = (list: ScenarioRound[]) =>
    mergeRounds(list.flatMap((r) => (r.profile ? [r.profile] : [])));
  const profiles = { base: profileOf(rounds.base), head: profileOf(rounds.head) };
  const hotFunctions =
    profiles.base && profiles.head
      ? withFunctionIntervals(
          diffHotFunctions(profiles.base, profiles.head, settings.hotThreshold / 100),
          pairs,
          0.05 / settings.scenarios.length,
        )
      : undefined;
  const metricRegressed = metrics.some((m) => m.inVerdict && m.status === 'regressed');
  const functionRegressed = (hotFunctions?.flagged ?? []).some(
    (f) => f.reason === 'grew' && f.significant === true,
  );
  const regressed =
    settings.failOn === 'metrics'
      ? metricRegressed
      : settings.failOn === 'functions'
        ? functionRegressed
        : metricRegressed || functionRegressed;
  const diagnosis = diagnose(
    rounds.base.flatMap((r) => r.monitors),
    rounds.head.flatMap((r) => r.monitors),
  );
  const throughput = metrics.find((m) => m.metric === 'requestsPerSecond');
  // The rows in the order the rounds ran: one pass, each side's next round in turn (linear).
  const next: Record<Side, number> = { base: 0, head: 0 };
  const rows: RoundRow[] = [];
  for (const side of measurements.order) {
    const r = rounds[side][next[side]++];
    if (!r) continue;
    rows.push({
      side,
      round: r.round,
      shard: r.shard,
      ...roundMetrics(r),
      requests: r.load.requests.total,
      errors: r.load.errors,
      non2xx: r.load.non2xx,
      profilers: r.profilers,
    });
  }
  return {
    name: scenario.name,
    target: describeTarget(scenario),
    regressed,
    improved: !regressed && metrics.some((m) => m.inVerdict && m.status === 'improved'),
    pairs: pairs.length,
    metrics,
    throughputChange: throughput?.change ?? 0,
    hotFunctions,
    functionsRegressed: settings.failOn !== 'metrics' && functionRegressed,
    diagnosis,
    rounds: rows,
    profiles,
  };
}
