// The one verdict policy: what counts as a change (the threshold, as a fraction), the family of
// tests and its alpha, which findings decide a scenario (failOn), and when a run fails. Sequential
// stopping (rounds: auto), report() and drift all take their rules from here, so a change to the
// alpha, the threshold's unit or the fail rule is made once.
import type { MetricName, MetricVerdict, Outcome, RoundsStop } from '../model.js';
import type { FailDecision } from '../run-artifacts.js';
import { METRIC_NAMES } from '../settings/metrics.js';
import type { Settings } from '../settings/schema.js';
import { settingDefault } from '../settings/table.js';
import { scenarioOutcome } from './judge.js';

/** Chance of a false alarm anywhere in a run: every verdict metric of every scenario together. */
export const FAMILY_ALPHA = 0.05;

/** The settings the policy is made from (a Settings, or a report's echo of it). */
export type PolicySettings = Pick<
  Settings,
  | 'threshold'
  | 'hotThreshold'
  | 'retainedThreshold'
  | 'metrics'
  | 'failOn'
  | 'failOnRegression'
  | 'failOnInconclusive'
> & { scenarios: readonly { name: string; rate?: unknown; slo?: unknown }[] };

export interface VerdictPolicy {
  /** Relative change that counts, as a fraction (0.05 = 5 %); also the margin of "unchanged". */
  threshold: number;
  /** Growth in a function's share that flags it, as a fraction (0.05 = 5 points). */
  hotThreshold: number;
  /** Bytes retained per request that count as a leak (the margin of retainedBytesPerRequest). */
  retainedThreshold: number;
  /** The metrics that can make a scenario regress (the setting); the others are shown only. */
  metrics: readonly MetricName[];
  /** Each scenario's verdict metrics, by name (see scenarioMetrics). */
  scenarioMetrics: Readonly<Record<string, readonly MetricName[]>>;
  /** Metrics a look waits for before it stops on a scenario's outcome, by name (see waitsFor). */
  waitFor: Readonly<Record<string, readonly MetricName[]>>;
  failOn: Settings['failOn'];
  failOnRegression: boolean;
  failOnInconclusive: boolean;
  /** Scenarios in the run. */
  scenarios: number;
  /** Tests in the family: each verdict metric of each scenario, with its own metrics (Bonferroni). */
  tests: number;
  /** The family's alpha. */
  familyAlpha: number;
}

/** The threshold's default (percent), from the settings table: what a history without one is judged at. */
export const DEFAULT_THRESHOLD = Number(settingDefault('threshold'));

/** A threshold in percent (as settings and histories hold it) as the fraction the verdict uses. */
export const thresholdFraction = (percent: number): number => percent / 100;

/** Tests in a family of `metrics` verdict metrics over `scenarios` scenarios (at least one). */
export const familyTests = (metrics: number, scenarios: number): number => Math.max(1, metrics * scenarios);

/**
 * A scenario's verdict metrics. At a fixed rate (the open model) the load generator sets the
 * throughput: requests/s tells nothing of the server (it falls only once the server cannot keep
 * up, and then the latencies have long shown it), so it gives way to the latency tail, p90 and
 * p99 — what a user waits for at the traffic the server really gets. Other metrics stay as set.
 */
export function scenarioMetrics(
  metrics: readonly MetricName[],
  scenario: { rate?: unknown; slo?: unknown },
): readonly MetricName[] {
  const chosen = new Set<MetricName>(metrics);
  if (scenario.rate !== undefined && chosen.delete('requestsPerSecond')) {
    chosen.add('p90');
    chosen.add('p99');
  }
  // The question an SLO asks — how much traffic can one instance take and keep it — is answered
  // by capacity, whatever `metrics` lists.
  if (scenario.slo !== undefined) chosen.add('capacity');
  return METRIC_NAMES.filter((m) => chosen.has(m));
}

/**
 * The metrics of a scenario that rounds: auto waits for before it stops on its outcome. At a
 * fixed rate the question is what a user waits for, and p99 is what an SLO names: a stall that
 * regresses p90 at the third pair needs some more pairs for p99 (a 5 s window at a few hundred
 * requests per second has a few dozen requests in its tail, and base's own p99 varies by a factor
 * of two or three from round to round). So while p99 is still inconclusive the run goes on
 * (within maxTime and maxRounds, which end it whatever p99 says), and its regression names p99
 * when p99 has one; a p99 that moved less than the threshold stays inconclusive and the budget
 * ends the run. Likewise capacity, for a scenario with an `slo`.
 */
export function waitsFor(
  verdictMetrics: readonly MetricName[],
  scenario: { rate?: unknown; slo?: unknown },
): MetricName[] {
  const wait: MetricName[] = [];
  if (scenario.rate !== undefined && verdictMetrics.includes('p99')) wait.push('p99');
  // A scenario that names an SLO asks about capacity: its answer is waited for as p99's is at a
  // rate (requests/s deciding at the third pair left capacity undecided at −17.7 % [−32.9, +0.8]).
  if (scenario.slo !== undefined && verdictMetrics.includes('capacity')) wait.push('capacity');
  return wait;
}

/** The policy of a run from its settings. */
export function verdictPolicy(settings: PolicySettings): VerdictPolicy {
  const byScenario = Object.fromEntries(
    settings.scenarios.map((s) => [s.name, scenarioMetrics(settings.metrics, s)] as const),
  );
  const tested = Object.values(byScenario).reduce((n, m) => n + m.length, 0);
  return {
    threshold: thresholdFraction(settings.threshold),
    hotThreshold: thresholdFraction(settings.hotThreshold),
    retainedThreshold: settings.retainedThreshold,
    metrics: settings.metrics,
    scenarioMetrics: byScenario,
    waitFor: Object.fromEntries(
      settings.scenarios.map((s) => [s.name, waitsFor(byScenario[s.name] ?? [], s)] as const),
    ),
    failOn: settings.failOn,
    failOnRegression: settings.failOnRegression,
    failOnInconclusive: settings.failOnInconclusive,
    scenarios: settings.scenarios.length,
    tests: Math.max(1, tested),
    familyAlpha: FAMILY_ALPHA,
  };
}

/** The verdict metrics of the scenario `name` under the policy (the setting's for an unknown name). */
export const verdictMetricsOf = (policy: Pick<VerdictPolicy, 'metrics' | 'scenarioMetrics'>, name: string) =>
  policy.scenarioMetrics[name] ?? policy.metrics;

/** The levels a look (or a fixed-rounds run, share 1) judges at. */
export interface LookLevels {
  /** Level of each metric's interval: the family's alpha over the tests, times the look's share. */
  alpha: number;
  /**
   * One-sided level of each metric's worst case (the `unchanged` decision): the family's alpha,
   * not divided by the tests (every verdict metric must be within the threshold: an
   * intersection–union test), times the look's share.
   */
  equivalenceAlpha: number;
  /** Level of the hot functions' intervals: the family's alpha over the scenarios. */
  functionAlpha: number;
}

export function lookLevels(policy: VerdictPolicy, share = 1): LookLevels {
  return {
    alpha: (policy.familyAlpha / policy.tests) * share,
    equivalenceAlpha: policy.familyAlpha * share,
    functionAlpha: policy.familyAlpha / Math.max(1, policy.scenarios),
  };
}

/** The share of alpha the deciding look spent (1 with fixed rounds; over shards, the smallest). */
export function decidingShare(stops: readonly (RoundsStop | undefined)[]): number {
  const shares = stops.flatMap((s) => {
    const last = s?.looks.at(-1);
    return last ? [last.alphaShare] : [];
  });
  return shares.length > 0 ? Math.min(...shares) : 1;
}

/** Whether the hot functions' verdict can decide a scenario (failOn functions or both). */
export const functionsDecide = (policy: Pick<VerdictPolicy, 'failOn'>): boolean =>
  policy.failOn !== 'metrics';

/** A scenario's outcome under failOn: its verdict metrics, a significantly hotter function, or both. */
export function decideScenario(
  policy: Pick<VerdictPolicy, 'failOn'>,
  metrics: readonly MetricVerdict[],
  functionRegressed: boolean,
): Outcome {
  return scenarioOutcome(
    policy.failOn === 'functions' ? [] : metrics,
    functionsDecide(policy) && functionRegressed,
  );
}

/** The fail rule of every front door: a regression (or, when asked, an inconclusive run) fails. */
export function failDecision(
  policy: Pick<VerdictPolicy, 'failOnRegression' | 'failOnInconclusive'>,
  outcome: Outcome,
): FailDecision {
  if (outcome === 'regressed' && policy.failOnRegression) return { failed: true, reason: 'regressed' };
  if (outcome === 'inconclusive' && policy.failOnInconclusive)
    return { failed: true, reason: 'inconclusive' };
  return { failed: false };
}

/** The fail rule of a drift run: a confirmed drift beyond the threshold fails like a regression. */
export function driftFailDecision(
  policy: Pick<VerdictPolicy, 'failOnRegression'>,
  confirmed: boolean,
): FailDecision {
  return confirmed && policy.failOnRegression
    ? { failed: true, reason: 'drift-confirmed' }
    : { failed: false };
}
