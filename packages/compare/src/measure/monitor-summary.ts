import { readFileSync } from 'node:fs';
import type { DownstreamWindow } from '../downstream-model.js';
import type { MemoryWindow, MonitorSummary } from '../model.js';

/** One event-loop monitor reading as the probe wrote it (fields of overload-guard's snapshot). */
interface Reading {
  eventLoopDelay: { mean: number; p99: number; max: number };
  eventLoopUtilization: number;
  heapUsedBytes: number;
  rssBytes: number;
  /** Length of the interval the reading closes, ms (absent from older probes). */
  ms?: number;
  /** In a window measured in slices, the load was on the other side's server for the interval. */
  idle?: boolean;
}

/** Summarises the probe's `<pid>.monitor.json` readings; pure apart from reading the file. */
export function readMonitorFile(path: string): MonitorSummary {
  const data = JSON.parse(readFileSync(path, 'utf8')) as {
    pid: number;
    durationMs: number;
    cpuUserMicros?: number;
    cpuSystemMicros?: number;
    mainThreadCpuMicros?: number;
    mainThreadCpuSource?: MonitorSummary['mainThreadCpuSource'];
    runtimeThreadCpuMicros?: number;
    samples: Reading[];
    memory?: MemoryWindow;
    downstream?: DownstreamWindow;
  };
  const cpu = (data.cpuUserMicros ?? Number.NaN) + (data.cpuSystemMicros ?? 0);
  const summary = summariseReadings(data.pid, data.durationMs, data.samples, cpu);
  return {
    ...summary,
    mainThreadCpuMicros: data.mainThreadCpuMicros ?? Number.NaN,
    ...(data.mainThreadCpuSource ? { mainThreadCpuSource: data.mainThreadCpuSource } : {}),
    ...(Number.isFinite(data.runtimeThreadCpuMicros)
      ? { runtimeCpuMicros: data.runtimeThreadCpuMicros }
      : {}),
    ...(data.memory ? { memory: data.memory } : {}),
    ...(data.downstream ? { downstream: data.downstream } : {}),
  };
}

export function summariseReadings(
  pid: number,
  durationMs: number,
  samples: readonly Reading[],
  cpuMicros = Number.NaN,
): MonitorSummary {
  // The event loop's figures are those of the loaded intervals: a window measured in slices
  // leaves out the readings taken while the load was on the other side's server. Means are
  // weighted by each interval's length where the probe gives it (the last reading, and the ones
  // cut at a slice's edge, cover less than a second); older probes' readings count alike.
  const loaded = samples.some((s) => s.idle) ? samples.filter((s) => !s.idle) : samples;
  const weighted = loaded.length > 0 && loaded.every((s) => typeof s.ms === 'number' && s.ms > 0);
  const weights = loaded.map((s) => (weighted ? (s.ms as number) : 1));
  const total = weights.reduce((sum, w) => sum + w, 0);
  let delayMean = 0;
  let delayP99 = 0;
  let delayMax = 0;
  let utilization = 0;
  for (const [i, s] of loaded.entries()) {
    const share = (weights[i] as number) / total;
    delayMean += s.eventLoopDelay.mean * share;
    delayP99 = Math.max(delayP99, s.eventLoopDelay.p99);
    delayMax = Math.max(delayMax, s.eventLoopDelay.max);
    utilization += s.eventLoopUtilization * share;
  }
  const n = samples.length;
  let heapMax = 0;
  let rssMax = 0;
  for (const s of samples) {
    heapMax = Math.max(heapMax, s.heapUsedBytes);
    rssMax = Math.max(rssMax, s.rssBytes);
  }
  return {
    pid,
    durationMs,
    cpuMicros,
    mainThreadCpuMicros: Number.NaN,
    delayMean,
    delayP99,
    delayMax,
    utilization,
    ...(weighted && total > 0 ? { loadedMs: total } : {}),
    heapStart: samples[0]?.heapUsedBytes ?? 0,
    heapEnd: samples[n - 1]?.heapUsedBytes ?? 0,
    heapMax,
    rssStart: samples[0]?.rssBytes ?? 0,
    rssEnd: samples[n - 1]?.rssBytes ?? 0,
    rssMax,
    heapSeries: samples.map((s) => s.heapUsedBytes),
  };
}
