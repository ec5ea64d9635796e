// The load level of `connections: auto`: before the rounds, base's server is loaded at 1, 2, 4, …
// connections for a short step each, and the smallest count whose throughput reaches the plateau
// (PLATEAU of the most any step saw) is held for both sides in every round. Past the plateau more
// connections add only queueing: latencies become the queue's length, the load generator spends
// more CPU per request, and the pairs' spread grows; below it the server idles between requests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadLevel } from '../model.js';
import type { MeasuredScenario, Scenario, Settings } from '../settings/schema.js';
import { throwIfAborted } from './abort.js';
import { runLoad } from './load.js';
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

/** Whether the search can stop: the last FLAT_STEPS steps added under 1 − PLATEAU to the best before them. */
export function reachedPlateau(steps: readonly { requestsPerSecond: number }[]): boolean {
  if (steps.length <= FLAT_STEPS) return false;
  const before = Math.max(...steps.slice(0, -FLAT_STEPS).map((s) => s.requestsPerSecond));
  return steps.slice(-FLAT_STEPS).every((s) => s.requestsPerSecond < before / PLATEAU);
}

/** Settings whose scenarios all have a number of connections (what the rounds run). */
export type LevelledSettings = Omit<Settings, 'scenarios'> & { scenarios: MeasuredScenario[] };

/**
 * Resolves every `connections: auto` on `spec`'s server (started once, warmed up, then the
 * steps); a fixed rate gets RATE_CONNECTIONS and a set count stays. Returns the settings with
 * numbers and what was chosen, with the steps' throughput.
 */
export async function chooseLoadLevels(
  spec: ServerSpec,
  settings: Settings,
  context: RoundContext,
): Promise<{ settings: LevelledSettings; levels: LoadLevel[] }> {
  const auto = settings.scenarios.filter((s) => s.connections === 'auto' && s.rate === undefined);
  const found = auto.length > 0 ? await searchLevels(spec, settings, context, auto) : new Map();
  const levels: LoadLevel[] = [];
  const scenarios = settings.scenarios.map((s) => {
    if (s.connections !== 'auto') return { ...s, connections: s.connections };
    const level: LoadLevel =
      s.rate !== undefined
        ? { scenario: s.name, connections: RATE_CONNECTIONS, reason: 'fixed-rate', steps: [] }
        : (found.get(s.name) as LoadLevel);
    levels.push(level);
    return { ...s, connections: level.connections };
  });
  return { settings: { ...settings, scenarios }, levels };
}

async function searchLevels(
  spec: ServerSpec,
  settings: Settings,
  context: RoundContext,
  scenarios: readonly Scenario[],
): Promise<Map<string, LoadLevel>> {
  const dir = mkdtempSync(join(tmpdir(), `hotpath-level-${spec.side}-`));
  // The server without a profiler: the steps only count requests.
  const roundSettings = { ...settings, profiler: 'none' as const, scenarios: [] };
  const server = await startServer(spec, 0, roundSettings, context, { command: spec.command, dir });
  const run: RoundRun = { spec, round: 0, settings: roundSettings, context, server };
  try {
    await awaitReady(run, []);
    await runSetup(run);
    const levels = new Map<string, LoadLevel>();
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

async function searchLevel(run: RoundRun, scenario: Scenario, settings: Settings): Promise<LoadLevel> {
  const { context } = run;
  const load = {
    url: targetUrl(scenario.url, run.server.port),
    pipelining: scenario.pipelining,
    method: scenario.method,
    headers: scenario.headers,
    body: scenario.body,
    requests: scenario.requests,
    signal: context.signal,
  };
  const label = settings.scenarios.length > 1 ? ` ${scenario.name}:` : '';
  // JIT and caches first, at a middle step, so the first steps do not read a cold server.
  if (settings.warmup > 0) await runLoad({ ...load, connections: 8, duration: settings.warmup });
  const steps: LoadLevel['steps'] = [];
  for (const connections of LEVEL_STEPS) {
    throwIfAborted(context.signal);
    // The first run stored a memcache get run's keys; the steps after it send only their load.
    const preloaded = settings.warmup > 0 || steps.length > 0;
    const result = await runLoad({ ...load, connections, duration: STEP_SECONDS, preloaded });
    steps.push({ connections, requestsPerSecond: result.requests.mean });
    if (reachedPlateau(steps)) break;
  }
  const connections = plateauLevel(steps);
  context.log?.(
    `load level${label} ${steps.map((s) => `${s.connections}: ${Math.round(s.requestsPerSecond)}`).join(', ')} req/s → ${connections} connection${connections === 1 ? '' : 's'}`,
  );
  return { scenario: scenario.name, connections, reason: 'plateau', steps };
}
