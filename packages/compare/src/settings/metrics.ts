// The metric catalogue: every metric a round yields and a verdict can use, declared once with
// everything the rest needs of it: its value in a round (verdict/round-pairs.ts reads it), what the
// statistics need (unit, direction, scale, clock), its label (render/metric-labels.ts) and its
// Action output (run/outputs.ts, action.yml). The `metrics` setting's choices and the MetricName
// type come from it too. A new metric is one entry here (and, when its data is new, its field in
// round-data.ts and its probe).

import type { RoundData } from '../round-data.js';

/** Below this share of calls on a request's path, waiting per request is not measured (onPath). */
export const ON_PATH_MIN = 0.5;

/**
 * How a metric changes: by a ratio (throughput, latency, CPU time), by points (rates, 0..1), or by
 * an amount in its unit — `absolute`: bytes retained per request, where base often retains nothing
 * and a ratio means nothing (its margin is a setting in that unit, retainedThreshold); `count`: a
 * count per request that is often 0 on one side (downstream calls), whose margin is the threshold
 * of base's count, at least the metric's `least`.
 */
export type MetricScale = 'ratio' | 'points' | 'absolute' | 'count';

/**
 * What can swing a metric: `wall` metrics (throughput, latency, event-loop utilisation) move
 * when another process takes the CPU; `cpu` metrics (CPU time per request, the error rate) count
 * work done, which a neighbour barely changes.
 */
export type MetricClock = 'wall' | 'cpu';

/**
 * An Action output a metric gives: its change over the scenarios, the worst one (`highest` for a
 * metric where more is worse, `lowest` where less is), in percent or in the metric's own unit.
 */
export interface MetricOutput {
  name: string;
  worst: 'highest' | 'lowest';
  in: 'percent' | 'unit';
  /** action.yml's description of it. */
  description: string;
}

/** One metric: everything the statistics, the reports and the outputs need of it. */
export interface MetricDeclaration {
  metric: string;
  /** Its name for people (render's tables and sentences). */
  label: string;
  unit: string;
  better: 'higher' | 'lower';
  scale: MetricScale;
  clock: MetricClock;
  /** Its value in one side's round; NaN where that round did not measure it. */
  value: (round: RoundData) => number;
  /** A `count` metric's smallest change that counts, in its unit. */
  least?: number;
  output?: MetricOutput;
}

const perRequest = (total: number, round: RoundData) =>
  round.monitors.length > 0 && round.requests > 0 ? total / round.requests : Number.NaN;
const monitorsSum = (round: RoundData, pick: (m: RoundData['monitors'][number]) => number) =>
  round.monitors.reduce((s, m) => s + pick(m), 0);

export const METRICS = [
  {
    metric: 'requestsPerSecond',
    label: 'Requests/s',
    unit: 'req/s',
    better: 'higher',
    scale: 'ratio',
    clock: 'wall',
    value: (r) => r.load.requests.mean,
    output: {
      name: 'throughput-change',
      worst: 'lowest',
      in: 'percent',
      description:
        "Lowest change of requests per second over the scenarios, head vs base, in percent (e.g. -23.1); empty when a scenario's requests per second could not be told (every round pair spoiled by other load on the machine).",
    },
  },
  {
    metric: 'p50',
    label: 'Latency p50',
    unit: 'ms',
    better: 'lower',
    scale: 'ratio',
    clock: 'wall',
    value: (r) => r.load.latency.p50,
  },
  {
    metric: 'p90',
    label: 'Latency p90',
    unit: 'ms',
    better: 'lower',
    scale: 'ratio',
    clock: 'wall',
    value: (r) => r.load.latency.p90,
  },
  {
    metric: 'p99',
    label: 'Latency p99',
    unit: 'ms',
    better: 'lower',
    scale: 'ratio',
    clock: 'wall',
    value: (r) => r.load.latency.p99,
  },
  {
    metric: 'errorRate',
    label: 'Errors',
    unit: '%',
    better: 'lower',
    scale: 'points',
    clock: 'cpu',
    // Failed requests (socket errors + non-2xx) over all attempts.
    value: ({ load }) => {
      const attempts = load.requests.total + load.errors;
      return attempts > 0 ? (load.errors + load.non2xx) / attempts : 0;
    },
  },
  {
    metric: 'cpuPerRequest',
    label: 'CPU per request',
    unit: 'µs',
    better: 'lower',
    scale: 'ratio',
    clock: 'cpu',
    value: (r) =>
      perRequest(
        monitorsSum(r, (m) => m.cpuMicros),
        r,
      ),
  },
  {
    metric: 'mainThreadCpuPerRequest',
    label: 'Event-loop CPU per request',
    unit: 'µs',
    better: 'lower',
    scale: 'ratio',
    clock: 'cpu',
    // NaN when any process lacks a per-thread time: a partial sum would understate it.
    value: (r) =>
      perRequest(
        monitorsSum(r, (m) => m.mainThreadCpuMicros),
        r,
      ),
  },
  {
    metric: 'eventLoopUtilization',
    label: 'Event-loop utilisation',
    unit: '%',
    better: 'lower',
    scale: 'points',
    clock: 'wall',
    value: (r) =>
      r.monitors.length > 0 ? monitorsSum(r, (m) => m.utilization) / r.monitors.length : Number.NaN,
  },
  // Memory, from the probe's collections at the window's edges (measure/probe-memory.ts): counts of
  // bytes that a neighbour does not change; the time spent collecting is wall-clock time.
  {
    metric: 'retainedBytesPerRequest',
    label: 'Retained per request',
    unit: 'B',
    better: 'lower',
    scale: 'absolute',
    clock: 'cpu',
    value: ({ memory: m }) => (m ? m.retainedHeapPerRequest + m.retainedExternalPerRequest : Number.NaN),
    output: {
      name: 'retained-change',
      worst: 'highest',
      in: 'unit',
      description:
        'Highest change of bytes retained per request over the scenarios, head vs base, in bytes (e.g. 212.4; a leak), the unit of retained-threshold; empty when a scenario has no memory measurement.',
    },
  },
  {
    metric: 'allocatedBytesPerRequest',
    label: 'Allocated per request',
    unit: 'B',
    better: 'lower',
    scale: 'ratio',
    clock: 'cpu',
    value: ({ memory: m }) => m?.allocatedPerRequest ?? Number.NaN,
    output: {
      name: 'allocated-change',
      worst: 'highest',
      in: 'percent',
      description:
        'Highest change of bytes allocated per request over the scenarios, head vs base, in percent (e.g. 30.12); empty when a scenario has no memory measurement.',
    },
  },
  {
    metric: 'gcTimePerRequest',
    label: 'GC time per request',
    unit: 'µs',
    better: 'lower',
    scale: 'ratio',
    clock: 'wall',
    value: ({ memory: m }) => m?.gcPerRequest ?? Number.NaN,
  },
  // Capacity at a scenario's SLO (measure/capacity.ts): the highest arrival rate whose latencies
  // and errors met it, searched in every round. In the verdict of every scenario with an `slo`.
  {
    metric: 'capacity',
    label: 'Capacity at the SLO',
    unit: 'req/s',
    better: 'higher',
    scale: 'ratio',
    clock: 'wall',
    value: (r) => r.capacity?.capacity ?? Number.NaN,
    output: {
      name: 'capacity-change',
      worst: 'lowest',
      in: 'percent',
      description:
        "Lowest change of capacity at the SLO over the scenarios with an slo, head vs base, in percent (e.g. -19.90); empty when no scenario has an slo, or one's capacity could not be told.",
    },
  },
  // Goodput at twice base's capacity (the same rate for both sides): answers that succeeded within
  // the SLO's latency, per second — what load shedding keeps and a server without it loses.
  {
    metric: 'goodput',
    label: "Goodput at 2× base's capacity",
    unit: 'req/s',
    better: 'higher',
    scale: 'ratio',
    clock: 'wall',
    value: (r) => r.capacity?.overload?.goodput ?? Number.NaN,
  },
  // Waiting, from the probe's record of downstream calls (measure/probe-downstream.ts): what each
  // request waited for — its database, cache and other services — merged over the round's processes.
  // A call is one exchange (writes answered by data). Counts barely move with a neighbour; waiting
  // is wall-clock time (the downstream shares the machine). Without a record (waiting: off, an
  // older probe) NaN; waiting is NaN in a window without calls, whose count is then 0.
  {
    metric: 'downstreamCallsPerRequest',
    label: 'Downstream calls per request',
    unit: 'calls',
    better: 'lower',
    scale: 'count',
    clock: 'cpu',
    least: 0.05,
    value: ({ downstream: d }) => d?.calls ?? Number.NaN,
    output: {
      name: 'calls-change',
      worst: 'highest',
      in: 'unit',
      description:
        'Highest change of downstream calls per request (database, cache and service calls) over the scenarios, head vs base, in calls (e.g. 9.00 for an N+1 of 10 items); empty when a scenario has no record of them.',
    },
  },
  {
    metric: 'waitingPerRequest',
    label: 'Waiting per request',
    unit: 'µs',
    better: 'lower',
    scale: 'ratio',
    clock: 'wall',
    // The time at least one of a request's calls was in flight (their union), per request.
    // NaN without the requests' contexts (waiting: calls), whose calls then count for no request,
    // and when under half the calls were made in one (a promise library that loses the context):
    // the few calls it places would read as the requests' whole wait.
    value: ({ downstream: d }) =>
      d && d.calls > 0 && d.callMicros > 0 && d.onPath >= ON_PATH_MIN ? d.waitingMicros : Number.NaN,
    output: {
      name: 'waiting-change',
      worst: 'highest',
      in: 'percent',
      description:
        "Highest change of the time a request waited on its downstream calls over the scenarios, head vs base, in percent (e.g. 212.5); empty when a scenario's requests made no calls.",
    },
  },
  {
    metric: 'waitingPerCall',
    label: 'Waiting per call',
    unit: 'µs',
    better: 'lower',
    scale: 'ratio',
    clock: 'wall',
    value: ({ downstream: d }) => {
      if (!d || d.calls <= 0) return Number.NaN;
      const total = d.endpoints.reduce((sum, e) => sum + e.waitingMicros, 0);
      return total / d.calls;
    },
  },
  {
    metric: 'newConnectionsPerRequest',
    label: 'New connections per request',
    unit: 'conn',
    better: 'lower',
    scale: 'count',
    clock: 'cpu',
    least: 0.05,
    value: ({ downstream: d }) => d?.connections ?? Number.NaN,
  },
] as const satisfies readonly MetricDeclaration[];

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
  'downstreamCallsPerRequest',
  'waitingPerRequest',
];

/** A metric's description by name, for code that holds only the name (a history's key). */
export function metricSpec(metric: string): MetricDeclaration | undefined {
  return METRICS.find((m) => m.metric === metric);
}

/** The metric is a rate (0..1) that changes by points, not by a ratio. */
export const changesInPoints = (metric: string): boolean => metricSpec(metric)?.scale === 'points';

/** The metric changes by a difference (points, or an amount in its unit), not by a ratio. */
export const changesByDifference = (metric: string): boolean => {
  const scale = metricSpec(metric)?.scale;
  return scale === 'points' || scale === 'absolute' || scale === 'count';
};

/** The metric changes by an amount in its own unit (bytes, calls), not by a ratio or points. */
export const changesByAmount = (metric: string): boolean => {
  const scale = metricSpec(metric)?.scale;
  return scale === 'absolute' || scale === 'count';
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
