import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** One reading of the process's health, over the window since the previous reading. */
export interface MonitorSnapshot {
  /** Event-loop delay over the window, in milliseconds. */
  eventLoopDelay: { min: number; mean: number; p50: number; p99: number; max: number };
  /** Event-loop utilisation over the window, 0..1. */
  eventLoopUtilization: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  rssBytes: number;
}

export interface MonitorOptions {
  /** Resolution of the event-loop delay histogram, in ms (default 10). */
  resolution?: number;
}

export interface Monitor {
  /** Reads the window since the previous call (or since start) and opens a new one. */
  snapshot(): MonitorSnapshot;
  close(): void;
}

const NS_PER_MS = 1e6;

export function createMonitor(options: MonitorOptions = {}): Monitor {
  const resolution = options.resolution ?? 10;
  if (!Number.isFinite(resolution) || resolution < 1) {
    throw new RangeError(`resolution must be a number of milliseconds >= 1, got ${String(resolution)}`);
  }
  const histogram = monitorEventLoopDelay({ resolution });
  histogram.enable();
  let lastElu = performance.eventLoopUtilization();

  return {
    snapshot() {
      const elu = performance.eventLoopUtilization(lastElu);
      lastElu = performance.eventLoopUtilization();
      const memory = process.memoryUsage();
      const count = histogram.count;
      const snapshot: MonitorSnapshot = {
        eventLoopDelay: {
          min: count ? histogram.min / NS_PER_MS : 0,
          mean: count ? histogram.mean / NS_PER_MS : 0,
          p50: count ? histogram.percentile(50) / NS_PER_MS : 0,
          p99: count ? histogram.percentile(99) / NS_PER_MS : 0,
          max: count ? histogram.max / NS_PER_MS : 0,
        },
        eventLoopUtilization: elu.utilization,
        heapUsedBytes: memory.heapUsed,
        heapTotalBytes: memory.heapTotal,
        rssBytes: memory.rss,
      };
      histogram.reset();
      return snapshot;
    },
    close() {
      histogram.disable();
    },
  };
}
