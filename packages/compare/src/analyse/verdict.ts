import { compareSamples, differenceOfMeans } from './statistics.js';

/** Per-round numbers of one side, in the order the rounds ran. */
export interface RoundMetrics {
  requestsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  /** Failed requests (socket errors + non-2xx) over all requests, 0..1. */
  errorRate: number;
  /** Server CPU time (all processes, all threads) per request in the window, µs; NaN without probe. */
  cpuPerRequest: number;
}

export type MetricName = 'requestsPerSecond' | 'p50' | 'p90' | 'p99' | 'errorRate' | 'cpuPerRequest';

export type MetricStatus = 'regressed' | 'improved' | 'within-threshold' | 'not-significant';

export interface MetricVerdict {
  metric: MetricName;
  label: string;
  unit: string;
  /** Which direction is good. */
  better: 'higher' | 'lower';
  base: number;
  head: number;
  /** Relative change (head - base) / base; for errorRate the absolute change in rate. */
  change: number;
  /** 95 % interval of `change`. */
  ci: [number, number];
  significant: boolean;
  status: MetricStatus;
}

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

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

/**
 * Compares each metric base vs head over the rounds. A metric regresses only when the 95 %
 * interval excludes zero AND the change is worse than `threshold` (a fraction, 0.1 = 10 %).
 * Error rates are compared as absolute differences (a base of 0 % has no relative change):
 * they regress when significant and higher by more than max(threshold × base, 1 point).
 * Metrics some round lacks (CPU per request without a probe) are left out.
 */
export function judgeMetrics(
  base: readonly RoundMetrics[],
  head: readonly RoundMetrics[],
  threshold: number,
): MetricVerdict[] {
  const known = METRICS.filter(({ metric }) =>
    [...base, ...head].every((r) => Number.isFinite(r[metric] as number)),
  );
  return known.map(({ metric, label, unit, better }) => {
    const b = base.map((r) => r[metric]);
    const h = head.map((r) => r[metric]);
    let change: number;
    let ci: [number, number];
    let beyond: boolean;
    let baseValue = mean(b);
    let headValue = mean(h);
    if (metric === 'errorRate') {
      const d = differenceOfMeans(b, h);
      change = d.diff;
      ci = d.ci;
      beyond = Math.abs(d.diff) > Math.max(threshold * d.base, MIN_ERROR_RATE_CHANGE);
    } else {
      const c = compareSamples(b, h);
      // For positive metrics these are geometric means, the centre the interval is built on.
      baseValue = c.base;
      headValue = c.head;
      change = Number.isNaN(c.change) ? 0 : c.change;
      ci = Number.isNaN(c.ci[0]) ? [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY] : c.ci;
      beyond = Math.abs(change) > threshold;
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
    return { metric, label, unit, better, base: baseValue, head: headValue, change, ci, significant, status };
  });
}
