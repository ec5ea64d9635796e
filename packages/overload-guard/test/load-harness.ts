import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

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

/** Starts test/servers/cpu-server.mjs in its own process (it imports the built package by name). */
export async function startServer(args: string[]): Promise<RunningServer> {
  const child: ChildProcess = spawn(process.execPath, [serverScript, ...args], {
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
): Promise<LoadResult> {
  const child = spawn(
    process.execPath,
    [
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
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
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

/** Starts a server, loads it, stops it. */
export async function measure(
  serverArgs: string[],
  load: { connections: number; duration: number; warmup?: number },
): Promise<LoadResult> {
  const server = await startServer(serverArgs);
  try {
    return await runLoad(server.port, load);
  } finally {
    await server.stop();
  }
}
