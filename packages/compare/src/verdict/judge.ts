import {
  type InconclusiveReason,
  type MetricName,
  type MetricVerdict,
  OUTCOMES,
  type Outcome,
  type RoundMetrics,
} from '../model.js';
import {
  METRICS,
  type MetricDeclaration,
  type MetricSpec,
  RETAINED_WINDOW_NOISE,
} from '../settings/metrics.js';
import { detectableShift, mean, median, pairedDifference } from './statistics.js';

/** Smallest change in points (error rate, event-loop utilisation) that can count: 1 point. */
export const MIN_POINTS_CHANGE = 0.01;

/** Power at which the detectable change is stated. */
export const POWER = 0.8;

/**
 * A pair whose two rounds saw other processes use this much more CPU (in cores) in one than in
 * the other is spoiled for the wall-clock metrics: a neighbour took the machine for one side.
 */
export const SPOILED_CORES = 0.25;

/** One base round and its neighbouring head round (B H in the interleaved order, same shard). */
export interface RoundPair {
  base: RoundMetrics;
  head: RoundMetrics;
}

export interface VerdictOptions {
  /** Relative change that counts, as a fraction (0.05 = 5 %); also the margin of "unchanged". */
  threshold: number;
  /** The metrics that can make the run regress; the others are shown only. */
  metrics: readonly MetricName[];
  /** Level of each interval (corrected for the number of tests and, in auto rounds, the look). */
  alpha: number;
  /**
   * One-sided level of each metric's worst case, on which `unchanged` is decided (in auto rounds,
   * corrected for the look). Not divided by the tests: a scenario is unchanged only when every
   * verdict metric is, and the chance that a metric truly worse than the threshold shows a worst
   * case within it is at most this — whatever the others show (the intersection–union test).
   */
  equivalenceAlpha: number;
  /** Margin of the `absolute` metrics (bytes retained per request), in their unit. */
  retainedThreshold: number;
}

/** The pair's rounds saw very different load from other processes (see SPOILED_CORES). */
export function spoiled(pair: RoundPair): boolean {
  const b = pair.base.otherLoad;
  const h = pair.head.otherLoad;
  return b !== undefined && h !== undefined && Math.abs(h - b) > SPOILED_CORES;
}

const geometricMean = (xs: readonly number[]) =>
  Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);

/**
 * The outcome of one metric from its change, interval, one-sided bounds and margin, all as "how
 * much worse" (positive = worse): regressed when the interval lies above zero and the change is
 * past the margin; improved, the mirror; otherwise, by the one-sided bounds at the equivalence
 * level — unchanged when both lie within the margin (shown to have moved by at most that much
 * either way: two one-sided tests), not-worse when only the worse one does (shown to be at most
 * that much worse, but it may be better by more: a pull-request gate's question is answered);
 * inconclusive when the worse bound lies beyond the margin (the noise is too large for it).
 * A metric whose change lies beyond its margin is never unchanged: its bounds hold the change.
 */
export function outcomeOf(
  worse: number,
  worseCi: [number, number],
  worstCase: number,
  margin: number,
  bestCase = worstCase,
): Outcome {
  if (worseCi[0] > 0 && worse > margin) return 'regressed';
  if (worseCi[1] < 0 && -worse > margin) return 'improved';
  if (worstCase > margin) return 'inconclusive';
  return bestCase >= -margin ? 'unchanged' : 'not-worse';
}

/**
 * Compares each metric head vs base over the round pairs. Each pair's change is taken within the
 * pair (log-ratio head/base for ratio metrics, difference for rates), so slow drift of the
 * machine and a shard on a faster runner cancel; the interval is Student's paired t at level
 * 1 − alpha, and the detectable change is the shift that interval would find with 80 % power
 * given the pairs' spread. Wall-clock metrics leave out pairs a neighbour spoiled. Metrics some
 * round lacks (CPU without a probe) are left out.
 */
export function judgeMetrics(pairs: readonly RoundPair[], options: VerdictOptions): MetricVerdict[] {
  if (pairs.length === 0) return [];
  const known = METRICS.filter(({ metric }) =>
    pairs.every((p) => Number.isFinite(p.base[metric]) && Number.isFinite(p.head[metric])),
  );
  const clean = pairs.filter((p) => !spoiled(p));
  return known.map((spec) => judgeMetric(spec, spec.clock === 'wall' ? clean : pairs, pairs.length, options));
}

/** One metric over the pairs it may use (`used`; `all` pairs were measured). */
function judgeMetric(
  spec: MetricSpec,
  used: readonly RoundPair[],
  all: number,
  options: VerdictOptions,
): MetricVerdict {
  const { metric, unit, better, scale } = spec;
  const excluded = all - used.length;
  const b = used.map((p) => p.base[metric]);
  const h = used.map((p) => p.head[metric]);
  const ratio = scale === 'ratio' && [...b, ...h].every((v) => v > 0);
  const baseValue = used.length === 0 ? Number.NaN : ratio ? geometricMean(b) : mean(b);
  const headValue = used.length === 0 ? Number.NaN : ratio ? geometricMean(h) : mean(h);
  const verdict = {
    metric,
    unit,
    better,
    base: baseValue,
    head: headValue,
    inVerdict: options.metrics.includes(metric),
    pairs: used.length,
    excluded,
    margin: marginOf(spec, ratio, baseValue, options, used),
  };
  if (used.length < 2) {
    const why: InconclusiveReason = excluded > 0 ? 'spoiled' : 'too-few-pairs';
    return {
      ...verdict,
      change: used.length === 1 ? (headValue - baseValue) / (scale === 'ratio' ? baseValue : 1) : 0,
      ci: null,
      worstCase: null,
      bestCase: null,
      significant: false,
      outcome: 'inconclusive' as const,
      detectable: null,
      reason: why,
    };
  }
  return { ...verdict, ...pairedChange(used, spec, ratio, baseValue, verdict.margin, options) };
}

/**
 * The median over the pairs of the smaller side's requests that retained bytes are over; undefined
 * when a round lacks them.
 */
function pairRequests(used: readonly RoundPair[]): number | undefined {
  const over = (m: RoundPair['base']) => m.retainedOver ?? m.requests ?? Number.NaN;
  const counts = used.map((p) => Math.min(over(p.base), over(p.head)));
  if (counts.length === 0 || !counts.every((n) => n > 0)) return undefined;
  return median(counts);
}

/** The change that counts for a metric, in the unit of its change (see MetricVerdict.margin). */
function marginOf(
  spec: MetricDeclaration,
  ratio: boolean,
  baseValue: number,
  options: VerdictOptions,
  used: readonly RoundPair[],
): number {
  const { scale } = spec;
  if (ratio) return options.threshold;
  if (scale === 'count') return Math.max(options.threshold * Math.abs(baseValue), spec.least ?? 0);
  if (scale === 'absolute') {
    const requests = pairRequests(used);
    return Math.max(options.retainedThreshold, requests ? RETAINED_WINDOW_NOISE / requests : 0);
  }
  if (scale === 'points') return Math.max(options.threshold * baseValue, MIN_POINTS_CHANGE);
  return options.threshold;
}

/** A metric's change over two or more pairs: interval, worst case, detectable change and outcome. */
function pairedChange(
  used: readonly RoundPair[],
  { metric, better, scale }: MetricDeclaration & { metric: MetricName },
  ratio: boolean,
  baseValue: number,
  margin: number,
  options: VerdictOptions,
): Pick<
  MetricVerdict,
  'change' | 'ci' | 'worstCase' | 'bestCase' | 'significant' | 'outcome' | 'detectable' | 'reason'
> {
  const sign = better === 'higher' ? -1 : 1;
  // Per-pair changes (log-ratios, or differences), their interval at alpha, and their bounds
  // at the one-sided equivalence level (a two-sided interval at 2 × that level).
  const differences = ratio
    ? used.map((p) => Math.log(p.head[metric]) - Math.log(p.base[metric]))
    : used.map((p) => p.head[metric] - p.base[metric]);
  const d = pairedDifference(differences, options.alpha);
  const bounds = pairedDifference(differences, Math.min(1, 2 * options.equivalenceAlpha)).ci;
  const shift = detectableShift(d.sd, d.n, options.alpha, POWER);
  const worstOf = (lo: number, hi: number) => (sign > 0 ? hi : lo);
  const bestOf = (lo: number, hi: number) => (sign > 0 ? lo : hi);
  let change: number;
  let ci: [number, number];
  let worstCase: number;
  let bestCase: number;
  let detectable: number;
  if (ratio) {
    change = Math.expm1(d.mean);
    ci = [Math.expm1(d.ci[0]), Math.expm1(d.ci[1])];
    worstCase = Math.expm1(worstOf(...bounds));
    bestCase = Math.expm1(bestOf(...bounds));
    detectable = Math.expm1(shift);
  } else if (scale === 'points' || scale === 'absolute' || scale === 'count') {
    change = d.mean;
    ci = d.ci;
    worstCase = worstOf(...bounds);
    bestCase = bestOf(...bounds);
    detectable = shift;
  } else {
    // Zeros (e.g. a latency below the histogram's resolution): differences relative to base.
    const scaleBy = baseValue === 0 ? Number.NaN : baseValue;
    change = baseValue === 0 ? 0 : d.mean / scaleBy;
    ci = baseValue === 0 ? [0, 0] : [d.ci[0] / scaleBy, d.ci[1] / scaleBy];
    worstCase = baseValue === 0 ? 0 : worstOf(...bounds) / scaleBy;
    bestCase = baseValue === 0 ? 0 : bestOf(...bounds) / scaleBy;
    detectable = baseValue === 0 ? 0 : shift / scaleBy;
  }
  const worse = sign * change;
  const worseCi: [number, number] = sign > 0 ? [ci[0], ci[1]] : [-ci[1], -ci[0]];
  const outcome = outcomeOf(worse, worseCi, sign * worstCase, margin, sign * bestCase);
  const reason: InconclusiveReason | undefined = outcome === 'inconclusive' ? 'noise' : undefined;
  return {
    change,
    ci,
    worstCase,
    bestCase,
    significant: ci[0] > 0 || ci[1] < 0,
    outcome,
    detectable: Number.isFinite(detectable) ? detectable : null,
    ...(reason ? { reason } : {}),
  };
}

/**
 * A scenario's outcome from its verdict metrics (and a hotter function where failOn says so):
 * regressed if any is, else inconclusive if any is, else improved if any is, else not-worse if
 * any is, else unchanged (every verdict metric shown within its margin both ways).
 */
export function scenarioOutcome(metrics: readonly MetricVerdict[], functionsRegressed: boolean): Outcome {
  return combineOutcomes([
    ...metrics.filter((m) => m.inVerdict).map((m) => m.outcome),
    ...(functionsRegressed ? (['regressed'] as const) : []),
  ]);
}

/** regressed if any is, else inconclusive, else improved, else not-worse, else unchanged. */
export function combineOutcomes(outcomes: readonly Outcome[]): Outcome {
  return OUTCOMES.find((o) => outcomes.includes(o)) ?? 'unchanged';
}
