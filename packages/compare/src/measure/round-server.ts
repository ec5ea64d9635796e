import { join } from 'node:path';
import { formatTail, HotpathCompareError } from '../errors.js';
import type { Side } from '../model.js';
import { printable } from '../printable.js';
import type { MeasuredScenario, Settings } from '../settings/schema.js';
import { unsetVariables } from '../source/env-reads.js';
import { untilAborted } from './abort.js';
import { untrustedEnvironment, withProbePreloaded } from './environment.js';
import type { PlacedRun } from './placement.js';
import { ProbeControl } from './probe-control.js';
import {
  type GroupProcess,
  killGroupNow,
  type StopResult,
  spawnInGroup,
  stopFailed,
  stopGroup,
  survivorsError,
} from './process-group.js';
import type { ProgressEvent } from './progress.js';
import { freePort, waitUntilReady } from './readiness.js';

// The server of one round (see round.ts): started with the probe preloaded on a free port,
// awaited until it accepts connections, stopped with its whole process tree.

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
  | 'duration'
  | 'warmup'
  | 'slice'
  | 'profiler'
  | 'memory'
  | 'waiting'
  | 'setupCommand'
  | 'readyTimeout'
  | 'passEnv'
> & { scenarios: MeasuredScenario[] };

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
  /** The launch prefix that places the server on its CPUs (see placement.ts); none by default. */
  serverPrefix?: readonly string[];
  /** The run's placement, which measureRounds may widen after the first round (see placement.ts). */
  placed?: Pick<PlacedRun, 'placement' | 'serverPrefix' | 'widen'>;
  /** Stops the round: the server's whole tree is stopped and HP_COMPARE_ABORTED thrown. */
  signal?: AbortSignal;
}

/** A started server and what it was started with. */
export interface RoundServer {
  readonly proc: GroupProcess;
  readonly port: number;
  readonly control: ProbeControl;
  /** Where the probe (and --prof) writes its files. */
  readonly dir: string;
  /** The environment without the server's own variables (setup-command starts from it). */
  readonly base: NodeJS.ProcessEnv;
  /** Kills the group if hotpath itself exits while the round runs. */
  readonly onExit: () => void;
  /** Set once the group was stopped: the round settles only after every process it started ended. */
  stopped?: StopResult;
}

/** One round under way: what each of its steps reads. */
export interface RoundRun {
  readonly spec: ServerSpec;
  readonly round: number;
  readonly settings: RoundSettings;
  readonly context: RoundContext;
  readonly server: RoundServer;
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

/** At most this many unset variables are named. */
const UNSET_NAMED = 8;

/**
 * When the server's code reads variables its environment leaves unset (DATABASE_URL, REDIS_URL,
 * …): a line naming them and the file that reads each, and how to set them. Empty otherwise.
 */
function unsetHint(cwd: string, env: NodeJS.ProcessEnv, parent: NodeJS.ProcessEnv): string {
  let unset: { name: string; file: string }[];
  try {
    unset = unsetVariables(cwd, env);
  } catch {
    return '';
  }
  if (unset.length === 0) return '';
  const list = (vars: { name: string; file: string }[]) =>
    vars
      .slice(0, UNSET_NAMED)
      .map((v) => `${printable(v.name)} (${printable(v.file)})`)
      .join(', ') + (vars.length > UNSET_NAMED ? ` and ${vars.length - UNSET_NAMED} more` : '');
  // Set in hotpath's own environment but not passed: a secret-looking name needs listing.
  const held = unset.filter((v) => parent[v.name] !== undefined && parent[v.name] !== '');
  const missing = unset.filter((v) => !held.includes(v));
  const lines: string[] = [];
  if (missing.length > 0)
    lines.push(
      `The server's code reads variables that are unset: ${list(missing)}. Set them, and start the database or cache they point at (in the Action: the job's env, passed with the hotpath step's env input).`,
    );
  if (held.length > 0)
    lines.push(
      `Set here but not passed to the server (secret-looking names are passed only when listed): ${list(held)}; pass them with --pass-env ${held.map((v) => printable(v.name)).join(',')}.`,
    );
  return `\n${lines.join('\n')}`;
}

/** The server failed: the error names the side, the command, what happened and its last output. */
export function serverFailure(
  code: 'HP_COMPARE_SERVER_EXITED' | 'HP_COMPARE_SERVER_NOT_READY' | 'HP_COMPARE_SERVER_ERRORS',
  spec: ServerSpec,
  what: string,
  proc: GroupProcess,
  env?: { server: NodeJS.ProcessEnv; parent: NodeJS.ProcessEnv },
): HotpathCompareError {
  const tail = proc.output.last(20);
  const missingModule =
    spec.workingTree && tail.some((line) => /Cannot find (module|package)|ERR_MODULE_NOT_FOUND/.test(line));
  const hint = missingModule
    ? `\n${spec.side} runs in your working tree as it is: hotpath installs and builds only the checkouts it makes. Install its dependencies there, or commit and pass --${spec.side} <ref> to have it checked out, installed and built like the other side.`
    : '';
  return new HotpathCompareError(
    code,
    `${spec.side} server (${JSON.stringify(spec.command)} in ${spec.cwd}) ${what}. Last output lines:\n${formatTail(tail)}${hint}${env ? unsetHint(spec.cwd, env.server, env.parent) : ''}`,
    { side: spec.side },
  );
}

/**
 * Opens the probe's control channel, takes a free port and starts `command` (the start command,
 * with --prof when profiling with prof) in its own process group, the probe preloaded.
 */
export async function startServer(
  spec: ServerSpec,
  round: number,
  settings: RoundSettings,
  context: RoundContext,
  launch: { command: string; dir: string },
): Promise<RoundServer> {
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
    HOTPATH_PROBE_DIR: launch.dir,
    HOTPATH_PROBE_PROFILER: settings.profiler,
    HOTPATH_PROBE_MEMORY: settings.memory,
    HOTPATH_PROBE_WAITING: settings.waiting,
  };
  context.onProgress?.({
    phase: 'start',
    side: spec.side,
    round,
    message: `${spec.side} round ${round}: starting ${JSON.stringify(spec.command)} on port ${port}`,
  });
  const proc = spawnInGroup(launch.command, { cwd: spec.cwd, env, prefix: context.serverPrefix });
  const onExit = () => killGroupNow(proc);
  process.once('exit', onExit);
  return { proc, port, control, dir: launch.dir, base, onExit };
}

/**
 * Waits until the server accepts connections on its port and its probe attached; throws when
 * it exited or timed out first. Adds a warning when the probe did not attach.
 */
export async function awaitReady(run: RoundRun, warnings: string[]): Promise<void> {
  const { spec, settings, server } = run;
  const { proc, port } = server;
  const serverEnv = { server: { ...server.base, ...run.context.extraEnv }, parent: run.context.env };
  const ready = await untilAborted(
    waitUntilReady(
      port,
      proc.exited,
      settings.readyTimeout * 1000,
      '127.0.0.1',
      () => server.control.attached > 0,
    ),
    run.context.signal,
  );
  if (ready.state === 'exited') {
    const exit = proc.exit();
    const how = exit?.signal ? `signal ${exit.signal}` : `code ${exit?.code}`;
    throw serverFailure(
      'HP_COMPARE_SERVER_EXITED',
      spec,
      `exited with ${how} before accepting connections on port ${port}`,
      proc,
      serverEnv,
    );
  }
  if (ready.state === 'timeout') {
    throw serverFailure(
      'HP_COMPARE_SERVER_NOT_READY',
      spec,
      `did not accept connections on port ${port} (from $PORT) within ${settings.readyTimeout} s`,
      proc,
      serverEnv,
    );
  }
  const probed = await server.control.waitForProbe(3000);
  if (!probed && proc.exit() !== null) {
    // Something else answered on the port while the server failed to bind it.
    throw serverFailure('HP_COMPARE_SERVER_EXITED', spec, `exited before listening on port ${port}`, proc);
  }
  if (!probed && settings.profiler !== 'none') {
    warnings.push(
      `${spec.side}: the probe did not attach (the process listening on $PORT is not node, or NODE_OPTIONS was overridden); no profile for this round`,
    );
  }
}

/**
 * Stops the server's whole process group (once) and waits for its port to close; throws when a
 * process survived, naming `failure` (the error that made the round stop early) if any.
 */
export async function stopServer(run: RoundRun, failure?: unknown): Promise<void> {
  const { server } = run;
  server.stopped ??= await stopGroup(server.proc, undefined, { port: server.port });
  if (stopFailed(server.stopped))
    throw survivorsError(server.stopped, `${run.spec.side} round ${run.round}`, failure);
}

/** Last step of every round, also on failure and abort: nothing it started outlives it. */
export async function releaseServer(server: RoundServer): Promise<void> {
  if (!server.stopped) await stopGroup(server.proc, undefined, { port: server.port });
  process.removeListener('exit', server.onExit);
  await server.control.close();
}
