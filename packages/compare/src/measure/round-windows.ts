import { formatTail, HotpathCompareError } from '../errors.js';
import type { CapacitySearch, LoadResult } from '../model.js';
import type { MeasuredScenario as Scenario } from '../settings/schema.js';
import { throwIfAborted } from './abort.js';
import { searchCapacities, startRates } from './capacity.js';
import { type LoadOptions, runLoad } from './load.js';
import { type LoadMark, markLoad } from './machine-load.js';
import type { ProbeReport } from './probe-control.js';
import { runCommand } from './process-group.js';
import type { RoundEvent } from './progress.js';
import { type RoundRun, serverFailure } from './round-server.js';

// What a round does with its ready server (see round.ts): setup-command, then per scenario a
// warm-up and the measured window, with the probe's profile window open around the latter (and,
// with memory on, its survivors profile around the former).

/** One scenario's measured window: its load result, what the probe wrote, the machine's load marks. */
export interface MeasuredWindow {
  scenario: Scenario;
  load: LoadResult;
  reports: ProbeReport[];
  marks: [LoadMark, LoadMark];
  /**
   * The window was measured in this many slices, alternating with the other side's server, which
   * ran beside it (see round-slices.ts); absent for a whole window of one server alone.
   */
  slices?: number;
  /** The capacity search after the window (a scenario with `slo`; see capacity.ts). */
  capacity?: CapacitySearch;
  /** Requests of the scenario's warm-up on this server before the window's edge (absent without one). */
  warmupRequests?: number;
  /** Requests between the window's opening collection and its start (see settleSeconds). */
  settleRequests?: number;
  /** Requests of the load through the survivors profile, after the window (see survivorsPass). */
  survivorsRequests?: number;
}

/** One scenario's load and how its progress is told. */
export interface ScenarioLoad {
  scenario: Scenario;
  url: string;
  /** The load of both windows, without duration and per-second callback. */
  options: Omit<LoadOptions, 'duration' | 'onSecond'>;
  /** ` name:` when the round runs several scenarios. */
  label: string;
  where: Pick<RoundEvent, 'side' | 'round' | 'scenario'>;
}

/** Resolves the `url` setting against the server's port (`$PORT` is replaced in full URLs). */
export function targetUrl(url: string, port: number): string {
  if (url.startsWith('/')) return `http://127.0.0.1:${port}${url}`;
  return url.replace(/\$PORT|\$\{PORT\}/g, String(port));
}

/** Runs setup-command (when set) against the ready server; throws when it fails. */
export async function runSetup(run: RoundRun): Promise<void> {
  const { spec, round, settings, context, server } = run;
  if (!settings.setupCommand) return;
  context.log?.(`${spec.side} round ${round}: setup-command`);
  const first = settings.scenarios[0];
  if (!first)
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      'settings.scenarios is empty: expected at least one scenario',
    );
  const setup = await runCommand(settings.setupCommand, {
    cwd: spec.cwd,
    env: { ...server.base, PORT: String(server.port), HOTPATH_URL: targetUrl(first.url, server.port) },
    timeoutMs: 300_000,
    signal: context.signal,
  });
  throwIfAborted(context.signal);
  if (setup.exit.code !== 0) {
    throw new HotpathCompareError(
      'HP_COMPARE_SETUP_FAILED',
      `${spec.side}: setup-command ${JSON.stringify(settings.setupCommand)} exited with code ${setup.exit.code}. Last output lines:\n${formatTail(setup.output.last(20))}`,
      { side: spec.side },
    );
  }
}

/** Warm-up and measured window of every scenario, in order. */
export async function measureScenarios(run: RoundRun): Promise<MeasuredWindow[]> {
  const windows: MeasuredWindow[] = [];
  for (const [index, scenario] of run.settings.scenarios.entries())
    windows.push(await measureScenario(run, index, scenario));
  return windows;
}

async function measureScenario(run: RoundRun, index: number, scenario: Scenario): Promise<MeasuredWindow> {
  const { signal } = run.context;
  const load = scenarioLoad(run, scenario);
  const settling = settleSeconds(run.settings);
  const warm = run.settings.warmup > 0 ? await warmUp(run, load, index + 1, settling) : undefined;
  const settled = settling > 0 ? await settle(run, load, index + 1, settling) : undefined;
  await run.server.control.start(index + 1);
  const { result, marks } = await measureWindow(run, load);
  // Aborted: no profile to wait for (the probe may take long to write one); stop now.
  throwIfAborted(signal);
  const reports = await run.server.control.stop();
  throwIfAborted(signal);
  checkWindow(run, load, result);
  const [capacity] =
    scenario.slo === undefined ? [] : await searchCapacities([run], [load], scenario, startRates([result]));
  const survived = await survivorsPass(run, load, index + 1, reports);
  return {
    scenario,
    load: result,
    marks,
    ...warmupOf(warm, settled),
    ...survived,
    ...(capacity ? { capacity } : {}),
  };
}

/** The window's warm-up requests, where there was a warm-up, and its settle requests, where it had them. */
export function warmupOf(
  warm: LoadResult | undefined,
  settled: LoadResult | undefined,
): Pick<MeasuredWindow, 'warmupRequests' | 'settleRequests'> {
  return {
    ...(warm ? { warmupRequests: warm.requests.total } : {}),
    ...(settled ? { settleRequests: settled.requests.total } : {}),
  };
}

/**
 * Seconds at the end of the warm-up between the window's opening collection (the probe's `edge`)
 * and its start: a full collection throws away much of V8's optimized code, made again under load
 * within about a second (a Node 20 HTTP server re-optimized 50–80 functions in the first second
 * after one and none after; its CPU per request was +30–50 % in that second), so the window starts
 * after it. Out of the warm-up, not added to it: at most 1 s and half the warm-up; none with memory
 * off (no collection) or without a warm-up.
 */
export const SETTLE_SECONDS = 1;
export function settleSeconds(settings: { warmup: number; memory: string }): number {
  if (settings.memory === 'off' || !(settings.warmup > 0)) return 0;
  return Math.min(SETTLE_SECONDS, settings.warmup / 2);
}

export function scenarioLoad(run: RoundRun, scenario: Scenario): ScenarioLoad {
  const url = targetUrl(scenario.url, run.server.port);
  const options = {
    url,
    connections: scenario.connections,
    pipelining: scenario.pipelining,
    http2: scenario.http2,
    grpc: scenario.grpc,
    rate: scenario.rate,
    method: scenario.method,
    headers: scenario.headers,
    body: scenario.body,
    requests: scenario.requests,
    signal: run.context.signal,
  };
  const label = run.settings.scenarios.length > 1 ? ` ${scenario.name}:` : '';
  const where = { side: run.spec.side, round: run.round, scenario: scenario.name };
  return { scenario, url, options, label, where };
}

/** A `tick` event for each second of a window (`from`: seconds of it already run). */
function ticks(run: RoundRun, load: ScenarioLoad, window: 'warmup' | 'measure', seconds: number, from = 0) {
  return (at: number, rps: number) => {
    const second = from + at;
    run.context.onProgress?.({
      phase: 'tick',
      ...load.where,
      window,
      second,
      seconds,
      requestsPerSecond: rps,
      message: `${run.spec.side} round ${run.round}:${load.label} ${window === 'warmup' ? 'warm-up' : 'measuring'} ${second}/${seconds} s, ${rps} req/s`,
    });
  };
}

/**
 * The round (of each side and shard) whose scenarios get a survivors profile: a load as long as the
 * warm-up after the window (and its capacity search), through the inspector's sampling heap
 * profiler, which forces an atomic full collection when it stops. That collection throws away
 * optimized code that V8's own collections leave alone, and the code optimized again stays slower
 * (+3–4 % CPU per request on a JSON route): after the window, in one round, no window of the
 * process follows it (but a config's next scenario, whose warm-up makes the code again).
 */
export const SURVIVORS_ROUND = 1;

/**
 * The warm-up of measured window number `window` but its last `settling` seconds (see settle), with
 * memory on the probe's meter of how fast it allocates running through it; returns its load (the
 * slices' length reads its latency).
 */
export async function warmUp(
  run: RoundRun,
  load: ScenarioLoad,
  window: number,
  settling: number,
): Promise<LoadResult> {
  const { spec, round, settings, context } = run;
  if (settings.memory !== 'off') await run.server.control.warm(window);
  context.onProgress?.({
    phase: 'warmup',
    ...load.where,
    seconds: settings.warmup,
    message: `${spec.side} round ${round}:${load.label} warm-up ${settings.warmup} s`,
  });
  const result = await runLoad({
    ...load.options,
    duration: settings.warmup - settling,
    onSecond: ticks(run, load, 'warmup', settings.warmup),
  });
  // The warm-up stored a memcache get run's keys: the measured load sends only its gets.
  load.options.preloaded = true;
  throwIfAborted(context.signal);
  return result;
}

/**
 * In round SURVIVORS_ROUND with memory on and a warm-up, after window number `window` closed: a
 * load as long as the warm-up through each process's survivors profile, ended by its full
 * collection and written; returns `reports` with each process's file, and the load's requests
 * (what the survivors are per). The reports unchanged where no process profiled.
 */
export async function survivorsPass(
  run: RoundRun,
  load: ScenarioLoad,
  window: number,
  reports: ProbeReport[],
): Promise<{ reports: ProbeReport[]; survivorsRequests?: number }> {
  const { spec, round, settings, context, server } = run;
  if (settings.memory === 'off' || round !== SURVIVORS_ROUND || settings.warmup <= 0) return { reports };
  if ((await server.control.warm(window, true)) === 0) {
    // no profile started (memory on in no process, or no sampler): end the meters that did
    await server.control.survivors(window);
    return { reports };
  }
  context.onProgress?.({
    phase: 'warmup',
    ...load.where,
    seconds: settings.warmup,
    message: `${spec.side} round ${round}:${load.label} survivors profile ${settings.warmup} s`,
  });
  const result = await runLoad({
    ...load.options,
    duration: settings.warmup,
    onSecond: ticks(run, load, 'warmup', settings.warmup),
  });
  throwIfAborted(context.signal);
  const files = await server.control.survivors(window);
  if (files.size === 0) return { reports };
  return {
    reports: reports.map((r) => {
      const file = files.get(r.pid);
      return file ? { ...r, files: { ...r.files, survivors: file } } : r;
    }),
    survivorsRequests: result.requests.total,
  };
}

/**
 * The warm-up's last `seconds`, after the probe took window number `window`'s opening collection
 * (see settleSeconds); returns its load, whose requests count in the window's retained bytes per
 * request. Undefined where no process took the collection (no memory edges, or a probe that
 * answered late: it takes the collection once, before its window opens, whichever comes first).
 */
export async function settle(
  run: RoundRun,
  load: ScenarioLoad,
  window: number,
  seconds: number,
): Promise<LoadResult | undefined> {
  const { settings, context } = run;
  const took = await run.server.control.edge(window);
  const result = await runLoad({
    ...load.options,
    duration: seconds,
    onSecond: ticks(run, load, 'warmup', settings.warmup, settings.warmup - seconds),
  });
  load.options.preloaded = true;
  throwIfAborted(context.signal);
  return took > 0 ? result : undefined;
}

/** The measured window (the probe's profile window is open): its load and the machine's load marks. */
async function measureWindow(
  run: RoundRun,
  load: ScenarioLoad,
): Promise<{ result: LoadResult; marks: [LoadMark, LoadMark] }> {
  const { spec, round, settings, context } = run;
  context.onProgress?.({
    phase: 'measure',
    ...load.where,
    seconds: settings.duration,
    message: `${spec.side} round ${round}:${load.label} measuring ${settings.duration} s`,
  });
  const before = markLoad();
  const result = await runLoad({
    ...load.options,
    duration: settings.duration,
    onSecond: ticks(run, load, 'measure', settings.duration),
  });
  const after = markLoad();
  context.onProgress?.({
    phase: 'measured',
    ...load.where,
    requestsPerSecond: result.requests.mean,
    message: `${spec.side} round ${round}:${load.label} ${result.requests.mean} req/s`,
  });
  return { result, marks: [before, after] };
}

/** Throws when the server died during the window or answered no request with a 2xx status. */
export function checkWindow(run: RoundRun, load: ScenarioLoad, result: LoadResult): void {
  const { spec, server } = run;
  if (server.proc.exit() !== null) {
    throw serverFailure('HP_COMPARE_SERVER_EXITED', spec, 'exited during the measured window', server.proc);
  }
  const ok = result.requests.total - result.non2xx;
  if (ok <= 0) {
    const codes = Object.entries(result.statusCodes)
      .map(([code, n]) => `${code}: ${n}`)
      .join(', ');
    const errs = Object.entries(result.errorsByKind)
      .map(([kind, n]) => `${kind}: ${n}`)
      .join(', ');
    throw serverFailure(
      'HP_COMPARE_SERVER_ERRORS',
      spec,
      `answered no request of scenario ${JSON.stringify(load.scenario.name)} (${load.url}) with a 2xx status (status codes {${codes}}, errors {${errs}})`,
      server.proc,
    );
  }
}
