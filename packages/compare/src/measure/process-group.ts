import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { HotpathCompareError } from '../errors.js';
import { OutputTail } from './output-tail.js';
import {
  listenersOf,
  listeningSockets,
  liveness,
  ownSockets,
  processEntry,
  processTable,
} from './process-table.js';
import {
  descendants,
  HAS_PROC,
  MARKER,
  marked,
  onShellStatus,
  SHELL,
  SUBREAPER,
  subreaperLaunch,
  TREE_SAMPLE_MS,
  walkTree,
} from './process-tree.js';

export { OutputTail } from './output-tail.js';
export { SHELL } from './process-tree.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A shell command running in its own process group. */
export interface GroupProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly output: OutputTail;
  /** Resolves when the shell itself exits. */
  readonly exited: Promise<Exit>;
  /** null while running. */
  exit(): Exit | null;
  /**
   * Whether the spawned process has been reaped: with `linger` the subreaper that outlives the
   * shell (until what the command left behind has ended), otherwise the shell itself. Until
   * then its pid is the one spawned, whatever the shell's exit.
   */
  reaped(): boolean;
  /** Resolves once the spawned process has been reaped (see reaped). */
  readonly whenReaped: Promise<void>;
  /**
   * `HOTPATH_PROCESS_GROUP=<random>` in the environment of everything the command starts: how
   * processes that left the group and the tree (setsid, double fork) are still found.
   */
  readonly marker: string;
  /**
   * Linux: every process seen in the command's tree while it ran (pid → start time; the shell
   * included), from a walk of /proc children every TREE_SAMPLE_MS: how processes that left the group and the tree *and*
   * cleared their environment (`setsid env -i …`, then their parent exited) are still found.
   */
  readonly seen: ReadonlyMap<number, number>;
  /** Ends the periodic walk (stopGroup calls it; the walk never keeps Node alive). */
  unwatch(): void;
}

export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Also forward output here (e.g. a log stream); optional. */
  onOutput?: (chunk: Buffer) => void;
  /** A command the launch runs through, e.g. `taskset -c 0` (it execs: the pid stays the group's). */
  prefix?: readonly string[];
  /**
   * A command run to completion (install, build, setup, the config child, an install of the
   * profiler): on Linux with perl, the subreaper forks the shell and stays until every process
   * below it has ended, so a daemon orphaned as the shell exits stays in the tree for the stop
   * (see subreaperLaunch). `exited` still resolves when the shell exits.
   */
  linger?: boolean;
}

/**
 * Runs `command` through `/bin/sh -c` in a new process group (so the whole tree can be
 * signalled at once). Nothing is interpolated into the command: it is the user's own string.
 */
export function spawnInGroup(command: string, options: SpawnOptions): GroupProcess {
  const marker = randomUUID();
  const env: NodeJS.ProcessEnv = { ...options.env, [MARKER]: marker };
  const linger = options.linger === true && SUBREAPER !== undefined;
  const [launcher, launchArgs] = SUBREAPER
    ? subreaperLaunch(SUBREAPER, command, env, { linger })
    : [SHELL, ['-c', command]];
  const [file, args] = options.prefix?.length
    ? [options.prefix[0] as string, [...options.prefix.slice(1), launcher, ...launchArgs]]
    : [launcher, launchArgs];
  const child = spawn(file, args, {
    cwd: options.cwd,
    env,
    detached: true,
    stdio: linger ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
  });
  const output = new OutputTail();
  let exit: Exit | null = null;
  let reaped = false;
  let markReaped: () => void = () => {};
  const whenReaped = new Promise<void>((resolve) => {
    markReaped = resolve;
  });
  const onData = (chunk: Buffer) => {
    output.push(chunk);
    options.onOutput?.(chunk);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<Exit>((resolve) => {
    const settle = (value: Exit) => {
      exit ??= value;
      resolve(exit);
    };
    child.once('error', (err) => {
      output.push(`${SHELL}: ${err.message}\n`);
      reaped = true;
      markReaped();
      settle({ code: 127, signal: null });
    });
    child.once('exit', (code, signal) => {
      reaped = true;
      markReaped();
      settle({ code, signal });
    });
    // Lingering: the shell's status arrives on fd 3 before the subreaper itself ends.
    const status = child.stdio[3] as Readable | null | undefined;
    if (status) onShellStatus(status, settle);
  });
  const pid = child.pid ?? -1;
  const seen = new Map<number, number>();
  let timer: NodeJS.Timeout | undefined;
  const shell = pid > 0 && HAS_PROC ? processEntry(pid) : undefined;
  if (shell) {
    seen.set(pid, shell.startTime);
    timer = setInterval(() => walkTree(seen), TREE_SAMPLE_MS);
    timer.unref();
  }
  const unwatch = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };
  return {
    child,
    pid,
    output,
    exited,
    exit: () => exit,
    reaped: () => reaped,
    whenReaped,
    marker,
    seen,
    unwatch,
  };
}

/** SIGTERM, then this long for the tree to exit before SIGKILL. */
export const STOP_GRACE_MS = 3000;
/** After SIGKILL, this long for the last thread of every process to end. */
export const STOP_KILL_WAIT_MS = 2000;
/**
 * After the last thread has ended, this long for the kernel to close the sockets the tree
 * listened on: a SIGTERMed node server was seen gone (a zombie with no thread left) while its
 * listening socket was still in /proc/net/tcp, until the next look 10–20 ms later, in 17 of 2 600
 * kills (issue #25).
 */
export const STOP_PORT_WAIT_MS = 1000;
/** How often the stop sequence looks again. */
const STOP_POLL_MS = 25;
/**
 * The longest stopGroup takes with the default grace: SIGTERM, grace, SIGKILL, wait, the reap
 * of the shell, the wait for the port (and the /proc scans in between). Past it, it resolves
 * naming the survivors and the sockets still listening.
 */
export const STOP_BOUND_MS = STOP_GRACE_MS + STOP_KILL_WAIT_MS + STOP_PORT_WAIT_MS + 12 * STOP_POLL_MS;

/** How a stop ended. */
export interface StopResult {
  /** Processes still alive (or still exiting) at the bound: empty when the stop succeeded. */
  survivors: number[];
  /** The port's listening sockets (`socket:[inode]`) still open at the bound: empty when closed. */
  openSockets: string[];
  /** The processes holding openSockets (none: the kernel had not closed them yet). */
  holders: number[];
  /** The port the stop waited for, when it was given one. */
  port?: number;
}

/** Whether `stop` left anything behind: a process or a listening socket. */
export function stopFailed(stop: StopResult): boolean {
  return stop.survivors.length > 0 || stop.openSockets.length > 0;
}

function send(pids: Iterable<number>, pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // group already gone
  }
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Stops the whole tree: SIGTERM to the process group, every descendant, every process seen in
 * the tree while it ran (see GroupProcess.seen) and its descendants, and every process that
 * carries the group's marker; SIGKILL to what is left after `graceMs`; then waits up to
 * STOP_KILL_WAIT_MS. A process counts as stopped only once its last thread has ended (see
 * liveness), so its ports are closed when this resolves with no `survivors`.
 */
export async function stopGroup(
  proc: GroupProcess,
  graceMs = STOP_GRACE_MS,
  options: { port?: number } = {},
): Promise<StopResult> {
  proc.unwatch();
  const { port } = options;
  if (proc.pid <= 0) return { survivors: [], openSockets: [], holders: [] };
  // The sockets listening on the tree's port as the stop begins: the port was free when the
  // round chose it, so they are the tree's (a stranger's later listener is never waited for),
  // except one hotpath itself holds: that one took the port before the server could, and it
  // closes only after the stop.
  const mine = port === undefined ? new Set<string>() : ownSockets();
  const own = new Set(
    port === undefined ? [] : [...listeningSockets(port)].filter((socket) => !mine.has(socket)),
  );
  // pid → start time: a pid the kernel reuses for someone else's process is never counted.
  const tracked = new Map<number, number | undefined>(proc.seen);
  const look = (): number[] => {
    const table = processTable();
    if (table) {
      // Walk below the shell while it runs (once reaped its pid may be reused) and below every
      // tracked process that is still the one we saw.
      const roots = table.filter((entry) =>
        entry.pid === proc.pid
          ? !proc.reaped()
          : tracked.has(entry.pid) && tracked.get(entry.pid) === entry.startTime,
      );
      const found = [
        ...table.filter((entry) => entry.pgid === proc.pid),
        ...descendants(
          roots.map((entry) => entry.pid),
          table,
        ),
        ...marked(proc.marker, table),
      ];
      for (const entry of found) if (!tracked.has(entry.pid)) tracked.set(entry.pid, entry.startTime);
    } else if (!tracked.has(proc.pid)) tracked.set(proc.pid, undefined);
    return [...tracked].filter(([pid, start]) => liveness(pid, start) !== 'gone').map(([pid]) => pid);
  };
  const until = async (deadline: number): Promise<number[]> => {
    for (let left = look(); ; left = look()) {
      if (left.length === 0 || Date.now() >= deadline) return left;
      await sleep(STOP_POLL_MS);
    }
  };
  send(look(), proc.pid, 'SIGTERM');
  let left = await until(Date.now() + graceMs);
  if (left.length > 0) {
    send(left, proc.pid, 'SIGKILL');
    left = await until(Date.now() + STOP_KILL_WAIT_MS);
  }
  // The shell (or the subreaper) is our child: let Node reap it (its 'exit' event) before reporting.
  if (!left.includes(proc.pid)) await Promise.race([proc.whenReaped, sleep(4 * STOP_POLL_MS)]);
  if (port === undefined || own.size === 0) return { survivors: left, openSockets: [], holders: [] };
  // Every thread gone is not yet the port closed: wait, bounded, for the kernel to close it.
  const open = (): string[] => [...listeningSockets(port)].filter((socket) => own.has(socket));
  const deadline = Date.now() + STOP_PORT_WAIT_MS;
  let openSockets = open();
  while (openSockets.length > 0 && Date.now() < deadline) {
    await sleep(STOP_POLL_MS / 5);
    openSockets = open();
  }
  const holders = openSockets.length > 0 ? listenersOf(port) : [];
  return { survivors: left, openSockets, holders, port };
}

/**
 * HP_COMPARE_STOP_FAILED naming the survivors and the sockets still listening of `stop`;
 * `failure`, what the stop followed.
 */
export function survivorsError(stop: StopResult, who: string, failure?: unknown): HotpathCompareError {
  const after = failure instanceof Error ? ` (stopping after: ${failure.message})` : '';
  const many = stop.survivors.length > 1;
  const parts: string[] = [];
  if (stop.survivors.length > 0)
    parts.push(
      `process${many ? 'es' : ''} ${stop.survivors.join(', ')} ${many ? 'were' : 'was'} still alive after SIGTERM, ${STOP_GRACE_MS} ms, SIGKILL and ${STOP_KILL_WAIT_MS} ms`,
    );
  if (stop.openSockets.length > 0) {
    const held =
      stop.holders.length > 0 ? `held by process ${stop.holders.join(', ')}` : 'held by no process';
    parts.push(
      `port ${stop.port} was still listening (${stop.openSockets.join(', ')}, ${held}) ${STOP_PORT_WAIT_MS} ms after its processes ended`,
    );
  }
  return new HotpathCompareError(
    'HP_COMPARE_STOP_FAILED',
    `${who}: ${parts.join('; ')}${after}`,
    failure === undefined ? undefined : { cause: failure },
  );
}

/** Synchronous last resort (process 'exit' handlers): SIGKILL the group, the seen and the marked. */
export function killGroupNow(proc: GroupProcess): void {
  proc.unwatch();
  if (proc.pid <= 0) return;
  const seen = [...proc.seen].filter(([pid, start]) => processEntry(pid)?.startTime === start);
  for (const { pid } of [...seen.map(([pid]) => ({ pid })), ...marked(proc.marker, processTable() ?? [])]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  if (proc.reaped()) return;
  try {
    process.kill(-proc.pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/**
 * Runs a command to completion through the shell; resolves with its exit and output tail once
 * every process it started has ended (what it left running in its group or tree is stopped).
 * Rejects with HP_COMPARE_STOP_FAILED when something survives that stop.
 */
export async function runCommand(
  command: string,
  options: SpawnOptions & { timeoutMs?: number; signal?: AbortSignal },
): Promise<{ exit: Exit; output: OutputTail }> {
  const proc = spawnInGroup(command, { ...options, linger: true });
  const onExit = () => killGroupNow(proc);
  process.once('exit', onExit);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const timeout = new Promise<'timeout' | 'aborted'>((resolve) => {
    if (options.timeoutMs) timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
    if (options.signal) {
      onAbort = () => resolve('aborted');
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  const first = await Promise.race([proc.exited, timeout]);
  if (timer) clearTimeout(timer);
  if (onAbort) options.signal?.removeEventListener('abort', onAbort);
  let exit: Exit;
  let grace = 1000;
  if (first === 'aborted') {
    proc.output.push('(aborted)\n');
    exit = { code: null, signal: 'SIGTERM' };
  } else if (first === 'timeout') {
    proc.output.push(`(timed out after ${Math.round((options.timeoutMs ?? 0) / 1000)} s)\n`);
    exit = { code: null, signal: 'SIGKILL' };
  } else {
    // Children the command left behind in its group are not ours to keep.
    exit = first;
    grace = 500;
  }
  const stop = await stopGroup(proc, grace);
  process.removeListener('exit', onExit);
  if (stop.survivors.length > 0) throw survivorsError(stop, `command ${JSON.stringify(command)}`);
  return { exit, output: proc.output };
}
