// The metric catalogue: every metric a round yields and a verdict can use, with what the
// statistics need to know of it. The one list: the `metrics` setting's choices, the MetricName
// type, the verdict's judging and the display labels (render/metric-labels.ts) all key on it.

/**
 * How a metric changes: by a ratio (throughput, latency, CPU time), by points (rates, 0..1), or by
 * an amount in its unit (`absolute`: bytes retained per request, where base often retains nothing
 * and a ratio means nothing; its margin is a setting in that unit, retainedThreshold).
 */
export type MetricScale = 'ratio' | 'points' | 'absolute';

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
  // Memory, from the probe's collections at the window's edges (measure/probe-memory.ts): counts of
  // bytes that a neighbour does not change; the time spent collecting is wall-clock time.
  { metric: 'retainedBytesPerRequest', unit: 'B', better: 'lower', scale: 'absolute', clock: 'cpu' },
  { metric: 'allocatedBytesPerRequest', unit: 'B', better: 'lower', scale: 'ratio', clock: 'cpu' },
  { metric: 'gcTimePerRequest', unit: 'µs', better: 'lower', scale: 'ratio', clock: 'wall' },
  // Capacity at a scenario's SLO (measure/capacity.ts): the highest arrival rate whose latencies
  // and errors met it, searched in every round. In the verdict of every scenario with an `slo`.
  { metric: 'capacity', unit: 'req/s', better: 'higher', scale: 'ratio', clock: 'wall' },
  // Goodput at twice base's capacity (the same rate for both sides): answers that succeeded within
  // the SLO's latency, per second — what load shedding keeps and a server without it loses.
  { metric: 'goodput', unit: 'req/s', better: 'higher', scale: 'ratio', clock: 'wall' },
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

/**
 * The metrics in a verdict by default. Of the memory metrics, retained and allocated bytes per
 * request: byte counts that the machine's noise barely moves (an A/A here: allocated ±1.6–2.3 %,
 * retained ±33–79 B detectable at 4 pairs); GC time per request is shown only (±440 % at 4 pairs).
 */
export const DEFAULT_METRICS: readonly MetricName[] = [
  'requestsPerSecond',
  'p50',
  'errorRate',
  'cpuPerRequest',
  'mainThreadCpuPerRequest',
  'retainedBytesPerRequest',
  'allocatedBytesPerRequest',
];

/** A metric's description by name, for code that holds only the name (a history's key). */
export function metricSpec(metric: string): MetricSpec | undefined {
  return METRICS.find((m) => m.metric === metric);
}

/** The metric is a rate (0..1) that changes by points, not by a ratio. */
export const changesInPoints = (metric: string): boolean => metricSpec(metric)?.scale === 'points';

/** The metric changes by a difference (points, or an amount in its unit), not by a ratio. */
export const changesByDifference = (metric: string): boolean => {
  const scale = metricSpec(metric)?.scale;
  return scale === 'points' || scale === 'absolute';
};

/**
 * What a window's retained bytes vary by without a leak: the heap alive after a full collection
 * moves by a few hundred KiB between two collections whatever the requests (bytecode flushed and
 * rebuilt, compiled code, connections closing); seen here up to ±0.6 MiB per window, on plain
 * servers at 1 000 and 20 000 req/s alike. A window of n requests cannot tell less than this over
 * n per request, so the margin of retained bytes per request is at least this over the pairs'
 * (median of the smaller side's) requests: a slower head (fewer requests) is not a leak.
 */
export const RETAINED_WINDOW_NOISE = 1024 * 1024;
