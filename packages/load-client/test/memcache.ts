import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from './nginx.js';

export const MEMCACHED = ['/usr/bin/memcached', '/usr/local/bin/memcached'].find((path) => existsSync(path));

export interface Memcached {
  port: number;
  url: string;
  stats(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

/** A real memcached on a free 127.0.0.1 port (no UDP). */
export async function startMemcached(): Promise<Memcached> {
  if (!MEMCACHED) throw new Error('memcached is not installed');
  const port = await freePort();
  const args = ['-l', '127.0.0.1', '-p', String(port), '-U', '0', '-m', '64', '-t', '1'];
  // memcached refuses to run as root without naming a user to switch to.
  if (process.getuid?.() === 0) args.push('-u', 'nobody');
  const child: ChildProcess = spawn(MEMCACHED, args, { stdio: 'ignore' });
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
