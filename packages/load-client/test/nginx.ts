import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listening on 127.0.0.1:${port}`);
}

export interface Nginx {
  port: number;
  url: string;
  dir: string;
  accessLogLines(): number;
  stop(): Promise<void>;
}

/** A real nginx (one worker) on a free 127.0.0.1 port, config and logs in a temp dir. */
/** With `http2`, the port speaks HTTP/2 with prior knowledge (h2c) and keeps connections open. */
export async function startNginx(extraServer = '', options: { http2?: boolean } = {}): Promise<Nginx> {
  if (!NGINX) throw new Error('nginx is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-load-nginx-'));
  const port = await freePort();
  // nginx's worker may run as another user: it must be able to read the files it serves.
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'index.html'), 'x'.repeat(600), { mode: 0o644 });
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port}${options.http2 ? ' http2' : ''};${options.http2 ? '\n    keepalive_requests 1000000000;' : ''}
    root ${dir};
    location = /hello { return 200 "hello\\n"; }
    location = /missing { return 404; }
    ${extraServer}
  }
}
`,
  );
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitForPort(port, Date.now() + 15_000);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    dir,
    accessLogLines: () => {
      const path = join(dir, 'access.log');
      if (!existsSync(path)) return 0;
      const text = readFileSync(path, 'utf8');
      return text === '' ? 0 : text.trimEnd().split('\n').length;
    },
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
