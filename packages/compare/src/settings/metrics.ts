// The metric catalogue: every metric a round yields and a verdict can use, with what the
// statistics need to know of it. The one list: the `metrics` setting's choices, the MetricName
// type, the verdict's judging and the display labels (render/metric-labels.ts) all key on it.

/** How a metric changes: by a ratio (throughput, latency, CPU time) or by points (rates, 0..1). */
export type MetricScale = 'ratio' | 'points';

/**
 * What can swing a metric: `wall` metrics (throughput, latency, event-loop utilisation) move
 * when another process takes the CPU; `cpu` metrics (CPU time per request, the error rate) count
 * work done, which a neighbour barely changes.
 */
export type MetricClock = 'wall' | 'cpu';

export const METRICS = [
  { metric: 'requestsPerSecond', unit: 'req/s', better: 'higher', scale: 'ratio', clock: 'wall' },
  { metric: 'p50', unit: 'ms', better: 'lower', scale: 'ratio', clock: 'wall' },
  { metric: 'p90', unit: 'ms', better: 'lower', scale: 'ratio', clock: 'wall' },
  { metric: 'p99', unit: 'ms', better: 'lower', scale: 'ratio', clock: 'wall' },
  { metric: 'errorRate', unit: '%', better: 'lower', scale: 'points', clock: 'cpu' },
  { metric: 'cpuPerRequest', unit: 'µs', better: 'lower', scale: 'ratio', clock: 'cpu' },
  { metric: 'mainThreadCpuPerRequest', unit: 'µs', better: 'lower', scale: 'ratio', clock: 'cpu' },
  { metric: 'eventLoopUtilization', unit: '%', better: 'lower', scale: 'points', clock: 'wall' },
] as const satisfies readonly {
  metric: string;
  unit: string;
  better: 'higher' | 'lower';
  scale: MetricScale;
  clock: MetricClock;
}[];

/** The metrics a verdict can use (the `metrics` setting). */
export type MetricName = (typeof METRICS)[number]['metric'];

export type MetricSpec = (typeof METRICS)[number];

/** Every metric's name, in the catalogue's order. */
export const METRIC_NAMES: readonly MetricName[] = METRICS.map((m) => m.metric);

/** The metrics in a verdict by default. */
export const DEFAULT_METRICS: readonly MetricName[] = [
  'requestsPerSecond',
  'p50',
  'errorRate',
  'cpuPerRequest',
  'mainThreadCpuPerRequest',
];

/** A metric's description by name, for code that holds only the name (a history's key). */
export function metricSpec(metric: string): MetricSpec | undefined {
  return METRICS.find((m) => m.metric === metric);
}

/** The metric is a rate (0..1) that changes by points, not by a ratio. */
export const changesInPoints = (metric: string): boolean => metricSpec(metric)?.scale === 'points';
