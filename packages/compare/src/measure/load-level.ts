// The load level of `connections: auto`: before the rounds, base's server and then head's are
// loaded at 1, 2, 4, … connections for a short step each; the smallest count whose throughput
// reaches the plateau (PLATEAU of the most any step saw) is found for each, and the larger of the
// two is held for both sides in every round (a head that serves more in parallel needs more). Past the plateau more
// connections add only queueing: latencies become the queue's length, the load generator spends
// more CPU per request, and the pairs' spread grows; below it the server idles between requests.
// The same steps measure base's capacity for a rate given as a share of it (`rate: "70%"`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { LoadLevel, MonitorSummary } from '../model.js';
import type { RateLevel } from '../run-environment.js';
import type { MeasuredScenario, Scenario, Settings } from '../settings/schema.js';
import { median } from '../verdict/statistics.js';
import { throwIfAborted } from './abort.js';
import { HELD, nextBracketRate } from './capacity.js';
import { type LoadOptions, runLoad } from './load.js';
import { readMonitorFile } from './monitor-summary.js';
import { widening, widenServers } from './placement.js';
import type { ProbeReport } from './probe-control.js';
import {
  awaitReady,
  type RoundContext,
  type RoundRun,
  releaseServer,
  type ServerSpec,
  startServer,
  stopServer,
} from './round-server.js';
import { runSetup, targetUrl } from './round-windows.js';

/** Connections tried, in order. */
export const LEVEL_STEPS = [1, 2, 4, 8, 16, 32, 64] as const;
/** Seconds of load per step. */
export const STEP_SECONDS = 1;
/**
 * A step reaches the plateau at this share of the most throughput any step saw: past it, more
 * connections buy a few percent of batching for a longer queue (latencies that are the queue).
 */
export const PLATEAU = 0.9;
/** The search stops once this many steps in a row gained less than 1 − PLATEAU over the best before. */
const FLAT_STEPS = 2;
/** Connections of a scenario with a fixed rate and connections: auto (the open model's pool). */
export const RATE_CONNECTIONS = 50;

/** The smallest step at the plateau (PLATEAU of the best throughput). Pure. */
export function plateauLevel(steps: readonly { connections: number; requestsPerSecond: number }[]): number {
  const best = Math.max(0, ...steps.map((s) => s.requestsPerSecond));
  const first = steps.find((s) => s.requestsPerSecond >= PLATEAU * best);
  return first?.connections ?? LEVEL_STEPS[0];
}

/**
 * Base's capacity from the steps: the median of the three best (all of them when fewer). The best
 * single step reads high on a machine whose speed varies from second to second (the most of
 * several noisy readings), and a rate taken as a share of it would sit nearer saturation than
 * asked. Pure.
 */
export function capacityOf(steps: readonly { requestsPerSecond: number }[]): number {
  const best = steps
    .map((s) => s.requestsPerSecond)
    .filter(Number.isFinite)
    .sort((a, b) => b - a)
    .slice(0, 3);
  return best.length === 0 ? 0 : median(best);
}

export { HELD };
/** Open-model steps at most, and the ratio of the bracket (lowest not held / highest held) that ends the search. */
export const OPEN_STEPS = 10;
export const OPEN_PRECISION = 1.05;

/** One open-model step of the capacity search: the rate asked and the requests/s served. */
export interface OpenStep {
  rate: number;
  requestsPerSecond: number;
}

/** The rate after `steps` (undefined: the search is done): up by 25 % until one is not held, then bisection. Pure. */
export const nextOpenRate = (steps: readonly OpenStep[]): number | undefined =>
  nextBracketRate(
    steps.map((s) => ({ rate: s.rate, met: s.requestsPerSecond >= HELD * s.rate })),
    OPEN_STEPS,
    OPEN_PRECISION,
  );

/** The open model's capacity: the highest rate held (none held: the most served). Pure. */
export function openCapacityOf(steps: readonly OpenStep[]): number {
  const heldRates = steps.filter((s) => s.requestsPerSecond >= HELD * s.rate).map((s) => s.rate);
  return heldRates.length > 0
    ? Math.max(...heldRates)
    : Math.max(0, ...steps.map((s) => s.requestsPerSecond));
}

/** Whether the search can stop: the last FLAT_STEPS steps added under 1 − PLATEAU to the best before them. */
export function reachedPlateau(steps: readonly { requestsPerSecond: number }[]): boolean {
  if (steps.length <= FLAT_STEPS) return false;
  const before = Math.max(...steps.slice(0, -FLAT_STEPS).map((s) => s.requestsPerSecond));
  return steps.slice(-FLAT_STEPS).every((s) => s.requestsPerSecond < before / PLATEAU);
}

/** Settings whose scenarios all have a number of connections and a numeric rate (what the rounds run). */
export type LevelledSettings = Omit<Settings, 'scenarios'> & { scenarios: MeasuredScenario[] };

/** A rate written as a share of base's capacity ("70%"), in percent; undefined for a number or none. */
export const rateShare = (rate: Scenario['rate']): number | undefined =>
  typeof rate === 'string' ? Number.parseFloat(rate) : undefined;

/** The rate a share of a capacity makes (at least 1 req/s). Pure. */
export const rateOfShare = (share: number, capacity: number): number =>
  Math.max(1, Math.round((share / 100) * capacity));

/**
 * Resolves, on `spec`'s server (started once, warmed up, then the steps), every
 * `connections: auto` (the smallest count at the plateau) and every rate given as a share of
 * base's capacity (the highest rate held in the open-model steps, times the share). A fixed rate with
 * connections: auto gets RATE_CONNECTIONS; set counts and rates stay. Returns the settings with
 * numbers and what was chosen, with the steps' throughput.
 */
export async function chooseLoadLevels(
  spec: ServerSpec,
  settings: Settings,
  context: RoundContext,
  head?: ServerSpec,
): Promise<{ settings: LevelledSettings; levels: LoadLevel[]; rates: RateLevel[] }> {
  const { found, foundHead } = await searchSides(spec, head, settings, context);
  const levels: LoadLevel[] = [];
  const rates: RateLevel[] = [];
  const scenarios = settings.scenarios.map((s): MeasuredScenario => {
    const searchedSteps: SearchedSteps | undefined = found.get(s.name);
    const steps = searchedSteps?.steps ?? [];
    const share = rateShare(s.rate);
    let rate = typeof s.rate === 'number' ? s.rate : undefined;
    if (share !== undefined) {
      const open = searchedSteps?.open ?? [];
      const capacity = openCapacityOf(open);
      rate = rateOfShare(share, capacity);
      rates.push({ scenario: s.name, share, capacity, rate, steps, openSteps: open });
      context.log?.(
        `rate${scenarioLabel(settings, s)} ${share} % of base's capacity ${Math.round(capacity)} req/s at a fixed rate (${open.map((o) => `${o.rate}: ${Math.round(o.requestsPerSecond)}`).join(', ')}; closed model ${stepsText(steps)}) → ${rate} req/s`,
      );
    }
    const { rate: _written, ...rest } = s;
    const withRate = rate === undefined ? rest : { ...rest, rate };
    if (s.connections !== 'auto') return { ...withRate, connections: s.connections };
    const headSteps = foundHead.get(s.name)?.steps;
    const level: LoadLevel =
      s.rate !== undefined
        ? { scenario: s.name, connections: RATE_CONNECTIONS, reason: 'fixed-rate', steps: [] }
        : {
            scenario: s.name,
            connections: Math.max(plateauLevel(steps), headSteps ? plateauLevel(headSteps) : 0),
            reason: 'plateau',
            steps,
            ...(headSteps ? { headSteps } : {}),
          };
    if (level.reason === 'plateau')
      context.log?.(
        `load level${scenarioLabel(settings, s)} ${headSteps ? 'base ' : ''}${stepsText(steps)} req/s${headSteps ? `; head ${stepsText(headSteps)} req/s` : ''} → ${level.connections} connection${level.connections === 1 ? '' : 's'}`,
      );
    levels.push(level);
    return { ...withRate, connections: level.connections };
  });
  return { settings: { ...settings, scenarios }, levels, rates };
}

/**
 * The searches before the rounds: on base's server, every connections: auto and rate share; on
 * head's (a comparison), every connections: auto of a closed model — a head that serves more
 * requests in parallel reaches its plateau at more connections, and the level held for both is
 * the larger. When the servers sit on one CPU and a side's parallel work was a large share of its
 * CPU in its search (see placement.ts), the servers get every CPU and the searches run again.
 */
async function searchSides(
  base: ServerSpec,
  head: ServerSpec | undefined,
  settings: Settings,
  context: RoundContext,
): Promise<{ found: Map<string, SearchedSteps>; foundHead: Map<string, SearchedSteps> }> {
  const searched = settings.scenarios.filter(
    (s) => (s.connections === 'auto' && s.rate === undefined) || rateShare(s.rate) !== undefined,
  );
  const closed = head
    ? settings.scenarios.filter((s) => s.connections === 'auto' && s.rate === undefined)
    : [];
  const search = async () => ({
    found:
      searched.length > 0
        ? await searchLevels(base, settings, context, searched)
        : new Map<string, SearchedSteps>(),
    foundHead:
      head && closed.length > 0
        ? await searchLevels(head, settings, context, closed)
        : new Map<string, SearchedSteps>(),
  });
  const first = await search();
  const { placed } = context;
  const why = widening(placed?.placement, [
    { side: 'base', windows: [...first.found.values()].map((f) => f.monitors) },
    { side: 'head', windows: [...first.foundHead.values()].map((f) => f.monitors) },
  ]);
  if (!placed || !why) return first;
  context.log?.(widenServers(placed, why, 'load-level'));
  context.serverPrefix = placed.serverPrefix;
  return search();
}

const scenarioLabel = (settings: Settings, scenario: Scenario) =>
  settings.scenarios.length > 1 ? ` ${scenario.name}:` : '';

const stepsText = (steps: LoadLevel['steps']) =>
  steps.map((s) => `${s.connections}: ${Math.round(s.requestsPerSecond)}`).join(', ');

async function searchLevels(
  spec: ServerSpec,
  settings: Settings,
  context: RoundContext,
  scenarios: readonly Scenario[],
): Promise<Map<string, SearchedSteps>> {
  const dir = mkdtempSync(join(tmpdir(), `hotpath-level-${spec.side}-`));
  // The server as the rounds run it (its profiler and memory probe on, in a window around the
  // steps): what the probe costs per request is in the capacity too, so a share of it is a share
  // of what the rounds can serve.
  const roundSettings = { ...settings, scenarios: [] };
  const server = await startServer(spec, 0, roundSettings, context, { command: spec.command, dir });
  const run: RoundRun = { spec, round: 0, settings: roundSettings, context, server };
  try {
    await awaitReady(run, []);
    await runSetup(run);
    const levels = new Map<string, SearchedSteps>();
    for (const scenario of scenarios) levels.set(scenario.name, await searchLevel(run, scenario, settings));
    await stopServer(run);
    return levels;
  } catch (err) {
    if (!server.stopped) await stopServer(run, err);
    throw err;
  } finally {
    await releaseServer(server);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One step's requests/s. With slices, the step is loaded as a round loads a side: `slice` seconds
 * on, `slice` seconds idle, until STEP_SECONDS of load. A server loaded in slices spends more per
 * request than one loaded without a pause (new connections each slice, the work V8 does when the
 * loop goes idle: here 10–25 % more CPU per request at 0.5 s slices on a 95 µs route), so this is
 * the capacity the rounds meet.
 */
async function stepThroughput(
  load: Omit<LoadOptions, 'connections' | 'duration'>,
  connections: number,
  settings: Settings,
  preloaded: boolean,
): Promise<number> {
  if (!(settings.slice > 0) || settings.slice >= STEP_SECONDS)
    return (await runLoad({ ...load, connections, duration: STEP_SECONDS, preloaded })).requests.mean;
  const parts = Math.ceil(STEP_SECONDS / settings.slice);
  let requests = 0;
  let seconds = 0;
  for (let i = 0; i < parts; i++) {
    if (i > 0) await delay(settings.slice * 1000, undefined, { signal: load.signal });
    const part = await runLoad({
      ...load,
      connections,
      duration: settings.slice,
      preloaded: preloaded || i > 0,
    });
    requests += part.requests.total;
    seconds += part.duration;
  }
  return seconds > 0 ? requests / seconds : 0;
}

/** What the search found for one scenario: the closed-model steps, and for a rate share the open model's. */
interface SearchedSteps {
  steps: LoadLevel['steps'];
  open?: OpenStep[];
  /** The probed processes over the search's window (for the parallel work, see placement.ts). */
  monitors: MonitorSummary[];
}

/**
 * The closed-model steps on base's server: 1, 2, 4, … connections until the throughput is flat.
 * For a rate given as a share of the capacity, then the open model's: from half the closed
 * model's capacity, up by 25 % per step until a rate is not held (under HELD of it served), then
 * bisection to OPEN_PRECISION. At a fixed rate each request arrives alone and the server spends
 * more per request than when requests queue in batches, so the closed model's capacity is more
 * than the rate the server can hold.
 */
async function searchLevel(run: RoundRun, scenario: Scenario, settings: Settings): Promise<SearchedSteps> {
  const { context } = run;
  const load = {
    url: targetUrl(scenario.url, run.server.port),
    pipelining: scenario.pipelining,
    http2: scenario.http2,
    grpc: scenario.grpc,
    method: scenario.method,
    headers: scenario.headers,
    body: scenario.body,
    requests: scenario.requests,
    signal: context.signal,
  };
  // JIT and caches first, at a middle step, so the first steps do not read a cold server.
  if (settings.warmup > 0) await runLoad({ ...load, connections: 8, duration: settings.warmup });
  await run.server.control.start();
  const steps: LoadLevel['steps'] = [];
  for (const connections of LEVEL_STEPS) {
    throwIfAborted(context.signal);
    // The first run stored a memcache get run's keys; the steps after it send only their load.
    const preloaded = settings.warmup > 0 || steps.length > 0;
    steps.push({
      connections,
      requestsPerSecond: await stepThroughput(load, connections, settings, preloaded),
    });
    if (reachedPlateau(steps)) break;
  }
  let open: OpenStep[] | undefined;
  if (rateShare(scenario.rate) !== undefined) {
    const connections = scenario.connections === 'auto' ? RATE_CONNECTIONS : scenario.connections;
    open = [];
    for (
      let rate: number | undefined = Math.max(1, Math.round(capacityOf(steps) / 2));
      rate !== undefined;
    ) {
      throwIfAborted(context.signal);
      open.push({
        rate,
        requestsPerSecond: await stepThroughput({ ...load, rate }, connections, settings, true),
      });
      rate = nextOpenRate(open);
    }
  }
  const monitors = windowMonitors(await run.server.control.stop());
  return { steps, ...(open ? { open } : {}), monitors };
}

/** The monitors the probes wrote for a window; a file that cannot be read is left out. */
function windowMonitors(reports: readonly ProbeReport[]): MonitorSummary[] {
  const monitors: MonitorSummary[] = [];
  for (const report of reports) {
    if (!report.files.monitor) continue;
    try {
      monitors.push(readMonitorFile(report.files.monitor));
    } catch {
      // a probe that did not write its window: no reading of its threads
    }
  }
  return monitors;
}
