// The event-loop and memory types of the model (model.ts re-exports them): one process's picture
// over a measured window as its probe wrote it, and one side's over its rounds as the report
// shows it, with what the diagnosis found.

/** A side of a comparison (model.ts's Side). */
type Side = 'base' | 'head';

/**
 * One process's memory over a measured window, as its probe wrote it (`<pid>-<window>.monitor.json`):
 * what was alive after a full collection at each edge, and what was allocated and collected between.
 */
export interface MemoryWindow {
  /** Heap used after a full collection at the window's start and end, bytes. */
  heapStart: number;
  heapEnd: number;
  /** Memory outside the JS heap (Buffers, ArrayBuffers, native objects) after the same collections. */
  externalStart: number;
  externalEnd: number;
  /** Of external: ArrayBuffers and Buffers. */
  arrayBuffersStart: number;
  arrayBuffersEnd: number;
  /** Bytes the JS heap allocated during the window (heap growth between collections, summed). */
  allocatedBytes: number;
  /** Time spent in collections during the window, µs, and the longest one. */
  gcMicros: number;
  gcMaxMicros: number;
  gcCount: number;
}

/** One side's memory over all its rounds, from the probes' memory edges (bytes per request summed over rounds and processes). */
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

/** The event-loop and memory picture of one server process over the measured window. */
export interface MonitorSummary {
  pid: number;
  durationMs: number;
  /** CPU time (user + system, all threads) of the process over the window, µs. */
  cpuMicros: number;
  /**
   * CPU time of the process's main thread (the event loop) over the window, µs; NaN when the
   * platform gives no per-thread time.
   */
  mainThreadCpuMicros: number;
  /** Where mainThreadCpuMicros came from: process.threadCpuUsage() or Linux's /proc. */
  mainThreadCpuSource?: 'threadCpuUsage' | 'proc-schedstat' | 'proc-stat';
  /**
   * CPU time of the runtime's own threads over the window, µs: V8's and Node's threads that
   * exist before the server's code runs (optimising compiler, GC helpers) and the CPU profiler's
   * thread (Linux; absent elsewhere and from older probes). Not the server's parallel work.
   */
  runtimeCpuMicros?: number;
  /** Mean event-loop delay (ms), averaged over the per-second readings. */
  delayMean: number;
  /** Worst per-second p99 delay (ms). */
  delayP99: number;
  delayMax: number;
  /** Mean event-loop utilisation, 0..1. */
  utilization: number;
  heapStart: number;
  heapEnd: number;
  heapMax: number;
  rssStart: number;
  rssEnd: number;
  /** The largest resident set size of the per-second readings, bytes. */
  rssMax?: number;
  /** Heap used at each reading (bytes), for the memory-growth chart. */
  heapSeries: number[];
  /** The window's memory edges; absent from a probe without them (or HOTPATH_PROBE_MEMORY=off). */
  memory?: MemoryWindow;
}

/**
 * Event-loop and memory findings of one side over all its rounds: the fields of a
 * MonitorSummary, with heapStart/heapEnd/rssEnd as means over the rounds and heapSeries the
 * concatenated per-second readings of every round.
 */
export type SideHealth = Pick<
  MonitorSummary,
  'delayMean' | 'delayP99' | 'delayMax' | 'utilization' | 'heapStart' | 'heapEnd' | 'rssEnd' | 'heapSeries'
> & {
  /** The largest resident set size any process reached in a reading, bytes (absent from old shards). */
  rssMax?: number;
  /** The memory edges over all rounds (every process had them): where retained bytes are, GC pauses. */
  memory?: SideMemory;
};

export interface Finding {
  kind: 'blocked-loop' | 'busy-loop' | 'memory-growth' | 'capacity-below';
  side: Side;
  /** Only head shows it (a likely effect of the change). */
  newInHead: boolean;
  message: string;
}

export interface Diagnosis {
  base?: SideHealth;
  head?: SideHealth;
  findings: Finding[];
}
