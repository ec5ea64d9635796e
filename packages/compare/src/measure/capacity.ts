// Capacity at an SLO (a scenario's `slo`): in every round, after the measured window, each side's
// highest arrival rate that meets the SLO is searched with short open-model steps — from half the
// round's throughput, up by 25 % per step until a rate misses it, then bisection until the bracket
// (lowest missed over highest met) is within CAPACITY_PRECISION. The two sides' steps alternate
// (A B, B A, …, as the slices do), start from the same rate, and follow the same rule, so an A/A
// round tries the same rates on both. Capacity is then a per-round metric like any other, paired
// base with head (settings/metrics.ts `capacity`).
import { shareWithin } from '@hotpath/load-client';
import type { CapacitySearch, CapacityStep, LoadResult, OverloadStep } from '../model.js';
import type { MeasuredScenario as Scenario } from '../settings/schema.js';
import {
  CAPACITY_PRECISION,
  CAPACITY_START,
  CAPACITY_STEPS,
  describeSlo,
  SLO_LATENCIES,
  type SloTargets,
  STEP_SECONDS,
  sloTargets,
} from '../settings/slo.js';
import { throwIfAborted } from './abort.js';
import { type LoadOptions, runLoad } from './load.js';
import type { RoundEvent } from './progress.js';
import type { RoundRun } from './round-server.js';

/** A rate is served when at least this share of it was (also what `rate: "70%"`'s search holds to). */
export const HELD = 0.97;
/** Requests a step aims for (within STEP_SECONDS): the SLO's p99 is then read from the worst few, not the worst one. */
export const STEP_REQUESTS = 400;
/** Seconds of each step's load before it is measured (connections opened, the queue settled). */
export const STEP_WARMUP = 0.25;
/** Connections the open model has at least; more when the rate times the SLO's latency needs them. */
const MIN_CONNECTIONS = 50;
const MAX_CONNECTIONS = 1000;

/**
 * The next rate of a bracket search over `steps` (undefined: done): up by 25 % from the highest
 * met until one is missed, then the geometric middle of the bracket until it is within
 * `precision`; while nothing is met, half the lowest missed (at least 1 req/s). Pure.
 */
export function nextBracketRate(
  steps: readonly { rate: number; met: boolean }[],
  most: number,
  precision: number,
): number | undefined {
  if (steps.length === 0 || steps.length >= most) return undefined;
  const lo = Math.max(0, ...steps.filter((s) => s.met).map((s) => s.rate));
  const over = steps.filter((s) => !s.met && s.rate > lo).map((s) => s.rate);
  if (over.length === 0) return Math.ceil(lo * 1.25);
  const hi = Math.min(...over);
  if (lo === 0) return hi / 2 >= 1 ? Math.floor(hi / 2) : undefined;
  return hi / lo <= precision ? undefined : Math.round(Math.sqrt(lo * hi));
}

/**
 * A missed step that served less than this share of its rate is not tried again: a stall of the
 * machine (see nextCapacityRate) is a fraction of a second, after which the open model's backlog
 * is served, so it cannot halve what a server with room to spare serves in a step; such a rate is
 * far over the server's capacity.
 */
export const FAR_OVER = 0.5;

/**
 * The next rate of a side's capacity search (undefined: done). A missed rate is tried once more
 * before it counts: a step is a second or two, and one stall of the machine in it (seen here: p99
 * 60–260 ms at half a server's capacity, now and then, beside a run that met the SLO at twice
 * that rate) would otherwise cap the search far below the capacity. A rate met at either try is
 * met; a rate served less than FAR_OVER of is missed at once. Then as nextBracketRate. Pure.
 * Missing at once a rate whose median was past the SLO's target (a queue, not a stall) was tried
 * and left: it made capacity noisier at the knee (README, "Stalls").
 */
export function nextCapacityRate(steps: readonly CapacityStep[]): number | undefined {
  const last = steps.at(-1);
  const before = steps.at(-2);
  const retry =
    last &&
    !last.met &&
    before?.rate !== last.rate &&
    last.requestsPerSecond >= FAR_OVER * last.rate &&
    steps.length < CAPACITY_STEPS;
  if (retry) return last.rate;
  return nextBracketRate(steps, CAPACITY_STEPS, CAPACITY_PRECISION);
}

/**
 * What a step at `rate` missed of the SLO, in a few words each (empty: it met it): the rate not
 * served, the error rate, each latency target not held (a latency NaN, no answer, never holds). Pure.
 */
export function missedTargets(targets: SloTargets, step: Omit<CapacityStep, 'met'>): string[] {
  const missed: string[] = [];
  if (!(step.requestsPerSecond >= HELD * step.rate))
    missed.push(`served ${Math.round(step.requestsPerSecond)} req/s`);
  if (!(step.errorRate * 100 <= targets.errors)) missed.push(`errors ${(step.errorRate * 100).toFixed(1)} %`);
  for (const p of SLO_LATENCIES)
    if (targets[p] !== undefined && !(step[p] <= (targets[p] as number)))
      missed.push(`${p} ${Number.isFinite(step[p]) ? Math.round(step[p]) : '—'} ms`);
  return missed;
}

/** Whether a step at `rate` met the SLO: the rate served, the error rate and every latency target. Pure. */
export const stepMeets = (targets: SloTargets, step: Omit<CapacityStep, 'met'>): boolean =>
  missedTargets(targets, step).length === 0;

/** Failed requests (socket errors and non-2xx) over all requests, 0..1. Pure. */
const errorRateOf = (load: LoadResult): number => {
  const attempts = load.requests.total + load.errors;
  return attempts > 0 ? (load.errors + load.non2xx) / attempts : 0;
};

/** A step from its load result. Pure. */
export function capacityStep(targets: SloTargets, rate: number, load: LoadResult): CapacityStep {
  const step = {
    rate,
    requestsPerSecond: load.requests.mean,
    p50: load.latency.p50,
    p90: load.latency.p90,
    p99: load.latency.p99,
    errorRate: errorRateOf(load),
  };
  return { ...step, met: stepMeets(targets, step) };
}

/** The highest rate met; null when none was (capacity below the lowest rate tried). Pure. */
export function capacityFrom(steps: readonly CapacityStep[]): number | null {
  const met = steps.filter((s) => s.met).map((s) => s.rate);
  return met.length > 0 ? Math.max(...met) : null;
}

/** A step's measured seconds at `rate`. Pure. */
export const stepSeconds = (rate: number): number =>
  Math.min(STEP_SECONDS.max, Math.max(STEP_SECONDS.min, STEP_REQUESTS / rate));

/**
 * Connections for a step at `rate`: the scenario's, at least MIN_CONNECTIONS, and enough for
 * twice the requests in flight that the SLO's longest latency allows at that rate (Little's law),
 * so a missed step is the server's queue and not the load generator's pool. Pure.
 */
export function stepConnections(
  scenario: Pick<Scenario, 'connections'>,
  targets: SloTargets,
  rate: number,
): number {
  const longest = Math.max(0, ...SLO_LATENCIES.map((p) => targets[p] ?? 0));
  const inFlight = Math.ceil((2 * rate * (longest || 100)) / 1000);
  return Math.min(MAX_CONNECTIONS, Math.max(scenario.connections, MIN_CONNECTIONS, inFlight));
}

/**
 * The first rate of each side's search in a round: CAPACITY_START of the higher side's throughput,
 * so that two sides alike search the same rates (their capacities then differ by the servers, not
 * by where two grids of steps fell). A side whose own throughput is below that rate starts at
 * CAPACITY_START of its own: a head ten times slower would otherwise spend a third of its steps
 * far over its capacity (seen: 3 177, 1 588 and 794 req/s missed twice before 397 met, for a
 * capacity of 472). Pure.
 */
export function startRates(windows: readonly LoadResult[]): number[] {
  const own = windows.map((w) => w.requests.mean).filter(Number.isFinite);
  const shared = Math.max(1, Math.round(CAPACITY_START * Math.max(0, ...own)));
  // a side without a reading of its own (no answer) starts at the shared rate
  return windows.map(({ requests: { mean } }) =>
    Number.isFinite(mean) && mean < shared ? Math.max(1, Math.round(CAPACITY_START * mean)) : shared,
  );
}

/** What a search needs of a scenario's load on one server (round-windows.ts ScenarioLoad). */
interface ScenarioLoad {
  options: Omit<LoadOptions, 'duration' | 'onSecond'>;
  label: string;
  where: Pick<RoundEvent, 'side' | 'round' | 'scenario'>;
}

/**
 * Each run's capacity at the scenario's SLO, searched after its measured window (the probe's
 * window closed: the steps are in no CPU or memory metric). Steps alternate between the runs.
 */
export async function searchCapacities(
  runs: readonly RoundRun[],
  loads: readonly ScenarioLoad[],
  scenario: Scenario,
  starts: readonly number[],
): Promise<CapacitySearch[]> {
  const slo = scenario.slo as string;
  const targets = sloTargets(slo);
  const context = (runs[0] as RoundRun).context;
  const steps: CapacityStep[][] = runs.map(() => []);
  const next: (number | undefined)[] = runs.map((_, i) => starts[i] ?? starts[0]);
  const order = runs.map((_, i) => i);
  const step = (i: number, rate: number) => {
    throwIfAborted(context.signal);
    return runLoad({
      ...(loads[i] as ScenarioLoad).options,
      rate,
      connections: stepConnections(scenario, targets, rate),
      duration: stepSeconds(rate),
      warmup: STEP_WARMUP,
      preloaded: true,
    });
  };
  for (let k = 0; next.some((rate) => rate !== undefined); k++) {
    // A B, B A, A B, …: as the slices alternate
    for (const i of k % 2 === 0 ? order : [...order].reverse()) {
      const rate = next[i];
      if (rate === undefined) continue;
      const side = steps[i] as CapacityStep[];
      side.push(capacityStep(targets, rate, await step(i, rate)));
      next[i] = nextCapacityRate(side);
    }
  }
  // Then both sides at twice base's capacity (the lowest rate tried where base met the SLO at none)
  const baseSteps = steps[
    Math.max(
      0,
      runs.findIndex((r) => r.spec.side === 'base'),
    )
  ] as CapacityStep[];
  const overRate = 2 * (capacityFrom(baseSteps) ?? Math.min(...baseSteps.map((s) => s.rate)));
  const overload: OverloadStep[] = [];
  for (const i of order) overload[i] = overloadStep(targets, overRate, await step(i, overRate));
  return runs.map((run, i) => {
    const side = steps[i] as CapacityStep[];
    const capacity = capacityFrom(side);
    const load = loads[i] as ScenarioLoad;
    const lowest = Math.min(...side.map((s) => s.rate));
    const over = overload[i] as OverloadStep;
    context.onProgress?.({
      phase: 'note',
      ...load.where,
      message: `${run.spec.side} round ${run.round}:${load.label} capacity at ${describeSlo(targets)}: ${
        capacity === null ? `below the lowest rate tried (${lowest} req/s)` : `${capacity} req/s`
      } (${side.map((s) => `${s.rate} ${s.met ? 'met' : `missed: ${missedTargets(targets, s).join(', ')}`}`).join('; ')}); at ${overRate} req/s (2× base's capacity): goodput ${Math.round(over.goodput)} req/s, errors ${(over.errorRate * 100).toFixed(1)} %`,
    });
    return { slo, capacity, steps: side, overload: over };
  });
}

/**
 * A step at twice base's capacity: successful answers within the SLO's latency target (its p99,
 * else p90, else p50; with none, every success) per second. The histogram holds every answer's
 * latency, failed ones too, so the count within the target is capped at the successes: a server
 * that sheds with fast 503s is not credited for them. Pure.
 */
export function overloadStep(targets: SloTargets, rate: number, load: LoadResult): OverloadStep {
  const ok = Math.max(0, load.requests.total - load.non2xx);
  const target = targets.p99 ?? targets.p90 ?? targets.p50;
  const within =
    target === undefined
      ? ok
      : load.histogram
        ? shareWithin(load.histogram, target) * load.requests.total
        : 0;
  return {
    rate,
    goodput: load.duration > 0 ? Math.min(ok, within) / load.duration : 0,
    requestsPerSecond: load.requests.mean,
    p99: load.latency.p99,
    errorRate: errorRateOf(load),
  };
}
