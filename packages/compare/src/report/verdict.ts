import type { MetricName, MetricStatus, MetricVerdict, RoundMetrics } from '../model.js';
import { pairedDifference } from './statistics.js';

export const METRICS: readonly {
  metric: MetricName;
  label: string;
  unit: string;
  better: 'higher' | 'lower';
}[] = [
  { metric: 'requestsPerSecond', label: 'Requests/s', unit: 'req/s', better: 'higher' },
  { metric: 'p50', label: 'Latency p50', unit: 'ms', better: 'lower' },
  { metric: 'p90', label: 'Latency p90', unit: 'ms', better: 'lower' },
  { metric: 'p99', label: 'Latency p99', unit: 'ms', better: 'lower' },
  { metric: 'errorRate', label: 'Errors', unit: '%', better: 'lower' },
  { metric: 'cpuPerRequest', label: 'CPU per request', unit: 'µs', better: 'lower' },
];

/** Smallest error-rate increase (absolute) that can count as a regression: 1 percentage point. */
export const MIN_ERROR_RATE_CHANGE = 0.01;

/** The metrics that decide the verdict unless the `metrics` setting says otherwise. */
export const DEFAULT_VERDICT_METRICS: readonly MetricName[] = [
  'requestsPerSecond',
  'p50',
  'p99',
  'errorRate',
  'cpuPerRequest',
];

/** One base round and its neighbouring head round (B H in the interleaved order, same shard). */
export interface RoundPair {
  base: RoundMetrics;
  head: RoundMetrics;
}

export interface VerdictOptions {
  /** Relative change that counts as a regression, as a fraction (0.1 = 10 %). */
  threshold: number;
  /** The metrics that can make the run regress; the others are shown only. */
  metrics: readonly MetricName[];
  /** Level of each interval (already corrected for the number of tests), e.g. 0.05 / 10. */
  alpha: number;
}

const geometricMean = (xs: readonly number[]) =>
  Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);
const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

/**
 * Compares each metric head vs base over the round pairs. Each pair's change is taken within the
 * pair (log-ratio head/base for positive metrics, difference for the error rate), so slow drift
 * of the machine and a shard on a faster runner cancel; the interval is Student's paired t at
 * level 1 − alpha. A metric regresses only when its interval excludes zero AND the change is
 * worse than `threshold` (error rate: more than max(threshold × base, 1 point)). Metrics some
 * round lacks (CPU per request without a probe) are left out.
 */
export function judgeMetrics(pairs: readonly RoundPair[], options: VerdictOptions): MetricVerdict[] {
  if (pairs.length === 0) return [];
  const known = METRICS.filter(({ metric }) =>
    pairs.every((p) => Number.isFinite(p.base[metric]) && Number.isFinite(p.head[metric])),
  );
  return known.map(({ metric, label, unit, better }) => {
    const b = pairs.map((p) => p.base[metric]);
    const h = pairs.map((p) => p.head[metric]);
    let change: number;
    let ci: [number, number];
    let beyond: boolean;
    let baseValue = mean(b);
    let headValue = mean(h);
    if (metric === 'errorRate') {
      const d = pairedDifference(
        pairs.map((p) => p.head.errorRate - p.base.errorRate),
        options.alpha,
      );
      change = d.mean;
      ci = d.ci;
      beyond = Math.abs(d.mean) > Math.max(options.threshold * baseValue, MIN_ERROR_RATE_CHANGE);
    } else if ([...b, ...h].every((v) => v > 0)) {
      const d = pairedDifference(
        pairs.map((p) => Math.log(p.head[metric]) - Math.log(p.base[metric])),
        options.alpha,
      );
      baseValue = geometricMean(b);
      headValue = geometricMean(h);
      change = Math.expm1(d.mean);
      ci = [Math.expm1(d.ci[0]), Math.expm1(d.ci[1])];
      beyond = Math.abs(change) > options.threshold;
    } else {
      // Zeros (e.g. a latency below the histogram's resolution): differences relative to base.
      const d = pairedDifference(
        pairs.map((p) => p.head[metric] - p.base[metric]),
        options.alpha,
      );
      change = baseValue === 0 ? 0 : d.mean / baseValue;
      ci =
        baseValue === 0
          ? [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]
          : [d.ci[0] / baseValue, d.ci[1] / baseValue];
      beyond = Math.abs(change) > options.threshold;
    }
    const significant = ci[0] > 0 || ci[1] < 0;
    const worse = better === 'higher' ? change < 0 : change > 0;
    const status: MetricStatus = !significant
      ? 'not-significant'
      : !beyond
        ? 'within-threshold'
        : worse
          ? 'regressed'
          : 'improved';
    return {
      metric,
      label,
      unit,
      better,
      base: baseValue,
      head: headValue,
      change,
      ci,
      significant,
      status,
      inVerdict: options.metrics.includes(metric),
      pairs: pairs.length,
    };
  });
}
