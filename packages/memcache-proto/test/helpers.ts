import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

/** A free TCP port on 127.0.0.1 (bound once, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`memcached exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`memcached did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface RealMemcached {
  port: number;
  stop(): Promise<void>;
}

/** Starts /usr/bin/memcached on a free port of 127.0.0.1 (no UDP); stop() kills it. */
export async function startRealMemcached(extraArgs: string[] = []): Promise<RealMemcached> {
  const port = await freePort();
  const args = ['-p', String(port), '-l', '127.0.0.1', '-U', '0', '-t', '1', ...extraArgs];
  if (process.getuid?.() === 0) args.push('-u', 'root');
  const child = spawn('/usr/bin/memcached', args, { stdio: 'ignore' });
  await waitForPort(port, child);
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/**
 * Sends raw bytes (optionally in pieces) followed by `mn\r\n`, and collects the reply up to
 * the meta no-op's `MN\r\n` (or until the server closes). Returns the bytes as latin1.
 */
export function exchange(
  port: number,
  request: Buffer | string,
  pieces = 1,
  sentinel = true,
): Promise<string> {
  const data = Buffer.concat([
    typeof request === 'string' ? Buffer.from(request, 'latin1') : request,
    Buffer.from(sentinel ? 'mn\r\n' : ''),
  ]);
  // The reply is complete once every `mn` of the request (its own and the sentinel) has been
  // answered: a request that contains `mn` itself would otherwise end at its first MN.
  // Count whole lines (adjacent `mn` lines share their newline, so split rather than search).
  const countLines = (text: string, line: string) => text.split('\n').filter((l) => l === line).length;
  const expectedMn = countLines(data.toString('latin1'), 'mn\r');
  const countMn = (text: string) => countLines(text, 'MN\r');
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (suffix: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1') + suffix);
    };
    const timer = setTimeout(() => {
      done = true;
      socket.destroy();
      reject(new Error(`no reply to ${JSON.stringify(String(request).slice(0, 80))}`));
    }, 20_000);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('latin1');
      if (text.endsWith('MN\r\n') && countMn(text) >= Math.max(1, expectedMn)) finish('');
    });
    socket.on('close', () => finish('<closed>'));
    socket.on('error', () => finish('<closed>'));
    socket.on('connect', async () => {
      if (pieces <= 1) {
        socket.write(data);
        return;
      }
      const size = Math.max(1, Math.ceil(data.length / pieces));
      for (let i = 0; i < data.length && !done; i += size) {
        socket.write(data.subarray(i, i + size));
        await new Promise((r) => setImmediate(r));
      }
    });
  });
}

/**
 * `value`, or a failed test naming `what` when it is undefined or null: what a `!` would only
 * have assumed.
 */
export function present<T>(value: T | undefined | null, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`expected ${what}, got ${String(value)}`);
  return value;
}

/** The built CLI (tests of the real server process run it). */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/**
 * Starts `hotpath-memcached <args>` and resolves once it prints where it listens: the process,
 * the port (0 for a unix socket) and what it wrote to stderr so far. `children` collects it for cleanup.
 */
export async function startCli(
  args: string[],
  children: ChildProcess[],
): Promise<{ child: ChildProcess; port: number; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let stderr = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr?.on('data', (d) => {
      stderr += d;
      const m = /listening on (?:\S+:(\d+)|unix socket )/.exec(stderr);
      if (m) resolve(Number(m[1] ?? 0));
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
  return { child, port, stderr };
}
