import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HotpathCompareError } from '../errors.js';
import type { RoundResult } from '../model.js';
import { throwIfAborted } from './abort.js';
import { readScenarioRounds } from './round-results.js';
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
import { measureScenarios, runSetup } from './round-windows.js';

export type { RoundContext, RoundSettings, ServerSpec } from './round-server.js';

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

/**
 * The steps of one round, in order: the start command, the server (started, awaited), setup,
 * the scenarios' windows, the stop and what the probe wrote. Whatever happens on the way (a
 * failure, an abort), the server's whole tree is stopped, the probe control closed and the
 * temp dir removed before the round settles.
 */
async function runRoundOnce(
  spec: ServerSpec,
  round: number,
  settings: RoundSettings,
  context: RoundContext,
): Promise<RoundResult> {
  throwIfAborted(context.signal);
  const dir = context.keepDir ?? mkdtempSync(join(tmpdir(), `hotpath-${spec.side}-`));
  const command = startCommand(spec, settings, context, dir);
  const server = await startServer(spec, round, settings, context, { command, dir });
  const run: RoundRun = { spec, round, settings, context, server };
  const warnings: string[] = [];
  try {
    await awaitReady(run, warnings);
    await runSetup(run);
    const windows = await measureScenarios(run);
    await stopServer(run);
    const { scenarios, pids, serverNode } = await readScenarioRounds(run, windows, warnings);
    return { side: spec.side, round, scenarios, pids, serverNode, warnings };
  } catch (err) {
    if (!server.stopped) await stopServer(run, err);
    throw err;
  } finally {
    await releaseServer(server);
    if (!context.keepDir) rmSync(dir, { recursive: true, force: true });
  }
}

/** The start command as run: with --prof when profiling with prof (the temp dir goes if it cannot be). */
function startCommand(spec: ServerSpec, settings: RoundSettings, context: RoundContext, dir: string): string {
  try {
    return settings.profiler === 'prof' ? withProf(spec.command, dir, spec.side) : spec.command;
  } catch (err) {
    if (!context.keepDir) rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
