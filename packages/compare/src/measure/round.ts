import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HotpathCompareError } from '../errors.js';
import type { RoundResult } from '../model.js';
import { throwIfAborted } from './abort.js';
import { readScenarioRounds, withSlicedWindows } from './round-results.js';
import {
  awaitReady,
  type RoundContext,
  type RoundRun,
  type RoundSettings,
  releaseServer,
  type ServerSpec,
  startServer,
  stopServer,
  withProf,
} from './round-server.js';
import { measureSlicedScenarios } from './round-slices.js';
import { measureScenarios, runSetup } from './round-windows.js';

export type { RoundContext, RoundSettings, ServerSpec } from './round-server.js';

/** Starts per round when the server loses its port to another process (see runRound). */
const PORT_ATTEMPTS = 3;

/** Whether a round's port was taken by another process between the ask and the bind. */
function portTaken(err: unknown): boolean {
  return (
    err instanceof HotpathCompareError &&
    err.code === 'HP_COMPARE_SERVER_EXITED' &&
    err.message.includes('EADDRINUSE')
  );
}

/**
 * Runs `once` again when a server lost its port to another process (up to PORT_ATTEMPTS starts):
 * the port comes from the kernel but is only free until the server binds it, and on a busy
 * machine another process can take it in between (the server dies with EADDRINUSE).
 */
async function withPortRetry<T>(what: string, context: RoundContext, once: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once();
    } catch (err) {
      if (!portTaken(err) || attempt >= PORT_ATTEMPTS) throw err;
      context.log?.(
        `${what}: the server's port was taken by another process (EADDRINUSE); starting it again on a new port`,
      );
    }
  }
}

/**
 * One round of one side: start the server with the probe preloaded, wait until it accepts
 * connections, run setup-command, warm up, open the profile window, measure, close the window,
 * stop the whole process tree (always, also on failure) and read what the probe wrote.
 */
export async function runRound(
  spec: ServerSpec,
  round: number,
  settings: RoundSettings,
  context: RoundContext,
): Promise<RoundResult> {
  return withPortRetry(`${spec.side} round ${round}`, context, () =>
    withServers([spec], round, settings, context, async ([run], warnings) => {
      const windows = await measureScenarios(run as RoundRun);
      await stopServer(run as RoundRun);
      const read = await readScenarioRounds(run as RoundRun, windows, warnings[0] as string[]);
      return roundResult(run as RoundRun, read, warnings[0] as string[]);
    }),
  );
}

/**
 * One comparison round with both servers up (settings.slice > 0): both started and made ready,
 * then every scenario's window measured in slices that alternate between them (see
 * round-slices.ts); both stopped, and each side's result read. `specs[0]` starts first, warms
 * up first and takes the first slice; measureRounds alternates it from round to round.
 */
export async function runPairRound(
  specs: readonly [ServerSpec, ServerSpec],
  round: number,
  settings: RoundSettings,
  context: RoundContext,
): Promise<RoundResult[]> {
  return withPortRetry(`round ${round}`, context, () =>
    withServers(specs, round, settings, context, async (runs, warnings) => {
      const windows = await measureSlicedScenarios(runs);
      for (const run of runs) await stopServer(run);
      const results: RoundResult[] = [];
      for (const [i, run] of runs.entries()) {
        const read = await readScenarioRounds(run, windows[i] ?? [], warnings[i] as string[]);
        results.push(roundResult(run, read, warnings[i] as string[]));
      }
      return withSlicedWindows(results, windows);
    }),
  );
}

function roundResult(
  run: RoundRun,
  read: Awaited<ReturnType<typeof readScenarioRounds>>,
  warnings: string[],
): RoundResult {
  const { scenarios, pids, serverNode } = read;
  return { side: run.spec.side, round: run.round, scenarios, pids, serverNode, warnings };
}

/**
 * The steps around a round's measuring, in order, for each of `specs`: the start command, the
 * server (started, awaited), setup; then `measure`. Whatever happens on the way (a failure, an
 * abort), every server's whole tree is stopped, its probe control closed and its temp dir
 * removed before the round settles.
 */
async function withServers<T>(
  specs: readonly ServerSpec[],
  round: number,
  settings: RoundSettings,
  context: RoundContext,
  measure: (runs: RoundRun[], warnings: string[][]) => Promise<T>,
): Promise<T> {
  const runs: RoundRun[] = [];
  const dirs: string[] = [];
  const warnings: string[][] = specs.map(() => []);
  try {
    for (const [i, spec] of specs.entries()) {
      throwIfAborted(context.signal);
      const dir = context.keepDir
        ? specs.length > 1
          ? mkdirp(join(context.keepDir, spec.side))
          : context.keepDir
        : mkdtempSync(join(tmpdir(), `hotpath-${spec.side}-`));
      if (!context.keepDir) dirs.push(dir);
      const command = settings.profiler === 'prof' ? withProf(spec.command, dir, spec.side) : spec.command;
      const server = await startServer(spec, round, settings, context, { command, dir });
      const run: RoundRun = { spec, round, settings, context, server };
      runs.push(run);
      await awaitReady(run, warnings[i] as string[]);
      await runSetup(run);
    }
    return await measure(runs, warnings);
  } catch (err) {
    for (const run of runs) if (!run.server.stopped) await stopServer(run, err);
    throw err;
  } finally {
    for (const run of runs) await releaseServer(run.server);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

function mkdirp(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}
