// The measured data of one round, as one schema: what a load run, a server's probe and a capacity
// search record. The results file's reader (shard/schema.ts) checks untrusted data against these,
// and the model's types come from them (z.infer), so a field is declared once. Also the per-request
// figures every reader of that data shares (the verdict's metrics, the diagnosis's memory block).
import { z } from 'zod';
import { DownstreamWindowSchema } from './downstream-model.js';
import type { DownstreamPerRequest } from './downstream-summary.js';
import { parseSlo } from './settings/slo.js';

// The results of a measuring job come from a job that ran pull-request code: in the report job
// they are untrusted data. Every field is checked, text and arrays are bounded.
export const text = (max = 2000) => z.string().max(max);
export const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
export const finite = z.number().finite();
/** A number that JSON may have written as null (NaN). */
export const maybeNaN = z
  .number()
  .finite()
  .nullable()
  .transform((v) => v ?? Number.NaN);
const record = z.record(text(100), count).refine((r) => Object.keys(r).length <= 200, 'too many keys');

/** What one load run measured (the part of @hotpath/load-client's RunResult the engine uses). */
export const loadSchema = z.object({
  /** Measured seconds. */
  duration: finite,
  requests: z.object({ total: count, mean: finite, perSecond: z.array(finite).max(100_000) }),
  latency: z.object({ mean: maybeNaN, p50: maybeNaN, p90: maybeNaN, p99: maybeNaN, max: maybeNaN }),
  statusCodes: record,
  non2xx: count,
  errors: count,
  errorsByKind: record,
  /** HdrHistogram of latencies (µs), compressed base64, as @hotpath/load-client serialises it. */
  histogram: text(10_000_000).optional(),
});
export type LoadResult = z.infer<typeof loadSchema>;

/**
 * One process's memory over a measured window, as its probe wrote it (`<pid>-<window>.monitor.json`):
 * what was alive after a full collection at each edge, and what was allocated and collected between.
 * Byte counts and collection times, none negative.
 */
export const memorySchema = z.object({
  /** Heap used after a full collection at the window's start and end, bytes. */
  heapStart: finite.nonnegative(),
  heapEnd: finite.nonnegative(),
  /** Memory outside the JS heap (Buffers, ArrayBuffers, native objects) after the same collections. */
  externalStart: finite.nonnegative(),
  externalEnd: finite.nonnegative(),
  /** Of external: ArrayBuffers and Buffers. */
  arrayBuffersStart: finite.nonnegative(),
  arrayBuffersEnd: finite.nonnegative(),
  /** Bytes the JS heap allocated during the window (heap growth between collections, summed). */
  allocatedBytes: finite.nonnegative(),
  /** Time spent in collections during the window, µs, and the longest one. */
  gcMicros: finite.nonnegative(),
  gcMaxMicros: finite.nonnegative(),
  gcCount: count,
});
export type MemoryWindow = z.infer<typeof memorySchema>;

/** The event-loop and memory picture of one server process over the measured window. */
export const monitorSchema = z.object({
  pid: count,
  durationMs: finite,
  /** CPU time (user + system, all threads) of the process over the window, µs. */
  cpuMicros: maybeNaN,
  /**
   * CPU time of the process's main thread (the event loop) over the window, µs; NaN when the
   * platform gives no per-thread time.
   */
  mainThreadCpuMicros: maybeNaN.default(Number.NaN),
  /** Where mainThreadCpuMicros came from: process.threadCpuUsage() or Linux's /proc. */
  mainThreadCpuSource: z.enum(['threadCpuUsage', 'proc-schedstat', 'proc-stat']).optional(),
  /**
   * CPU time of the runtime's own threads over the window, µs: V8's and Node's threads that
   * exist before the server's code runs (optimising compiler, GC helpers) and the CPU profiler's
   * thread (Linux; absent elsewhere and from older probes). Not the server's parallel work.
   */
  runtimeCpuMicros: finite.nonnegative().optional(),
  /** Mean event-loop delay (ms), averaged over the per-second readings. */
  delayMean: finite,
  /** Worst per-second p99 delay (ms). */
  delayP99: finite,
  delayMax: finite,
  /** Mean event-loop utilisation, 0..1. */
  utilization: finite,
  /**
   * Wall time of the loaded intervals the utilisation is read over (ms): the window less the
   * other side's slices; absent from older probes' readings.
   */
  loadedMs: finite.nonnegative().optional(),
  heapStart: finite,
  heapEnd: finite,
  heapMax: finite,
  rssStart: finite,
  rssEnd: finite,
  /** The largest resident set size of the per-second readings, bytes. */
  rssMax: finite.optional(),
  /** Heap used at each reading (bytes), for the memory-growth chart. */
  heapSeries: z.array(finite).max(100_000),
  /** The window's memory edges; absent from a probe without them (or HOTPATH_PROBE_MEMORY=off). */
  memory: memorySchema.optional(),
  /**
   * What the process waited for in the window: its downstream calls by endpoint, per incoming
   * request, and the code that made them; absent from a probe without it (HOTPATH_PROBE_WAITING=off).
   */
  downstream: DownstreamWindowSchema.optional(),
});
export type MonitorSummary = z.infer<typeof monitorSchema>;

/** One step of a capacity search: a short open-model window at `rate` (see measure/capacity.ts). */
export const capacityStepSchema = z.object({
  rate: finite.positive(),
  requestsPerSecond: finite.nonnegative(),
  p50: maybeNaN,
  p90: maybeNaN,
  p99: maybeNaN,
  /** Failed requests over all requests, 0..1. */
  errorRate: finite.min(0).max(1),
  /** The rate was served and the SLO met. */
  met: z.boolean(),
});
export type CapacityStep = z.infer<typeof capacityStepSchema>;

/**
 * One step at twice base's capacity (the same rate for both sides): what a server still serves
 * well when offered more than it can take — where load shedding (503 + Retry-After) shows.
 */
export const overloadStepSchema = z.object({
  rate: finite.positive(),
  /** Successful answers (2xx) within the SLO's latency target, per second. */
  goodput: finite.nonnegative(),
  requestsPerSecond: finite.nonnegative(),
  p99: maybeNaN,
  /** Failed requests (errors and non-2xx: the shed ones among them) over all, 0..1. */
  errorRate: finite.min(0).max(1),
});
export type OverloadStep = z.infer<typeof overloadStepSchema>;

/** The capacity at a scenario's SLO one side showed in one round. */
export const capacitySchema = z.object({
  /** The SLO, as its canonical text (settings/slo.ts). */
  slo: text(200).refine((slo) => parseSlo(slo) !== undefined, 'expected an SLO such as p99<=50ms'),
  /** The highest rate that met it, req/s; null: below the lowest rate tried. */
  capacity: finite.positive().nullable(),
  steps: z.array(capacityStepSchema).max(100),
  /** The step at twice base's capacity after the search. */
  overload: overloadStepSchema.optional(),
});
export type CapacitySearch = z.infer<typeof capacitySchema>;

/** One side's memory per request, from the probes' memory edges (summed over rounds and processes). */
export interface SideMemory {
  /** Retained per request in the JS heap, and outside it (external; of which ArrayBuffers and Buffers). */
  retainedHeapPerRequest: number;
  retainedExternalPerRequest: number;
  retainedArrayBuffersPerRequest: number;
  allocatedPerRequest: number;
  /** Time in collections per request, µs; the longest single collection, µs; collections per 1 000 requests. */
  gcPerRequest: number;
  gcMaxMicros: number;
  gcPerThousandRequests: number;
}

/**
 * The memory edges of every process over `requests` requests, per request (retained bytes over
 * `retainedOver` requests: the window's and its settle load's); undefined if any process lacks
 * them (a partial sum would understate the bytes). The one place these formulas live: the
 * verdict's memory metrics per round and the diagnosis's memory block per side both read it.
 */
export function memoryPerRequest(
  monitors: readonly MonitorSummary[],
  requests: number,
  retainedOver = requests,
): SideMemory | undefined {
  if (monitors.length === 0 || requests <= 0 || !monitors.every((m) => m.memory)) return undefined;
  const edges = monitors.map((m) => m.memory as MemoryWindow);
  const per = (pick: (m: MemoryWindow) => number, over = requests) =>
    edges.reduce((s, m) => s + pick(m), 0) / over;
  return {
    retainedHeapPerRequest: per((m) => m.heapEnd - m.heapStart, retainedOver),
    retainedExternalPerRequest: per((m) => m.externalEnd - m.externalStart, retainedOver),
    retainedArrayBuffersPerRequest: per((m) => m.arrayBuffersEnd - m.arrayBuffersStart, retainedOver),
    allocatedPerRequest: per((m) => m.allocatedBytes),
    gcPerRequest: per((m) => m.gcMicros),
    gcMaxMicros: Math.max(...edges.map((m) => m.gcMaxMicros)),
    gcPerThousandRequests: per((m) => m.gcCount) * 1000,
  };
}

/**
 * What the metric catalogue reads of one side's round (settings/metrics.ts): its load, its
 * processes' pictures, its capacity search, its requests, and the per-request figures derived
 * once (memory: absent without every process's edges).
 */
export interface RoundData {
  load: LoadResult;
  monitors: readonly MonitorSummary[];
  capacity?: CapacitySearch;
  /** Requests served in the window. */
  requests: number;
  /** The window's memory per request (retained over its settle load too). */
  memory?: SideMemory;
  /** The window's downstream calls and waiting per request, its processes merged. */
  downstream?: DownstreamPerRequest;
}
