import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { freePort } from './nginx.js';

export const MEMCACHED = ['/usr/bin/memcached', '/usr/local/bin/memcached'].find((path) => existsSync(path));

export interface Memcached {
  port: number;
  url: string;
  stats(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

/** hotpath-memcached, the drop-in server of @hotpath/memcache-proto (its built CLI). */
export const HOTPATH_MEMCACHED = join(
  dirname(createRequire(import.meta.url).resolve('@hotpath/memcache-proto/package.json')),
  'dist',
  'cli.js',
);

export type ServerKind = 'memcached' | 'hotpath-memcached';

/** A real memcached (or hotpath-memcached) on a free 127.0.0.1 port (no UDP). */
export async function startMemcached(kind: ServerKind = 'memcached'): Promise<Memcached> {
  const port = await freePort();
  let child: ChildProcess;
  if (kind === 'memcached') {
    if (!MEMCACHED) throw new Error('memcached is not installed');
    const args = ['-l', '127.0.0.1', '-p', String(port), '-U', '0', '-m', '64', '-t', '1'];
    // memcached refuses to run as root without naming a user to switch to.
    if (process.getuid?.() === 0) args.push('-u', 'nobody');
    child = spawn(MEMCACHED, args, { stdio: 'ignore' });
  } else {
    child = spawn(process.execPath, [HOTPATH_MEMCACHED, '-l', '127.0.0.1', '-p', String(port), '-m', '64'], {
      stdio: 'ignore',
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stats = () =>
    new Promise<Record<string, number>>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.on('error', reject);
      socket.on('connect', () => socket.write('stats\r\n'));
      socket.on('data', (chunk) => {
        text += chunk;
        if (text.endsWith('END\r\n')) {
          socket.destroy();
          const out: Record<string, number> = {};
          for (const line of text.split('\r\n')) {
            const [, name, value] = line.split(' ');
            if (name && value !== undefined && /^\d+$/.test(value)) out[name] = Number(value);
          }
          resolve(out);
        }
      });
    });
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await stats();
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    port,
    url: `memcache://127.0.0.1:${port}`,
    stats,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
