import { mergeHistograms, summarizeHistogram } from '@hotpath/load-client';
import type { LoadResult } from '../model.js';
import type { MeasuredScenario as Scenario } from '../settings/schema.js';
import { throwIfAborted } from './abort.js';
import { searchCapacities, startRates } from './capacity.js';
import { runLoad } from './load.js';
import { markLoad } from './machine-load.js';
import type { RoundRun } from './round-server.js';
import {
  checkWindow,
  type MeasuredWindow,
  type ScenarioLoad,
  scenarioLoad,
  settle,
  settleSeconds,
  survivorsPass,
  warmUp,
  warmupOf,
} from './round-windows.js';

// A comparison round with both servers up (see runPairRound in round.ts): per scenario, each side's warm-up,
// each side's opening collection and the rest of its warm-up (see settleSeconds), then one measured window for both, the probe's window open on both servers, in which the load
// alternates between them in slices — B H, H B, B H, … — so that whatever the machine does at
// that time (a neighbour, a slower core, a frequency step) meets both sides alike. Each side's
// window is the sum of its slices: its requests, its latencies (one histogram), its seconds.

/** How many slices each side's window is cut into: `duration / slice`, at least one. */
export function sliceCount(duration: number, slice: number): number {
  if (!(slice > 0)) return 1;
  return Math.max(1, Math.round(duration / slice));
}

/**
 * A slice lasts at least this many times the longest mean latency the warm-ups saw. A slice
 * starts with a request on every connection at once and ends draining them; with latencies near
 * the slice's length those edges are all it measures (an Express server hashing with pbkdf2Sync
 * at 20 connections, about 250 ms a request, read a p50 of 122–143 ms in 0.5 s slices whatever
 * head did).
 */
export const SLICE_LATENCIES = 10;

/** The slice length for a scenario: `slice`, longer for slow requests (see SLICE_LATENCIES), at most `duration`. Pure. */
export function sliceLength(slice: number, duration: number, meanLatenciesMs: readonly number[]): number {
  const longest = Math.max(0, ...meanLatenciesMs.filter(Number.isFinite));
  return Math.min(duration, Math.max(slice, (SLICE_LATENCIES * longest) / 1000));
}

/** The order of the sides in slice `k`: the first order, then reversed, in turn (A B, B A, A B, …). */
export function sliceOrder<T>(first: readonly T[], k: number): T[] {
  return k % 2 === 0 ? [...first] : [...first].reverse();
}

/** One load result from a side's slices, as if it were one window of their summed length. */
export function mergeSlices(slices: readonly LoadResult[]): LoadResult {
  const first = slices[0];
  if (!first) throw new Error('mergeSlices: no slices');
  if (slices.length === 1) return first;
  const sumOf = (records: readonly Record<string, number>[]) => {
    const out: Record<string, number> = {};
    for (const r of records) for (const [k, v] of Object.entries(r)) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const duration = slices.reduce((s, r) => s + r.duration, 0);
  const total = slices.reduce((s, r) => s + r.requests.total, 0);
  const histograms = slices.flatMap((r) => (r.histogram ? [r.histogram] : []));
  const histogram = histograms.length === slices.length ? mergeHistograms(histograms) : undefined;
  const latency = histogram
    ? (({ mean, p50, p90, p99, max }) => ({ mean, p50, p90, p99, max }))(summarizeHistogram(histogram))
    : first.latency;
  return {
    duration,
    requests: {
      total,
      mean: duration > 0 ? total / duration : 0,
      perSecond: slices.flatMap((r) => r.requests.perSecond),
    },
    latency,
    statusCodes: sumOf(slices.map((r) => r.statusCodes)),
    non2xx: slices.reduce((s, r) => s + r.non2xx, 0),
    errors: slices.reduce((s, r) => s + r.errors, 0),
    errorsByKind: sumOf(slices.map((r) => r.errorsByKind)),
    ...(histogram ? { histogram } : {}),
  };
}

/** A `tick` event after each slice: the side's measured seconds so far and the slice's req/s. */
function sliceTick(run: RoundRun, load: ScenarioLoad, measured: number, slice: LoadResult): void {
  const { duration } = run.settings;
  const second = Math.round(measured * 100) / 100;
  const rps = Math.round(slice.duration > 0 ? slice.requests.total / slice.duration : 0);
  run.context.onProgress?.({
    phase: 'tick',
    ...load.where,
    window: 'measure',
    second,
    seconds: duration,
    requestsPerSecond: rps,
    message: `${run.spec.side} round ${run.round}:${load.label} measuring ${second}/${duration} s, ${rps} req/s`,
  });
}

/** Every scenario of the round, in order: one window per side each, measured in slices. */
export async function measureSlicedScenarios(runs: readonly RoundRun[]): Promise<MeasuredWindow[][]> {
  const windows: MeasuredWindow[][] = runs.map(() => []);
  const first = runs[0];
  if (!first) return windows;
  for (const [index, scenario] of first.settings.scenarios.entries()) {
    const measured = await measureSlicedScenario(runs, index, scenario);
    for (const [i, w] of measured.entries()) windows[i]?.push(w);
  }
  return windows;
}

/**
 * Each side's warm-up in turn, then each side's opening collection and settle load in turn (see
 * settleSeconds), so that both sides' windows start a settle period after their collection.
 */
async function warmUpAll(
  runs: readonly RoundRun[],
  loads: readonly ScenarioLoad[],
  window: number,
): Promise<{ warms: LoadResult[]; settled: (LoadResult | undefined)[] }> {
  const settings = (runs[0] as RoundRun).settings;
  const settling = settleSeconds(settings);
  const warms: LoadResult[] = [];
  if (settings.warmup > 0)
    for (const [i, run] of runs.entries())
      warms.push(await warmUp(run, loads[i] as ScenarioLoad, window, settling));
  const settled: (LoadResult | undefined)[] = [];
  if (settling > 0)
    for (const [i, run] of runs.entries())
      settled.push(await settle(run, loads[i] as ScenarioLoad, window, settling));
  return { warms, settled };
}

async function measureSlicedScenario(
  runs: readonly RoundRun[],
  index: number,
  scenario: Scenario,
): Promise<MeasuredWindow[]> {
  const first = runs[0] as RoundRun;
  const { settings, context } = first;
  const loads = runs.map((run) => scenarioLoad(run, scenario));
  const { warms, settled } = await warmUpAll(runs, loads, index + 1);
  const latencies = warms.map((w) => w.latency.mean);
  const slice = sliceLength(settings.slice, settings.duration, latencies);
  if (slice > settings.slice && first.round === 1)
    context.onProgress?.({
      phase: 'note',
      message: `${scenario.name}: slices of ${Math.round(slice * 100) / 100} s, not ${settings.slice} s: ${SLICE_LATENCIES}× the longest mean latency of the warm-ups (${Math.round(Math.max(...latencies))} ms), so a slice's first and last requests are not all it measures`,
    });
  for (const run of runs) await run.server.control.start(index + 1);
  const n = sliceCount(settings.duration, slice);
  const seconds = settings.duration / n;
  for (const [i, run] of runs.entries())
    context.onProgress?.({
      phase: 'measure',
      ...loads[i]?.where,
      seconds: settings.duration,
      message: `${run.spec.side} round ${run.round}:${loads[i]?.label} measuring ${settings.duration} s in ${n} slice${n === 1 ? '' : 's'} of ${Math.round(seconds * 1000) / 1000} s, alternating with ${runs
        .filter((r) => r !== run)
        .map((r) => r.spec.side)
        .join(', ')}`,
    });
  const slices: LoadResult[][] = runs.map(() => []);
  const before = markLoad();
  const order = runs.map((_, i) => i);
  for (let k = 0; k < n; k++) {
    for (const i of sliceOrder(order, k)) {
      for (const [j, other] of runs.entries()) other.server.control.mark(i === j ? 'busy' : 'idle');
      const load = loads[i] as ScenarioLoad;
      const slice = await runLoad({ ...load.options, duration: seconds });
      // Keys stored once per server (by the warm-up, or by the first slice without one).
      load.options.preloaded = true;
      slices[i]?.push(slice);
      throwIfAborted(context.signal);
      sliceTick(runs[i] as RoundRun, load, (k + 1) * seconds, slice);
    }
  }
  const after = markLoad();
  const windows: MeasuredWindow[] = [];
  for (const [i, run] of runs.entries()) {
    const reports = await run.server.control.stop();
    throwIfAborted(context.signal);
    const load = loads[i] as ScenarioLoad;
    const result = mergeSlices(slices[i] ?? []);
    checkWindow(run, load, result);
    context.onProgress?.({
      phase: 'measured',
      ...load.where,
      requestsPerSecond: result.requests.mean,
      message: `${run.spec.side} round ${run.round}:${load.label} ${Math.round(result.requests.mean)} req/s`,
    });
    windows.push({
      scenario,
      load: result,
      reports,
      marks: [before, after],
      slices: n,
      ...warmupOf(warms[i], settled[i]),
    });
  }
  const capacities =
    scenario.slo === undefined
      ? []
      : await searchCapacities(runs, loads, scenario, startRates(windows.map((w) => w.load)));
  const measured: MeasuredWindow[] = [];
  for (const [i, w] of windows.entries()) {
    const survived = await survivorsPass(runs[i] as RoundRun, loads[i] as ScenarioLoad, index + 1, w.reports);
    measured.push({ ...w, ...survived, ...(capacities[i] ? { capacity: capacities[i] } : {}) });
  }
  return measured;
}
