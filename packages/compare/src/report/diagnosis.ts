import type { Diagnosis, Finding, MonitorSummary, ScenarioRound, Side, SideHealth } from '../model.js';
import { memoryPerRequest } from '../round-data.js';
import { describeSlo, sloTargets } from '../settings/slo.js';

/** p99 event-loop delay above which the loop counts as blocked (ms). */
export const BLOCKED_P99_MS = 100;
/** Mean utilisation above which the loop counts as saturated. */
export const BUSY_UTILIZATION = 0.9;
/** Heap growth over a window that counts as memory growth: both relative and absolute. */
export const GROWTH_RATIO = 0.3;
export const GROWTH_BYTES = 32 * 1024 * 1024;

/**
 * One side's event loop and memory over its rounds' processes (`requests`: the rounds' requests;
 * `retainedOver`: those and their settle requests, see retainedOver).
 */
export function sideHealth(
  monitors: readonly MonitorSummary[],
  requests = 0,
  retainedOver = requests,
): SideHealth | undefined {
  if (monitors.length === 0) return undefined;
  const memory = memoryPerRequest(monitors, requests, retainedOver);
  const rss = monitors.flatMap((m) => (m.rssMax !== undefined ? [m.rssMax] : []));
  const n = monitors.length;
  const avg = (pick: (m: MonitorSummary) => number) => monitors.reduce((s, m) => s + pick(m), 0) / n;
  return {
    delayMean: avg((m) => m.delayMean),
    delayP99: Math.max(...monitors.map((m) => m.delayP99)),
    delayMax: Math.max(...monitors.map((m) => m.delayMax)),
    utilization: avg((m) => m.utilization),
    heapStart: avg((m) => m.heapStart),
    heapEnd: avg((m) => m.heapEnd),
    rssEnd: avg((m) => m.rssEnd),
    heapSeries: monitors.flatMap((m) => m.heapSeries),
    ...(rss.length > 0 ? { rssMax: Math.max(...rss) } : {}),
    ...(memory ? { memory } : {}),
  };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * Below this share of the loaded wall time on a CPU, a busy event loop was waiting for a CPU
 * more than running: utilisation is the time the loop spent outside its wait for events, and a
 * thread that is ready but not scheduled counts as busy too.
 */
export const RUNNING_SHARE = 0.6;

/**
 * The share of the loaded intervals' wall time the main thread spent on a CPU, over a side's
 * processes; undefined when any lacks a reading (older probes, no per-thread time). Pure.
 */
export function runningShare(monitors: readonly MonitorSummary[]): number | undefined {
  let cpu = 0;
  let wall = 0;
  for (const m of monitors) {
    if (!Number.isFinite(m.mainThreadCpuMicros) || !(m.loadedMs && m.loadedMs > 0)) return undefined;
    cpu += m.mainThreadCpuMicros / 1000;
    wall += m.loadedMs;
  }
  return wall > 0 ? cpu / wall : undefined;
}

function findingsOf(side: 'base' | 'head', h: SideHealth, running?: number): Omit<Finding, 'newInHead'>[] {
  const out: Omit<Finding, 'newInHead'>[] = [];
  if (h.delayP99 >= BLOCKED_P99_MS) {
    out.push({
      kind: 'blocked-loop',
      side,
      message: `the event loop was blocked: p99 delay ${h.delayP99.toFixed(0)} ms (max ${h.delayMax.toFixed(0)} ms); synchronous work on the main thread delays every request`,
    });
  }
  if (h.utilization >= BUSY_UTILIZATION) {
    const busy = `the event loop was busy ${(h.utilization * 100).toFixed(0)} % of the time`;
    out.push({
      kind: 'busy-loop',
      side,
      message:
        running !== undefined && running < RUNNING_SHARE
          ? `${busy}, but its main thread ran on a CPU only ${(running * 100).toFixed(0)} % of it: it waited for a CPU (other processes on its CPUs: a database, the load generator, other jobs), which slows it as its own work would`
          : `${busy}: the server is CPU-bound on its main thread`,
    });
  }
  // With memory edges, retained bytes per request say it (a verdict metric); the heap's growth
  // between two readings without a collection cannot tell a leak from garbage not yet collected.
  const growth = h.heapEnd - h.heapStart;
  if (!h.memory && growth >= GROWTH_BYTES && h.heapStart > 0 && growth / h.heapStart >= GROWTH_RATIO) {
    out.push({
      kind: 'memory-growth',
      side,
      message: `heap grew from ${mb(h.heapStart)} to ${mb(h.heapEnd)} within the measured window: possible leak or unbounded cache`,
    });
  }
  return out;
}

/** Clinic-Doctor-style reading of the monitor data: what each side suffered from. Pure. */
export function diagnose(
  base: readonly MonitorSummary[],
  head: readonly MonitorSummary[],
  requests: { base: number; head: number } = { base: 0, head: 0 },
  retainedOver: { base: number; head: number } = requests,
): Diagnosis {
  const b = sideHealth(base, requests.base, retainedOver.base);
  const h = sideHealth(head, requests.head, retainedOver.head);
  const baseFindings = b ? findingsOf('base', b, runningShare(base)) : [];
  const headFindings = h ? findingsOf('head', h, runningShare(head)) : [];
  const findings: Finding[] = [
    ...headFindings.map((f) => ({ ...f, newInHead: !baseFindings.some((x) => x.kind === f.kind) })),
    ...baseFindings.map((f) => ({ ...f, newInHead: false })),
  ];
  return { base: b, head: h, findings };
}

/**
 * Rounds whose capacity search met the SLO at no rate tried: capacity is then below the lowest
 * rate tried, not a number (a server that cannot meet the SLO at any rate says so). Pure.
 */
export function capacityFindings(rounds: Record<Side, readonly ScenarioRound[]>): Finding[] {
  const below = (side: Side) => rounds[side].filter((r) => r.capacity?.capacity === null);
  const found: Finding[] = [];
  for (const side of ['head', 'base'] as const) {
    const missed = below(side);
    const first = missed[0]?.capacity;
    if (!first) continue;
    const lowest = Math.min(...missed.flatMap((r) => (r.capacity?.steps ?? []).map((s) => s.rate)));
    found.push({
      kind: 'capacity-below',
      side,
      newInHead: side === 'head' && below('base').length === 0,
      message: `capacity at ${describeSlo(sloTargets(first.slo))}: below the lowest rate tried (${lowest} req/s) in ${missed.length} of ${rounds[side].length} rounds: the server did not meet the SLO at any rate the search tried`,
    });
  }
  return found;
}
