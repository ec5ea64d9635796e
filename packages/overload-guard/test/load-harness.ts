import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { allowedCpus } from '../../../scripts/cpus.mjs';

const serverScript = fileURLToPath(new URL('./servers/cpu-server.mjs', import.meta.url));
const loadScript = fileURLToPath(new URL('../bench/http-load.mjs', import.meta.url));

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** What bench/http-load.mjs prints. */
export interface LoadResult {
  connections: number;
  duration: number;
  total: number;
  statusCodes: Record<string, number>;
  /** 2xx responses completed per second of the measured window. */
  goodput: number;
  shedRatio: number;
  accepted: LatencySummary;
  shed: LatencySummary;
  retryAfterMissing: number;
  unfinished: number;
  errors: number;
}

export interface RunningServer {
  port: number;
  stop(): Promise<void>;
}

/**
 * The CPUs a run is pinned to: the server on the first this process may use, the load generator
 * on the second, as in bench/run.mjs (Linux with taskset and two CPUs; elsewhere undefined, and
 * nothing is pinned).
 */
export const PINNED: { server: number; load: number } | undefined = (() => {
  if (spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status !== 0) return undefined;
  const cpus = allowedCpus();
  const [server, load] = cpus;
  return server === undefined || load === undefined ? undefined : { server, load };
})();

/** `command args`, on one CPU when given (taskset execs the command: same process, same fds). */
const onCpu = (cpu: number | undefined, command: string, args: string[]): [string, string[]] =>
  cpu === undefined ? [command, args] : ['taskset', ['-c', String(cpu), command, ...args]];

/** Starts test/servers/cpu-server.mjs in its own process (it imports the built package by name). */
export async function startServer(args: string[], cpu?: number): Promise<RunningServer> {
  const [command, argv] = onCpu(cpu, process.execPath, [serverScript, ...args]);
  const child: ChildProcess = spawn(command, argv, {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
  };
  try {
    const [message] = (await Promise.race([
      once(child, 'message'),
      once(child, 'exit').then(() => {
        throw new Error(`cpu-server ${args.join(' ')} exited before listening`);
      }),
    ])) as [{ port: number }];
    return { port: message.port, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Runs the load generator in its own process (the server's loop is saturated on purpose); every
 * connection is primed on the cheap /ping route first so the run measures steady overload.
 */
export async function runLoad(
  port: number,
  options: { connections: number; duration: number; warmup?: number },
  cpu?: number,
): Promise<LoadResult> {
  const [command, argv] = onCpu(cpu, process.execPath, [
    loadScript,
    '--port',
    String(port),
    '--connections',
    String(options.connections),
    '--duration',
    String(options.duration),
    '--warmup',
    String(options.warmup ?? 1),
    '--grace',
    '4',
    '--prime',
    '/ping',
  ]);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const timer = setTimeout(
    () => child.kill('SIGKILL'),
    (options.duration + (options.warmup ?? 1) + 20) * 1000,
  );
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  if (code !== 0) throw new Error(`http-load exited with ${String(code)}: ${out}`);
  return JSON.parse(out) as LoadResult;
}

/** Starts a server, loads it, stops it; `pinned`: the server and the load on a CPU each (PINNED). */
export async function measure(
  serverArgs: string[],
  load: { connections: number; duration: number; warmup?: number },
  pinned = false,
): Promise<LoadResult> {
  const cpus = pinned ? PINNED : undefined;
  const server = await startServer(serverArgs, cpus?.server);
  try {
    return await runLoad(server.port, load, cpus?.load);
  } finally {
    await server.stop();
  }
}
