import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MemcachedServer, parseAuthfile } from '../src/index.js';
import { exchange, startRealMemcached } from './helpers.js';

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

/**
 * A binary request: header, extras, key, value; `bodyLength` overrides the declared body length
 * (to declare more than is sent).
 */
function binaryRequest(
  opcode: number,
  key = '',
  extras = Buffer.alloc(0),
  value = Buffer.alloc(0),
  bodyLength?: number,
): Buffer {
  const header = Buffer.alloc(24);
  header[0] = 0x80;
  header[1] = opcode;
  header.writeUInt16BE(key.length, 2);
  header[4] = extras.length;
  header.writeUInt32BE(bodyLength ?? extras.length + key.length + value.length, 8);
  return Buffer.concat([header, extras, Buffer.from(key, 'latin1'), value]);
}

/**
 * Sends bytes on a new connection and collects the replies until the server closes it
 * (`closed`), or, when `replies` is given, until that many binary responses have arrived.
 */
function binaryExchange(
  port: number,
  data: Buffer,
  replies = Number.POSITIVE_INFINITY,
): Promise<{ bytes: Buffer; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(data));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no reply'));
    }, 10_000);
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ bytes: Buffer.concat(chunks), closed });
    };
    socket.on('data', (d) => {
      chunks.push(d);
      let bytes = Buffer.concat(chunks);
      let n = 0;
      while (bytes.length >= 24 && bytes.length >= 24 + bytes.readUInt32BE(8)) {
        n++;
        bytes = bytes.subarray(24 + bytes.readUInt32BE(8));
      }
      if (n >= replies) done(false);
    });
    socket.on('end', () => done(true));
    socket.on('error', () => done(true));
  });
}

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
    // a raw GET without SASL: status 0x20 "Auth failure.", then the connection closes (as
    // memcached: close_after_write), so the NOOP behind it is never answered
    const get = binaryRequest(0x00, 'k');
    const noop = binaryRequest(0x0a);
    const reply = await binaryExchange(server.port, Buffer.concat([get, noop]));
    expect(reply.closed).toBe(true);
    expect(reply.bytes.length).toBe(24 + 13);
    expect(reply.bytes[0]).toBe(0x81);
    expect(reply.bytes.readUInt16BE(6)).toBe(0x20);
    expect(reply.bytes.subarray(24, 37).toString()).toBe('Auth failure.');
  });

  it('binary protocol: an unauthenticated SET with an oversized body leaves the key (auth error first, body never read)', async () => {
    const server = await start({ authfile });
    server.cache.store.set('victim', Buffer.from('kept'));
    // 2 MiB declared (over the 1 MiB item size limit), only the header and key sent
    const oversized = binaryRequest(0x01, 'victim', Buffer.alloc(8), undefined, 2 * 1024 * 1024);
    const oversizedQuiet = binaryRequest(0x11, 'victim', Buffer.alloc(8), undefined, 2 * 1024 * 1024);
    for (const request of [oversized, oversizedQuiet]) {
      const reply = await binaryExchange(server.port, request);
      expect(reply.closed).toBe(true);
      expect(reply.bytes.readUInt16BE(6)).toBe(0x20);
      expect(server.cache.store.get('victim')?.value.toString()).toBe('kept');
    }
    // nor does any other request with an effect: delete, a small set, flush
    const others = [
      binaryRequest(0x04, 'victim'),
      binaryRequest(0x01, 'victim', Buffer.alloc(8), Buffer.from('new')),
      binaryRequest(0x08),
    ];
    for (const request of others) {
      const reply = await binaryExchange(server.port, request);
      expect(reply.closed).toBe(true);
      expect(reply.bytes.readUInt16BE(6)).toBe(0x20);
    }
    expect(server.cache.store.get('victim')?.value.toString()).toBe('kept');
    expect(server.cache.stats.cmdSet).toBe(0);
  });

  it('binary protocol: before login a SASL body over 16 KiB closes the connection unread; a mechanism over 32 bytes is refused', async () => {
    const server = await start({ authfile });
    // 1 MiB of SASL body declared, only the header and mechanism sent: refused on the header
    const reply = await binaryExchange(
      server.port,
      binaryRequest(0x21, 'PLAIN', undefined, undefined, 1 << 20),
    );
    expect(reply.closed).toBe(true);
    expect(reply.bytes.readUInt16BE(6)).toBe(0x04); // EINVAL
    // just under the cap is read and judged (a failed login, the connection stays)
    const token = Buffer.concat([Buffer.from('\0alice\0'), Buffer.alloc(16384 - 32 - 7, 120)]);
    const big = await binaryExchange(
      server.port,
      Buffer.concat([binaryRequest(0x21, 'PLAIN', undefined, token), binaryRequest(0x0b)]),
      2,
    );
    expect(big.bytes.readUInt16BE(6)).toBe(0x20);
    expect(big.bytes.readUInt16BE(24 + 13 + 6)).toBe(0x00); // VERSION answered after it
    const mech = await binaryExchange(
      server.port,
      Buffer.concat([binaryRequest(0x21, 'M'.repeat(33)), binaryRequest(0x0b)]),
      2,
    );
    expect(mech.bytes.readUInt16BE(6)).toBe(0x04);
    expect(mech.bytes.readUInt16BE(24 + 17 + 6)).toBe(0x00);
    expect(server.cache.stats.authErrors).toBe(1);
  });

  it('text protocol: before login a get line may not pass 2048 bytes (closed, as memcached); after login it may', async () => {
    const server = await start({ authfile });
    const long = `get ${'k '.repeat(1500)}`;
    expect(await exchange(server.port, long, 1, false)).toBe('<closed>');
    const real = await startRealMemcached(['-Y', authfile]);
    try {
      expect(await exchange(real.port, long, 1, false)).toBe('<closed>');
    } finally {
      await real.stop();
    }
    const login = 'set auth 0 0 12\r\nalice s3cret\r\n';
    expect(await exchange(server.port, `${login}${long}\r\n`, 4)).toBe('STORED\r\nEND\r\nMN\r\n');
  });

  it('rejects a malformed authfile with HP_MC_AUTHFILE naming the line', () => {
    expect(() => parseAuthfile('alice\n')).toThrow(/line 1: expected user:password/);
  });
});
