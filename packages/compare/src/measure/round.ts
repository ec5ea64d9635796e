import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatTail, HotpathCompareError } from '../errors.js';
import type { LoadResult, MonitorSummary, Profile, RoundResult, ScenarioRound, Side } from '../model.js';
import type { Scenario, Settings } from '../settings/schema.js';
import { throwIfAborted, untilAborted } from './abort.js';
import { untrustedEnvironment, withProbePreloaded } from './environment.js';
import { runLoad } from './load.js';
import { withProbeFramesMarked, withRelativeLocations } from './locations.js';
import { type LoadMark, markLoad, otherLoadSince } from './machine-load.js';
import { readMonitorFile } from './monitor-summary.js';
import { ProbeControl, type ProbeReport } from './probe-control.js';
import {
  type GroupProcess,
  killGroupNow,
  runCommand,
  type StopResult,
  spawnInGroup,
  stopFailed,
  stopGroup,
  survivorsError,
} from './process-group.js';
import { readCpuProfiles, readProfLogs } from './profiles.js';
import type { ProgressEvent } from './progress.js';
import { freePort, waitUntilReady } from './readiness.js';

/** How to start one side's server. */
export interface ServerSpec {
  side: Side;
  /** The start command, run through /bin/sh -c. */
  command: string;
  /** Working directory of the command. */
  cwd: string;
  /**
   * Root of the side's checkout: profile paths below it are kept relative to it, so the same
   * function matches across two checkouts (default: paths stay as the profiler wrote them).
   */
  root?: string;
  /**
   * The side runs in the user's working tree as it is (no checkout, so no install or build by
   * hotpath): a missing module then gets a hint on how to install it.
   */
  workingTree?: boolean;
}

export type RoundSettings = Pick<
  Settings,
  'duration' | 'warmup' | 'profiler' | 'setupCommand' | 'readyTimeout' | 'scenarios' | 'passEnv'
>;

export interface RoundContext {
  /** Absolute path of dist/probe.cjs. */
  probePath: string;
  /** The environment to start from (untrusted parts are stripped). */
  env: NodeJS.ProcessEnv;
  /** Extra variables for the server (e.g. HOTPATH_V8_PROFILER_PATH). */
  extraEnv?: Record<string, string>;
  /** Progress lines (notes: a retry, setup-command). */
  log?: (line: string) => void;
  /** Round events: start, warm-up, measured window, each second of load, window done. */
  onProgress?: (event: ProgressEvent) => void;
  /** Keep profiler output here instead of a temp dir that is removed. */
  keepDir?: string;
  /** Stops the round: the server's whole tree is stopped and HP_COMPARE_ABORTED thrown. */
  signal?: AbortSignal;
}

/** Resolves the `url` setting against the server's port (`$PORT` is replaced in full URLs). */
export function targetUrl(url: string, port: number): string {
  if (url.startsWith('/')) return `http://127.0.0.1:${port}${url}`;
  return url.replace(/\$PORT|\$\{PORT\}/g, String(port));
}

const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** `node …` → `node --prof --logfile=<dir>/v8.log …`; throws when the command does not run node. */
export function withProf(command: string, dir: string, side: Side): string {
  const match = /^(\s*(?:exec\s+)?(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)(node|nodejs)(?=\s|$)/.exec(command);
  if (!match) {
    throw new HotpathCompareError(
      'HP_COMPARE_PROF_NEEDS_NODE',
      `${side}: profiler "prof" needs a start command that runs node directly (e.g. "node server.js"), got ${JSON.stringify(command)}; use profiler "cpuprofile" for npm scripts and wrappers`,
      { side },
    );
  }
  const flag = `--prof --logfile=${shellQuote(join(dir, 'v8.log'))}`;
  return `${match[1]}${match[2]} ${flag}${command.slice(match[0].length)}`;
}

function serverFailure(
  code: 'HP_COMPARE_SERVER_EXITED' | 'HP_COMPARE_SERVER_NOT_READY' | 'HP_COMPARE_SERVER_ERRORS',
  spec: ServerSpec,
  what: string,
  proc: GroupProcess,
): HotpathCompareError {
  const tail = proc.output.last(20);
  const missingModule =
    spec.workingTree && tail.some((line) => /Cannot find (module|package)|ERR_MODULE_NOT_FOUND/.test(line));
  const hint = missingModule
    ? `\n${spec.side} runs in your working tree as it is: hotpath installs and builds only the checkouts it makes. Install its dependencies there, or commit and pass --${spec.side} <ref> to have it checked out, installed and built like the other side.`
    : '';
  return new HotpathCompareError(
    code,
    `${spec.side} server (${JSON.stringify(spec.command)} in ${spec.cwd}) ${what}. Last output lines:\n${formatTail(tail)}${hint}`,
    { side: spec.side },
  );
}

/** Starts per round when the server loses its port to another process (see runRound). */
const PORT_ATTEMPTS = 3;

/**
 * One round of one side: start the server with the probe preloaded, wait until it accepts
 * connections, run setup-command, warm up, open the profile window, measure, close the window,
 * stop the whole process tree (always, also on failure) and read what the probe wrote.
 *
 * The port comes from the kernel but is only free until the server binds it: on a busy machine
 * another process can take it in between, and the server dies with EADDRINUSE. Then the round
 * is started again on a new port (up to PORT_ATTEMPTS starts), and says so in the log.
 */
export async function runRound(
  spec: ServerSpec,
  round: number,
  settings: RoundSettings,
  context: RoundContext,
): Promise<RoundResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runRoundOnce(spec, round, settings, context);
    } catch (err) {
      const portTaken =
        err instanceof HotpathCompareError &&
        err.code === 'HP_COMPARE_SERVER_EXITED' &&
        err.message.includes('EADDRINUSE');
      if (!portTaken || attempt >= PORT_ATTEMPTS) throw err;
      context.log?.(
        `${spec.side} round ${round}: the server's port was taken by another process (EADDRINUSE); starting it again on a new port`,
      );
    }
  }
}

async function runRoundOnce(
  spec: ServerSpec,
  round: number,
  settings: RoundSettings,
  context: RoundContext,
): Promise<RoundResult> {
  const log = context.log ?? (() => {});
  const { signal } = context;
  throwIfAborted(signal);
  const dir = context.keepDir ?? mkdtempSync(join(tmpdir(), `hotpath-${spec.side}-`));
  let command: string;
  try {
    command = settings.profiler === 'prof' ? withProf(spec.command, dir, spec.side) : spec.command;
  } catch (err) {
    if (!context.keepDir) rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  // The probe control listens first: the port asked for next can then never be its port (two
  // asks for a free port in a row can get the same one, and the server's bind then fails).
  const control = await ProbeControl.open();
  const port = await freePort();
  const base = untrustedEnvironment(context.env, settings.passEnv);
  const env: NodeJS.ProcessEnv = {
    ...base,
    ...context.extraEnv,
    PORT: String(port),
    NODE_OPTIONS: withProbePreloaded(base.NODE_OPTIONS, context.probePath),
    HOTPATH_PROBE_CONTROL: control.address,
    HOTPATH_PROBE_DIR: dir,
    HOTPATH_PROBE_PROFILER: settings.profiler,
  };
  const warnings: string[] = [];
  const emit = context.onProgress ?? (() => {});
  const at = { side: spec.side, round };
  emit({
    phase: 'start',
    ...at,
    message: `${spec.side} round ${round}: starting ${JSON.stringify(spec.command)} on port ${port}`,
  });
  const proc = spawnInGroup(command, { cwd: spec.cwd, env });
  const onExit = () => killGroupNow(proc);
  process.once('exit', onExit);
  // The round settles only after every process it started has ended (or is named a survivor).
  let stopped: StopResult | undefined;
  const stop = async (failure?: unknown): Promise<void> => {
    stopped ??= await stopGroup(proc, undefined, { port });
    if (stopFailed(stopped)) throw survivorsError(stopped, `${spec.side} round ${round}`, failure);
  };
  try {
    const ready = await untilAborted(waitUntilReady(port, proc.exited, settings.readyTimeout * 1000), signal);
    if (ready.state === 'exited') {
      const exit = proc.exit();
      const how = exit?.signal ? `signal ${exit.signal}` : `code ${exit?.code}`;
      throw serverFailure(
        'HP_COMPARE_SERVER_EXITED',
        spec,
        `exited with ${how} before accepting connections on port ${port}`,
        proc,
      );
    }
    if (ready.state === 'timeout') {
      throw serverFailure(
        'HP_COMPARE_SERVER_NOT_READY',
        spec,
        `did not accept connections on port ${port} (from $PORT) within ${settings.readyTimeout} s`,
        proc,
      );
    }
    const probed = await control.waitForProbe(3000);
    if (!probed && proc.exit() !== null) {
      // Something else answered on the port while the server failed to bind it.
      throw serverFailure('HP_COMPARE_SERVER_EXITED', spec, `exited before listening on port ${port}`, proc);
    }
    if (!probed && settings.profiler !== 'none') {
      warnings.push(
        `${spec.side}: the probe did not attach (the process listening on $PORT is not node, or NODE_OPTIONS was overridden); no profile for this round`,
      );
    }
    if (settings.setupCommand) {
      log(`${spec.side} round ${round}: setup-command`);
      const first = settings.scenarios[0];
      if (!first)
        throw new HotpathCompareError(
          'HP_COMPARE_INVALID_SETTING',
          'settings.scenarios is empty: expected at least one scenario',
        );
      const setup = await runCommand(settings.setupCommand, {
        cwd: spec.cwd,
        env: { ...base, PORT: String(port), HOTPATH_URL: targetUrl(first.url, port) },
        timeoutMs: 300_000,
        signal,
      });
      throwIfAborted(signal);
      if (setup.exit.code !== 0) {
        throw new HotpathCompareError(
          'HP_COMPARE_SETUP_FAILED',
          `${spec.side}: setup-command ${JSON.stringify(settings.setupCommand)} exited with code ${setup.exit.code}. Last output lines:\n${formatTail(setup.output.last(20))}`,
          { side: spec.side },
        );
      }
    }
    const windows: {
      scenario: Scenario;
      load: LoadResult;
      reports: ProbeReport[];
      marks: [LoadMark, LoadMark];
    }[] = [];
    for (const [index, scenario] of settings.scenarios.entries()) {
      const url = targetUrl(scenario.url, port);
      const load = {
        url,
        connections: scenario.connections,
        pipelining: scenario.pipelining,
        rate: scenario.rate,
        method: scenario.method,
        headers: scenario.headers,
        body: scenario.body,
        requests: scenario.requests,
        signal,
      };
      const label = settings.scenarios.length > 1 ? ` ${scenario.name}:` : '';
      const where = { ...at, scenario: scenario.name };
      const ticks = (window: 'warmup' | 'measure', seconds: number) => (second: number, rps: number) =>
        emit({
          phase: 'tick',
          ...where,
          window,
          second,
          seconds,
          requestsPerSecond: rps,
          message: `${spec.side} round ${round}:${label} ${window === 'warmup' ? 'warm-up' : 'measuring'} ${second}/${seconds} s, ${rps} req/s`,
        });
      if (settings.warmup > 0) {
        emit({
          phase: 'warmup',
          ...where,
          seconds: settings.warmup,
          message: `${spec.side} round ${round}:${label} warm-up ${settings.warmup} s`,
        });
        await runLoad({ ...load, duration: settings.warmup, onSecond: ticks('warmup', settings.warmup) });
        throwIfAborted(signal);
      }
      await control.start(index + 1);
      emit({
        phase: 'measure',
        ...where,
        seconds: settings.duration,
        message: `${spec.side} round ${round}:${label} measuring ${settings.duration} s`,
      });
      const before = markLoad();
      const result = await runLoad({
        ...load,
        duration: settings.duration,
        onSecond: ticks('measure', settings.duration),
      });
      const after = markLoad();
      emit({
        phase: 'measured',
        ...where,
        requestsPerSecond: result.requests.mean,
        message: `${spec.side} round ${round}:${label} ${result.requests.mean} req/s`,
      });
      // Aborted: no profile to wait for (the probe may take long to write one); stop now.
      throwIfAborted(signal);
      const reports = await control.stop();
      throwIfAborted(signal);
      if (proc.exit() !== null) {
        throw serverFailure('HP_COMPARE_SERVER_EXITED', spec, 'exited during the measured window', proc);
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
          `answered no request of scenario ${JSON.stringify(scenario.name)} (${url}) with a 2xx status (status codes {${codes}}, errors {${errs}})`,
          proc,
        );
      }
      windows.push({ scenario, load: result, reports, marks: [before, after] });
    }
    await stop();
    const scenarios: ScenarioRound[] = [];
    const pids = new Set<number>();
    let serverNode: string | undefined;
    for (const [index, { scenario, load, reports, marks }] of windows.entries()) {
      const monitors: MonitorSummary[] = [];
      for (const report of reports) {
        pids.add(report.pid);
        serverNode ??= report.node || undefined;
        if (report.error) warnings.push(`${spec.side} process ${report.pid}: ${report.error}`);
        if (report.note) warnings.push(`${spec.side} process ${report.pid}: ${report.note}`);
        if (report.files.monitor) {
          try {
            monitors.push(readMonitorFile(report.files.monitor));
          } catch (err) {
            warnings.push(`${spec.side}: unreadable monitor data: ${(err as Error).message}`);
          }
        }
      }
      let profile: Profile | undefined;
      if (settings.profiler === 'cpuprofile') {
        const read = readCpuProfiles(
          reports.flatMap((r) => (r.files.cpuprofile ? [r.files.cpuprofile] : [])),
        );
        profile = read.profile;
        warnings.push(...read.warnings);
      } else if (settings.profiler === 'prof') {
        const read = await readProfLogs(
          dir,
          reports.map((r) => r.pid),
          index + 1,
        );
        profile = read.profile;
        warnings.push(...read.warnings);
      }
      const otherLoad =
        monitors.length > 0
          ? otherLoadSince(
              marks[0],
              marks[1],
              monitors.reduce((sum, m) => sum + m.cpuMicros, 0),
            )
          : undefined;
      scenarios.push({
        scenario: scenario.name,
        load,
        profile:
          profile && withRelativeLocations(withProbeFramesMarked(profile, context.probePath), spec.root),
        monitors,
        profilers: [...new Set(reports.map((r) => r.profiler))],
        ...(otherLoad !== undefined ? { otherLoad } : {}),
      });
    }
    return { side: spec.side, round, scenarios, pids: [...pids], serverNode, warnings };
  } catch (err) {
    if (!stopped) await stop(err);
    throw err;
  } finally {
    if (!stopped) await stopGroup(proc, undefined, { port });
    process.removeListener('exit', onExit);
    await control.close();
    if (!context.keepDir) rmSync(dir, { recursive: true, force: true });
  }
}
