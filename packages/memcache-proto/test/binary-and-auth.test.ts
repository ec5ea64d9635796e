import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MemcachedServer, parseAuthfile } from '../src/index.js';
import { exchange } from './helpers.js';

interface MemjsClient {
  set(key: string, value: string | Buffer, options: { expires?: number }): Promise<boolean>;
  get(key: string): Promise<{ value: Buffer | null; flags: Buffer | null }>;
  delete(key: string): Promise<boolean>;
  increment(
    key: string,
    amount: number,
    options: { initial?: number },
  ): Promise<{ success: boolean; value?: number }>;
  add(key: string, value: string, options: object): Promise<boolean>;
  close(): void;
}
const memjs = createRequire(import.meta.url)('memjs') as {
  Client: { create(servers: string, options?: object): MemjsClient };
};

const servers: MemcachedServer[] = [];
async function start(options: Parameters<typeof createServer>[0] = {}) {
  const server = createServer({ port: 0, ...options });
  servers.push(server);
  await server.listen();
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('binary protocol', () => {
  it('passes every ascii and binary test of memccapable (libmemcached)', async () => {
    const server = await start();
    const output = await new Promise<string>((resolve) => {
      const child = spawn('memccapable', ['-h', '127.0.0.1', '-p', String(server.port), '-t', '20'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      child.stderr.on('data', (d) => (text += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.on('close', () => {
        clearTimeout(timer);
        resolve(text);
      });
    });
    const passed = output.match(/\[pass\]/g)?.length ?? 0;
    expect(output).not.toMatch(/\[fail\]/);
    expect(passed).toBeGreaterThanOrEqual(50);
    expect(output).toContain('All tests passed');
  });

  it('serves memjs (a binary-protocol client): set, get, add, increment, delete', async () => {
    const server = await start();
    const client = memjs.Client.create(`127.0.0.1:${server.port}`, { retries: 0, timeout: 10 });
    try {
      expect(await client.set('b', 'binary value', { expires: 100 })).toBe(true);
      expect((await client.get('b')).value?.toString()).toBe('binary value');
      expect(await client.add('b', 'x', {})).toBe(false);
      expect((await client.increment('counter', 5, { initial: 10 })).value).toBe(10);
      expect((await client.increment('counter', 5, { initial: 10 })).value).toBe(15);
      expect(await client.delete('b')).toBe(true);
      expect((await client.get('b')).value).toBeNull();
    } finally {
      client.close();
    }
  });
});

describe('memcaslap --verify', () => {
  it('reports no failed or missing values against hotpath-memcached', async () => {
    const server = await start();
    const output = await new Promise<string>((resolve) => {
      const child = spawn(
        'memcaslap',
        ['-s', `127.0.0.1:${server.port}`, '-T', '1', '-c', '8', '-t', '2s', '--verify=0.2'],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      child.stderr.on('data', (d) => (text += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('close', () => {
        clearTimeout(timer);
        resolve(text);
      });
    });
    expect(output).toMatch(/verify_failed: 0\b/);
    expect(output).toMatch(/verify_misses: 0\b/);
    expect(Number(/cmd_get: (\d+)/.exec(output)?.[1])).toBeGreaterThan(100);
  });
});

describe('authentication', () => {
  let dir: string;
  let authfile: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-mc-auth-'));
    authfile = join(dir, 'auth');
    writeFileSync(authfile, 'alice:s3cret\nbob:hunter2\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('text protocol: commands before login get CLIENT_ERROR unauthenticated; a set with "user password" logs in', async () => {
    const server = await start({ authfile });
    const login = 'set auth 0 0 12\r\nalice s3cret\r\n';
    expect(await exchange(server.port, `get abc\r\n${login}`)).toBe(
      'CLIENT_ERROR unauthenticated\r\nSTORED\r\nMN\r\n',
    );
    expect(await exchange(server.port, `set auth 0 0 11\r\nalice wrong\r\n${login}`)).toBe(
      'CLIENT_ERROR authentication failure\r\nSTORED\r\nMN\r\n',
    );
    expect(await exchange(server.port, 'mn\r\n', 1, false)).toBe('<closed>');
    expect(
      await exchange(server.port, 'set auth 0 0 12\r\nalice s3cret\r\nset a 0 0 1\r\nx\r\nget a\r\n'),
    ).toBe('STORED\r\nSTORED\r\nVALUE a 0 1\r\nx\r\nEND\r\nMN\r\n');
    expect(server.cache.stats.authErrors).toBe(1);
  });

  it('binary protocol: SASL PLAIN with the authfile users; unauthenticated requests get an auth error', async () => {
    const server = await start({ authfile });
    const good = memjs.Client.create(`127.0.0.1:${server.port}`, {
      username: 'bob',
      password: 'hunter2',
      retries: 0,
    });
    try {
      expect(await good.set('k', 'v', {})).toBe(true);
      expect((await good.get('k')).value?.toString()).toBe('v');
    } finally {
      good.close();
    }
    // a raw GET without SASL: status 0x20 "Auth failure."
    const get = Buffer.alloc(25);
    get[0] = 0x80;
    get.writeUInt16BE(1, 2);
    get.writeUInt32BE(1, 8);
    get[24] = 107;
    const noop = Buffer.from([0x80, 0x0a, ...new Array(22).fill(0)]);
    const net = await import('node:net');
    const reply = await new Promise<Buffer>((resolve) => {
      const socket = net.connect(server.port, '127.0.0.1', () => socket.write(Buffer.concat([get, noop])));
      const chunks: Buffer[] = [];
      socket.on('data', (d) => {
        chunks.push(d);
        const all = Buffer.concat(chunks);
        if (all.length >= 24 + 13 + 24) {
          socket.destroy();
          resolve(all);
        }
      });
    });
    expect(reply[0]).toBe(0x81);
    expect(reply.readUInt16BE(6)).toBe(0x20);
    expect(reply.subarray(24, 37).toString()).toBe('Auth failure.');
  });

  it('rejects a malformed authfile with HP_MC_AUTHFILE naming the line', () => {
    expect(() => parseAuthfile('alice\n')).toThrow(/line 1: expected user:password/);
  });
});
