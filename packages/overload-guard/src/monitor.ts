import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { invalidOption } from './errors.js';
import { UtilizationWindow } from './utilization-window.js';

/** Event-loop delay statistics in milliseconds (0 when no delay was recorded yet). */
export interface EventLoopDelayStats {
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  stddev: number;
  /** Number of delay samples behind these statistics. */
  count: number;
}

/** One reading of the process's health, over the window since the previous reading. */
export interface MonitorSnapshot {
  /** Event-loop delay over the window since the previous snapshot, in milliseconds. */
  eventLoopDelay: EventLoopDelayStats;
  /** Event-loop utilisation since the previous snapshot, 0..1. */
  eventLoopUtilization: number;
  /** Event-loop utilisation over the last `utilizationWindow` ms (sliding, not since start), 0..1. */
  eventLoopUtilizationWindow: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  rssBytes: number;
  externalBytes: number;
  arrayBuffersBytes: number;
  /** Handles keeping the loop alive (sockets, servers, timers...). */
  activeHandles: number;
  /** Pending libuv requests (file system, DNS, writes...). */
  activeRequests: number;
  /** Wall clock (ms since epoch) when the snapshot was taken. */
  timestamp: number;
  /** Length of the window this snapshot covers, in ms. */
  windowMs: number;
}

/** One entry of the per-interval series, taken every `sampleInterval` ms. */
export interface MonitorSample {
  /** Wall clock (ms since epoch) at the end of the interval. */
  timestamp: number;
  eventLoopDelayMean: number;
  eventLoopDelayP99: number;
  eventLoopDelayMax: number;
  /** Utilisation during this interval, 0..1. */
  eventLoopUtilization: number;
  heapUsedBytes: number;
  rssBytes: number;
}

export interface MonitorOptions {
  /** Resolution of the event-loop delay histogram, in ms (default 10). */
  resolution?: number;
  /** Period of the per-interval series, in ms (default 1000; 0 disables the series and its timer). */
  sampleInterval?: number;
  /** Number of series entries kept, oldest dropped first (default 60). */
  seriesLength?: number;
  /** Width of the sliding utilisation window, in ms (default 10000). */
  utilizationWindow?: number;
}

export interface Monitor {
  /** Reads the window since the previous call (or since start) and opens a new one. */
  snapshot(): MonitorSnapshot;
  /** The per-interval samples kept so far, oldest first (a copy). */
  series(): MonitorSample[];
  /** Stops the histograms and the timer; idempotent. */
  close(): void;
}

const NS_PER_MS = 1e6;

/** One option: its value, or its default when unset; a set value `accepts` refuses throws. */
function option(
  options: Record<string, unknown>,
  name: keyof MonitorOptions,
  fallback: number,
  accepts: (value: number) => boolean,
  expected: string,
): number {
  const value = options[name];
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isFinite(value) && accepts(value)) return value;
  throw invalidOption('createMonitor', name, value, expected);
}

/**
 * The options with their defaults, checked by hand, not with the schema library the guard's
 * options use: the monitor is also what hotpath's probe loads into every server it measures, and
 * the library was nine tenths of the probe's bytes and most of its load time.
 */
function monitorConfig(input: unknown): Required<MonitorOptions> {
  const options = input ?? {};
  if (typeof options !== 'object' || Array.isArray(options))
    throw invalidOption('createMonitor', 'options', options, 'an object of options');
  const given = options as Record<string, unknown>;
  return {
    resolution: option(given, 'resolution', 10, (v) => v >= 1, 'a number of milliseconds >= 1'),
    sampleInterval: option(
      given,
      'sampleInterval',
      1000,
      (v) => v === 0 || v >= 10,
      '0 or a number of milliseconds >= 10',
    ),
    seriesLength: option(
      given,
      'seriesLength',
      60,
      (v) => Number.isInteger(v) && v >= 1 && v <= 100_000,
      'an integer from 1 to 100000',
    ),
    utilizationWindow: option(
      given,
      'utilizationWindow',
      10_000,
      (v) => v >= 10,
      'a number of milliseconds >= 10',
    ),
  };
}

function delayStats(histogram: IntervalHistogram): EventLoopDelayStats {
  const count = histogram.count;
  if (count === 0) return { min: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: 0, stddev: 0, count: 0 };
  return {
    min: histogram.min / NS_PER_MS,
    mean: histogram.mean / NS_PER_MS,
    p50: histogram.percentile(50) / NS_PER_MS,
    p90: histogram.percentile(90) / NS_PER_MS,
    p99: histogram.percentile(99) / NS_PER_MS,
    max: histogram.max / NS_PER_MS,
    stddev: histogram.stddev / NS_PER_MS,
    count,
  };
}

type ProcessInternals = { _getActiveHandles?: () => unknown[]; _getActiveRequests?: () => unknown[] };

function activeCounts(): { activeHandles: number; activeRequests: number } {
  const internals = process as unknown as ProcessInternals;
  if (
    typeof internals._getActiveHandles === 'function' &&
    typeof internals._getActiveRequests === 'function'
  ) {
    return {
      activeHandles: internals._getActiveHandles().length,
      activeRequests: internals._getActiveRequests().length,
    };
  }
  return { activeHandles: process.getActiveResourcesInfo().length, activeRequests: 0 };
}

/**
 * Starts watching the event loop and memory. Never keeps the process alive (the timer is
 * unref'd); costs two libuv timers at `resolution` ms plus one sample per `sampleInterval`.
 */
export function createMonitor(options: MonitorOptions = {}): Monitor {
  const config = monitorConfig(options);
  const sinceSnapshot = monitorEventLoopDelay({ resolution: config.resolution });
  sinceSnapshot.enable();
  let lastElu = performance.eventLoopUtilization();
  let lastSnapshotAt = performance.now();
  const window = new UtilizationWindow(
    config.utilizationWindow,
    config.sampleInterval || config.utilizationWindow,
  );

  const samples: MonitorSample[] = [];
  let perInterval: IntervalHistogram | undefined;
  let timer: NodeJS.Timeout | undefined;
  let intervalElu = lastElu;
  if (config.sampleInterval > 0) {
    const histogram = monitorEventLoopDelay({ resolution: config.resolution });
    histogram.enable();
    perInterval = histogram;
    timer = setInterval(() => {
      const now = performance.now();
      window.record(now);
      const elu = performance.eventLoopUtilization();
      const memory = process.memoryUsage();
      samples.push({
        timestamp: Date.now(),
        eventLoopDelayMean: histogram.count ? histogram.mean / NS_PER_MS : 0,
        eventLoopDelayP99: histogram.count ? histogram.percentile(99) / NS_PER_MS : 0,
        eventLoopDelayMax: histogram.count ? histogram.max / NS_PER_MS : 0,
        eventLoopUtilization: performance.eventLoopUtilization(elu, intervalElu).utilization,
        heapUsedBytes: memory.heapUsed,
        rssBytes: memory.rss,
      });
      if (samples.length > config.seriesLength) samples.shift();
      intervalElu = elu;
      histogram.reset();
    }, config.sampleInterval);
    timer.unref();
  }
  let closed = false;

  return {
    snapshot() {
      const now = performance.now();
      const elu = performance.eventLoopUtilization();
      const memory = process.memoryUsage();
      const utilizationWindow =
        config.sampleInterval > 0
          ? window.utilization(now)
          : performance.eventLoopUtilization(elu, lastElu).utilization;
      const snapshot: MonitorSnapshot = {
        eventLoopDelay: delayStats(sinceSnapshot),
        eventLoopUtilization: performance.eventLoopUtilization(elu, lastElu).utilization,
        eventLoopUtilizationWindow: utilizationWindow,
        heapUsedBytes: memory.heapUsed,
        heapTotalBytes: memory.heapTotal,
        rssBytes: memory.rss,
        externalBytes: memory.external,
        arrayBuffersBytes: memory.arrayBuffers,
        ...activeCounts(),
        timestamp: Date.now(),
        windowMs: now - lastSnapshotAt,
      };
      lastElu = elu;
      lastSnapshotAt = now;
      sinceSnapshot.reset();
      return snapshot;
    },
    series() {
      return samples.slice();
    },
    close() {
      if (closed) return;
      closed = true;
      sinceSnapshot.disable();
      perInterval?.disable();
      if (timer) clearInterval(timer);
    },
  };
}
