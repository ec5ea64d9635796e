import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { HotpathTicksError } from './errors.js';
import { LOG_NAME, nodeShim, planRecording } from './record-plan.js';

export interface RecordOptions {
  /** The command and its arguments, e.g. `['node', 'server.js']` or `['npm', 'start']`. */
  command: string[];
  /** Where the logs go (created if missing). */
  dir: string;
  /** Signals passed on to the command while it runs (default SIGINT, SIGTERM, SIGHUP). */
  forward?: NodeJS.Signals[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export interface RecordResult {
  /** The command's exit code, or 128 + the signal's number when a signal ended it. */
  exitCode: number;
  signal: NodeJS.Signals | null;
  /** The tick logs this run wrote into `dir`, one per isolate and process, in name order. */
  logs: string[];
  /** How the profiler was switched on: flags after `node`, or a `node` first on PATH. */
  via: 'node' | 'path';
}

/** The default output directory: `.hotpath-ticks/<UTC time>` in the current directory. */
export function defaultRecordDir(now = new Date()): string {
  return join('.hotpath-ticks', now.toISOString().replace(/[:.]/g, '-'));
}

/**
 * Runs a command under V8's tick profiler with its output written into `dir`, passes SIGINT,
 * SIGTERM and SIGHUP on to its process group, and resolves once it has exited, with the logs it
 * wrote. Throws HP_TICKS_SPAWN_FAILED when the command cannot be started.
 */
export async function recordCommand(options: RecordOptions): Promise<RecordResult> {
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  // Logs of an earlier run into the same directory are not this run's.
  const earlier = new Map(isolateLogs(dir).map((log) => [log, statSync(log).mtimeMs]));
  const env = { ...(options.env ?? process.env) };
  const plan = planRecording(options.command, dir, env);
  let shimDir: string | undefined;
  if (plan.kind === 'path') {
    shimDir = mkdtempSync(join(tmpdir(), 'hotpath-ticks-node-'));
    writeFileSync(join(shimDir, 'node'), nodeShim(plan.realNode, dir), { mode: 0o755 });
    env.PATH = env.PATH ? `${shimDir}${delimiter}${env.PATH}` : shimDir;
  }
  try {
    const { spawn } = await import('node:child_process');
    // Its own process group, so that a signal reaches every process of the command (npm, the
    // shell it starts, node), as Ctrl-C in a terminal would, and reaches it once: the terminal's
    // Ctrl-C goes to our group, and we pass it on. A background group must not read the
    // terminal, so a terminal stdin is not handed on.
    const child = spawn(plan.file, plan.args, {
      cwd: options.cwd,
      env,
      stdio: [process.stdin.isTTY ? 'ignore' : 'inherit', 'inherit', 'inherit'],
      detached: true,
    });
    const running = () => child.pid !== undefined && child.exitCode === null && child.signalCode === null;
    const pass = (signal: NodeJS.Signals) => {
      const pid = child.pid;
      if (pid === undefined || !running()) return;
      try {
        process.kill(-pid, signal);
      } catch {
        child.kill(signal); // the group is gone: the command alone
      }
    };
    const forward = options.forward ?? ['SIGINT', 'SIGTERM', 'SIGHUP'];
    // Should this process end first, the command does not outlive it.
    const orphaned = () => pass('SIGTERM');
    for (const signal of forward) process.on(signal, pass);
    process.on('exit', orphaned);
    let ended: { code: number | null; signal: NodeJS.Signals | null };
    try {
      ended = await new Promise((done, fail) => {
        child.once('error', fail);
        child.once('exit', (code, signal) => done({ code, signal }));
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new HotpathTicksError(
        'HP_TICKS_SPAWN_FAILED',
        `cannot start "${options.command[0]}" (${code}): expected a command on PATH or a path to an executable`,
        { cause: error },
      );
    } finally {
      for (const signal of forward) process.off(signal, pass);
      process.off('exit', orphaned);
    }
    const signalNumber = ended.signal ? (constants.signals[ended.signal] ?? 0) : 0;
    return {
      exitCode: ended.signal ? 128 + signalNumber : (ended.code ?? 1),
      signal: ended.signal,
      logs: isolateLogs(dir).filter((log) => earlier.get(log) !== statSync(log).mtimeMs),
      via: plan.kind,
    };
  } finally {
    if (shimDir) rmSync(shimDir, { recursive: true, force: true });
  }
}

/** Tick logs V8 wrote for the `v8.log` template: `isolate-<address>-<pid>-v8.log`. */
function isolateLogs(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith('isolate-') && name.endsWith(`-${LOG_NAME}`))
    .sort()
    .map((name) => join(dir, name));
}
