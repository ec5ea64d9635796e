import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type MemcachedServer } from '../src/index.js';
import { exchange, present } from './helpers.js';

const servers: MemcachedServer[] = [];
async function start(options: Parameters<typeof createServer>[0] = {}): Promise<MemcachedServer> {
  const server = createServer({ port: 0, ...options });
  servers.push(server);
  await server.listen();
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('hotpath-memcached server', () => {
  it('answers get and gets byte for byte for keys and values of every length', async () => {
    const server = await start({ itemSizeMax: 2 << 20 });
    // keys around the byte-by-byte / view boundary (32), with bytes above 0x7f; values empty,
    // small, a class chunk of 20 000 bytes (copied) and a 700 000-byte item of its own (queued by reference)
    const keys = [1, 31, 32, 33, 64, 250].map((n, i) =>
      Array.from({ length: n }, (_, j) =>
        String.fromCharCode(j % 3 === 2 ? 0xa0 + ((i + j) % 90) : 97 + ((i + j) % 26)),
      ).join(''),
    );
    const values = ['', 'v', 'w'.repeat(20_000), '\u00ff'.repeat(700_000), 'x\r\ny', 'z'.repeat(33)];
    const items = keys.map((key, i) => ({ key, flags: i * 1000, value: present(values[i]) }));
    const sets = items
      .map(({ key, flags, value }) => `set ${key} ${flags} 0 ${value.length}\r\n${value}\r\n`)
      .join('');
    expect(await exchange(server.port, sets)).toBe(`${'STORED\r\n'.repeat(keys.length)}MN\r\n`);
    const blocks = (cas: string[] | undefined) =>
      items
        .map(
          ({ key, flags, value }, i) =>
            `VALUE ${key} ${flags} ${value.length}${cas ? ` ${present(cas[i])}` : ''}\r\n${value}\r\n`,
        )
        .join('');
    expect(await exchange(server.port, `get ${keys.join(' ')}\r\n`)).toBe(
      `${blocks(undefined)}END\r\nMN\r\n`,
    );
    const gets = await exchange(server.port, `gets ${keys.join(' ')}\r\n`);
    const cas = [...gets.matchAll(/^VALUE \S+ \d+ \d+ (\d+)\r$/gm)].map((m) => present(m[1]));
    expect(new Set(cas).size).toBe(keys.length);
    expect(gets).toBe(`${blocks(cas)}END\r\nMN\r\n`);
    for (const { key, flags, value } of items) {
      expect(await exchange(server.port, `get ${key}\r\n`)).toBe(
        `VALUE ${key} ${flags} ${value.length}\r\n${value}\r\nEND\r\nMN\r\n`,
      );
    }
  });

  it('listens on 127.0.0.1 unless told otherwise', async () => {
    const server = createServer({ port: 0 });
    servers.push(server);
    const address = await server.listen();
    expect(address.address).toBe('127.0.0.1');
    expect(server.settings.listen).toBe('127.0.0.1');
  });

  it('swallows the data of a too-large value so the connection stays in sync, and drops the old item', async () => {
    const server = await start({ itemSizeMax: 4096 });
    const big = 'x'.repeat(5000);
    const reply = await exchange(server.port, `set k 0 0 1\r\na\r\nset k 0 0 5000\r\n${big}\r\nget k\r\n`, 7);
    expect(reply).toBe('STORED\r\nSERVER_ERROR object too large for cache\r\nEND\r\nMN\r\n');
  });

  it('closes the connection without a reply on a 2 KB line without a newline, as memcached does', async () => {
    const server = await start();
    const reply = await exchange(server.port, `set ${'k'.repeat(3000)}`, 1, false);
    expect(reply).toBe('<closed>');
  });

  it('accepts a long multi-get line', async () => {
    const server = await start();
    const keys = Array.from({ length: 600 }, (_, i) => `key${i}`).join(' ');
    expect(await exchange(server.port, `set key599 0 0 1\r\nz\r\nget ${keys}\r\n`, 5)).toBe(
      'STORED\r\nVALUE key599 0 1\r\nz\r\nEND\r\nMN\r\n',
    );
  });

  it('stores values arriving in many fragments and pipelined commands in one packet', async () => {
    const server = await start();
    const value = Buffer.alloc(200_000, 'v').toString();
    const reply = await exchange(server.port, `set big 1 0 200000\r\n${value}\r\nget big\r\n`, 50);
    expect(reply).toBe(`STORED\r\nVALUE big 1 200000\r\n${value}\r\nEND\r\nMN\r\n`);
  });

  it('expires items by relative and absolute exptime, and flush_all with a delay', async () => {
    const server = await start();
    const past = Math.floor(Date.now() / 1000) - 10;
    const future = Math.floor(Date.now() / 1000) + 1000;
    expect(
      await exchange(
        server.port,
        `set a 0 ${past} 1\r\na\r\nset b 0 ${future} 1\r\nb\r\nset c 0 1000 1\r\nc\r\nget a b c\r\n`,
      ),
    ).toBe('STORED\r\nSTORED\r\nSTORED\r\nVALUE b 0 1\r\nb\r\nVALUE c 0 1\r\nc\r\nEND\r\nMN\r\n');
    expect(await exchange(server.port, 'flush_all 1\r\nget b\r\n')).toBe(
      'OK\r\nVALUE b 0 1\r\nb\r\nEND\r\nMN\r\n',
    );
    await new Promise((r) => setTimeout(r, 1100));
    expect(await exchange(server.port, 'get b c\r\n')).toBe('END\r\nMN\r\n');
  });

  it('refuses the connection over -c with memcached error line and keeps the others working', async () => {
    const server = await start({ maxConnections: 2 });
    const held: net.Socket[] = [];
    for (let i = 0; i < 2; i++) {
      const s = net.connect(server.port, '127.0.0.1');
      await new Promise((r) => s.once('connect', r));
      held.push(s);
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(await exchange(server.port, 'version\r\n')).toBe('ERROR Too many open connections\r\n<closed>');
    const first = present(held[0], 'a held connection');
    const reply = new Promise<string>((resolve) => first.once('data', (d) => resolve(d.toString())));
    first.write('set ok 0 0 1\r\n1\r\n');
    expect(await reply).toBe('STORED\r\n');
    for (const s of held) s.destroy();
    expect(server.cache.stats.rejectedConnections).toBe(1);
  });

  it('closes a connection over -c right after the error line, even when the client keeps its side open', async () => {
    const server = await start({ maxConnections: 1 });
    const held = net.connect(server.port, '127.0.0.1');
    await new Promise((r) => held.once('connect', r));
    // a client that never closes its side (allowHalfOpen): the server must not wait for it
    const extra = net.connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
    const received: Buffer[] = [];
    extra.on('data', (d) => received.push(d));
    await new Promise((r) => extra.once('end', r));
    expect(Buffer.concat(received).toString()).toBe('ERROR Too many open connections\r\n');
    // the server's socket is closed, not half-closed: what the client sends now is answered with
    // a reset (a half-closed socket would read and drop it for as long as the client likes)
    const reset = await new Promise<string>((resolve) => {
      extra.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      const probe = setInterval(() => {
        if (extra.destroyed) clearInterval(probe);
        else extra.write('version\r\n');
      }, 20);
      extra.once('close', () => clearInterval(probe));
    });
    expect(['ECONNRESET', 'EPIPE']).toContain(reset);
    held.destroy();
    expect(server.cache.stats.rejectedConnections).toBe(1);
  });

  it('gives each of many connections that send in the same turn its own replies, in order', async () => {
    const server = await start();
    const count = 40;
    const sockets = await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const s = net.connect(server.port, '127.0.0.1', () => resolve(s));
            s.on('error', reject);
          }),
      ),
    );
    const expected = sockets.map((socket, i) => {
      const value = `value-${i}-${'v'.repeat(i * 37)}`;
      return {
        socket,
        request: `set k${i} ${i} 0 ${value.length}\r\n${value}\r\nget k${i}\r\nget missing\r\nversion\r\n`,
        reply: `STORED\r\nVALUE k${i} ${i} ${value.length}\r\n${value}\r\nEND\r\nEND\r\nVERSION ${server.settings.version}\r\n`,
      };
    });
    const replies = expected.map(
      ({ socket, reply }) =>
        new Promise<string>((resolve) => {
          let got = '';
          socket.on('data', (chunk) => {
            got += chunk.toString('latin1');
            if (got.length >= reply.length) resolve(got);
          });
        }),
    );
    // all requests leave in one tick, so the server reads them in the same few event-loop turns
    for (const { socket, request } of expected) socket.write(request);
    expect(await Promise.all(replies)).toEqual(expected.map((e) => e.reply));
    for (const s of sockets) s.destroy();
  });

  it('closes idle connections after the idle timeout', async () => {
    const server = await start({ idleTimeoutSeconds: 1 });
    const s = net.connect(server.port, '127.0.0.1');
    const closed = await new Promise<boolean>((resolve) => {
      s.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 10_000);
    });
    expect(closed).toBe(true);
  });

  it('stops reading a client that does not read its replies (output cap), then serves every reply intact', async () => {
    const server = await start({ maxOutputBytes: 64 * 1024 });
    const value = Buffer.alloc(500_000, 'q');
    expect(
      await exchange(
        server.port,
        Buffer.concat([Buffer.from('set big 0 0 500000\r\n'), value, Buffer.from('\r\n')]),
      ),
    ).toBe('STORED\r\nMN\r\n');
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.pause();
    socket.write('get big\r\n'.repeat(200));
    await new Promise((r) => setTimeout(r, 800));
    const processedWhileBlocked = server.cache.stats.cmdGet;
    expect(processedWhileBlocked).toBeLessThan(100);
    const single = 'VALUE big 0 500000\r\n'.length + 500_002 + 'END\r\n'.length;
    let received = 0;
    await new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= single * 200) resolve();
      });
      socket.resume();
    });
    socket.destroy();
    expect(received).toBe(single * 200);
    expect(server.cache.stats.cmdGet).toBe(200);
  });

  it('reports stats counters', async () => {
    const server = await start();
    const reply = await exchange(server.port, 'set a 0 0 1\r\n1\r\nget a b\r\nincr a 5\r\nstats\r\n');
    expect(reply).toMatch(/STAT get_hits 1\r\n/);
    expect(reply).toMatch(/STAT get_misses 1\r\n/);
    expect(reply).toMatch(/STAT incr_hits 1\r\n/);
    expect(reply).toMatch(/STAT curr_items 1\r\n/);
    expect(reply).toMatch(/STAT threads 1\r\nSTAT bytes \d+\r\n/);
    const settings = await exchange(server.port, 'stats settings\r\nstats items\r\nstats slabs\r\n');
    expect(settings).toMatch(/STAT maxbytes 67108864\r\n/);
    expect(settings).toMatch(/STAT items:1:number 1\r\n/);
    expect(settings).toMatch(/STAT active_slabs 1\r\n/);
  });
});
