import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Client,
  createClient,
  createServer,
  HotpathMcError,
  type MemcachedServer,
} from '../src/index.js';
import { freePort, present, type RealMemcached, startRealMemcached } from './helpers.js';

/**
 * The same client scenarios in text and meta mode, against a real memcached and against
 * hotpath-memcached; results must be the same in both modes.
 */

const MB = 1024 * 1024;
const protocols = ['text', 'meta'] as const;
const p2 = (protocol: string, key: string) => `${protocol}:${key}`;

describe('Client in text and meta mode', () => {
  let real: RealMemcached;
  let ours: MemcachedServer;
  const targets: { name: string; port: () => number }[] = [
    { name: 'real memcached', port: () => real.port },
    { name: 'hotpath-memcached', port: () => ours.port },
  ];
  beforeAll(async () => {
    real = await startRealMemcached(['-I', '2m']);
    ours = createServer({ port: 0, itemSizeMax: 2 * MB });
    await ours.listen();
  });
  afterAll(async () => {
    await real?.stop();
    await ours?.close();
  });

  async function withClient(
    port: number,
    protocol: 'text' | 'meta',
    run: (client: Client) => Promise<void>,
    poolSize = 1,
  ) {
    const client = createClient({ servers: [`127.0.0.1:${port}`], protocol, poolSize, timeout: 20_000 });
    try {
      await run(client);
    } finally {
      client.close();
    }
  }

  for (const target of targets) {
    for (const protocol of protocols) {
      describe(`${protocol} mode against ${target.name}`, () => {
        const p = (key: string) => p2(protocol, key);

        it('runs every command with text-protocol results', async () => {
          await withClient(target.port(), protocol, async (client) => {
            expect(client.protocol).toBe(protocol);
            expect(await client.set(p('a'), 'hello', { flags: 9 })).toBe(true);
            expect(await client.get(p('a'))).toEqual({ key: p('a'), flags: 9, value: Buffer.from('hello') });
            expect(await client.get(p('missing'))).toBeUndefined();
            expect(await client.gets(p('missing'))).toBeUndefined();
            expect(await client.add(p('a'), 'x')).toBe(false);
            expect(await client.add(p('fresh'), 'x', { flags: 4294967295 })).toBe(true);
            expect((await client.get(p('fresh')))?.flags).toBe(4294967295);
            expect(await client.replace(p('nope'), 'x')).toBe(false);
            expect(await client.replace(p('a'), 'world', { flags: 3 })).toBe(true);
            expect(await client.append(p('a'), '!')).toBe(true);
            expect(await client.prepend(p('a'), '>')).toBe(true);
            expect(await client.append(p('nope'), '!')).toBe(false);
            expect(await client.prepend(p('nope'), '!')).toBe(false);
            const item = present(await client.gets(p('a')), 'gets a');
            const cas = present(item.cas, 'the cas of gets');
            expect(item).toEqual({ key: p('a'), flags: 3, value: Buffer.from('>world!'), cas });
            // the unique is the item's: the same on a second gets, and what a cas command matches
            expect((await client.gets(p('a')))?.cas).toBe(cas);
            expect(await client.cas(p('a'), '>world!', cas + 1n, { flags: 3 })).toBe('EXISTS');
            expect(await client.touch(p('a'), 100)).toBe(true);
            expect(await client.touch(p('nope'), 100)).toBe(false);
            expect(await client.gat(p('a'), 200)).toEqual({
              key: p('a'),
              flags: 3,
              value: Buffer.from('>world!'),
            });
            expect(await client.gat(p('nope'), 200)).toBeUndefined();
            expect(await client.delete(p('a'))).toBe(true);
            expect(await client.delete(p('a'))).toBe(false);
            expect(await client.set(p('gone'), 'x', { exptime: -1 })).toBe(true);
            expect(await client.get(p('gone'))).toBeUndefined();
            expect(Object.values(await client.version())[0]).toMatch(/^1\.6/);
            const stats = await client.stats();
            expect(Number(present(Object.values(stats)[0], "one server's stats").curr_items)).toBeGreaterThan(
              0,
            );
          });
        });

        it('reports cas conflicts as EXISTS and a cas on a missing key as NOT_FOUND', async () => {
          await withClient(target.port(), protocol, async (client) => {
            await client.set(p('c'), 'v1');
            const first = present((await client.gets(p('c')))?.cas, 'the first cas');
            const second = present((await client.gets(p('c')))?.cas, 'the second cas');
            expect(second).toBe(first);
            expect(await client.cas(p('c'), 'v2', first, { flags: 5 })).toBe('STORED');
            expect(await client.cas(p('c'), 'v3', second)).toBe('EXISTS');
            const now = present(await client.gets(p('c')), 'gets after the cas');
            expect(now.value.toString()).toBe('v2');
            expect(now.flags).toBe(5);
            const nowCas = present(now.cas, 'the new cas');
            expect(nowCas).not.toBe(first);
            await client.delete(p('c'));
            expect(await client.cas(p('c'), 'v4', nowCas)).toBe('NOT_FOUND');
          });
        });

        it('wraps incr at 2^64, floors decr at 0, misses and rejects non-numbers like text mode', async () => {
          await withClient(target.port(), protocol, async (client) => {
            await client.set(p('n'), '18446744073709551614');
            expect(await client.incr(p('n'), 1)).toBe(18446744073709551615n);
            expect(await client.incr(p('n'), 3)).toBe(2n);
            expect(await client.decr(p('n'), 5)).toBe(0n);
            expect(await client.incr(p('n'), 18446744073709551615n)).toBe(18446744073709551615n);
            expect(await client.incr(p('n'))).toBe(0n);
            expect(await client.incr(p('n'))).toBe(1n);
            await client.set(p('n'), '100');
            expect(await client.decr(p('n'), 1)).toBe(99n);
            expect((await client.get(p('n')))?.value.toString().trimEnd()).toBe('99');
            expect(await client.incr(p('nope'))).toBeUndefined();
            expect(await client.decr(p('nope'))).toBeUndefined();
            await client.set(p('word'), 'abc');
            await expect(client.incr(p('word'))).rejects.toMatchObject({
              code: 'HP_MC_SERVER_ERROR',
              message: expect.stringContaining('non-numeric'),
            });
            // the connection stays in step after an error reply
            expect(await client.incr(p('n'), 1)).toBe(100n);
          });
        });

        it('getMulti returns hits by key and leaves misses out', async () => {
          await withClient(target.port(), protocol, async (client) => {
            const keys = Array.from({ length: 300 }, (_, i) => p(`m${i}`));
            await Promise.all(
              keys.map((k, i) => (i % 3 === 0 ? client.delete(k) : client.set(k, `v-${k}`, { flags: i }))),
            );
            const asked = [...keys, p('never-set'), p('m1')];
            const got = await client.getMulti(asked);
            expect(got.size).toBe(200);
            keys.forEach((k, i) => {
              if (i % 3 === 0) expect(got.has(k)).toBe(false);
              else expect(got.get(k)).toEqual({ key: k, flags: i, value: Buffer.from(`v-${k}`) });
            });
            expect((await client.getMulti([p('never-set')])).size).toBe(0);
            expect((await client.getMulti([])).size).toBe(0);
          });
        });

        it('pipelines a thousand concurrent mixed requests on one connection in order', async () => {
          await withClient(target.port(), protocol, async (client) => {
            const n = 1000;
            const writes = await Promise.all(
              Array.from({ length: n }, (_, i) =>
                client.set(p(`pipe${i}`), `value-${i}`.repeat((i % 7) + 1)),
              ),
            );
            expect(writes.every(Boolean)).toBe(true);
            const mixed = await Promise.all(
              Array.from({ length: n }, (_, i) => {
                if (i % 4 === 0) return client.get(p(`pipe${i}`)).then((v) => v?.value.toString());
                if (i % 4 === 1) return client.get(p(`absent${i}`)).then((v) => v ?? 'miss');
                if (i % 4 === 2) return client.getMulti([p(`pipe${i}`), p(`absent${i}`)]).then((m) => m.size);
                return client.touch(p(`pipe${i}`), 0);
              }),
            );
            mixed.forEach((result, i) => {
              if (i % 4 === 0) expect(result).toBe(`value-${i}`.repeat((i % 7) + 1));
              else if (i % 4 === 1) expect(result).toBe('miss');
              else if (i % 4 === 2) expect(result).toBe(1);
              else expect(result).toBe(true);
            });
          });
        });

        it('stores and reads back a 1 MB value byte for byte, and rejects one over the limit', async () => {
          await withClient(target.port(), protocol, async (client) => {
            const big = Buffer.alloc(MB);
            for (let i = 0; i < big.length; i++) big[i] = (i * 31 + 7) & 0xff;
            expect(await client.set(p('big'), big, { flags: 1 })).toBe(true);
            const [one, many] = await Promise.all([
              client.get(p('big')),
              client.getMulti([p('big'), p('x')]),
            ]);
            expect(present(one, 'get big').value.equals(big)).toBe(true);
            expect(present(many.get(p('big')), 'big in getMulti').value.equals(big)).toBe(true);
            await expect(client.set(p('huge'), Buffer.alloc(3 * MB))).rejects.toMatchObject({
              code: 'HP_MC_SERVER_ERROR',
            });
            expect((await client.get(p('big')))?.flags).toBe(1);
          });
        });

        it('flush_all empties the cache', async () => {
          await withClient(target.port(), protocol, async (client) => {
            await client.set(p('f'), 'x');
            await client.flushAll();
            expect(await client.get(p('f'))).toBeUndefined();
          });
        });
      });
    }

    it(`text and meta clients see the same items and the same result shapes on ${target.name}`, async () => {
      await withClient(target.port(), 'text', async (text) => {
        await withClient(target.port(), 'meta', async (meta) => {
          await text.set('shared', 'from-text', { flags: 77 });
          expect(await meta.gets('shared')).toEqual(await text.gets('shared'));
          expect(await meta.get('shared')).toEqual(await text.get('shared'));
          expect(await meta.getMulti(['shared', 'nobody'])).toEqual(
            await text.getMulti(['shared', 'nobody']),
          );
          const cas = present((await meta.gets('shared'))?.cas, 'the cas of shared');
          expect(await text.cas('shared', 'by-text', cas)).toBe('STORED');
          expect(await meta.cas('shared', 'by-meta', cas)).toBe('EXISTS');
          // a latin1 key: text mode sends its byte, meta mode the same byte in base64
          expect(await text.set('caf\u00e9', 'latin1')).toBe(true);
          expect((await meta.get('caf\u00e9'))?.value.toString()).toBe('latin1');
        });
      });
    });

    it(`meta mode stores keys with spaces and non-latin1 characters (base64) on ${target.name}`, async () => {
      await withClient(target.port(), 'meta', async (client) => {
        const keys = ['with space', 'tab\there', '\u043a\u043b\u044e\u0447', 'new\r\nline'];
        for (const key of keys) expect(await client.set(key, `v:${key}`)).toBe(true);
        for (const key of keys) expect((await client.get(key))?.value.toString()).toBe(`v:${key}`);
        const got = await client.getMulti(keys);
        expect([...got.keys()].sort()).toEqual([...keys].sort());
        expect(await client.set('num key', '5')).toBe(true);
        expect(await client.incr('num key', 2)).toBe(7n);
        expect(await client.decr('num\u00a0key')).toBeUndefined();
        expect(await client.touch('num key', 100)).toBe(true);
        expect(await client.delete('with space')).toBe(true);
        expect(await client.get('with space')).toBeUndefined();
      });
    });
  }

  for (const protocol of protocols) {
    describe(`${protocol} mode when the server misbehaves`, () => {
      it('fails with HP_MC_CONNECT_FAILED on a closed port, then reconnects once the server is up', async () => {
        const port = await freePort();
        const client = createClient({
          servers: [`127.0.0.1:${port}`],
          protocol,
          timeout: 5000,
          retryDelay: 10,
        });
        try {
          await expect(client.get('k')).rejects.toMatchObject({ code: 'HP_MC_CONNECT_FAILED' });
          const server = createServer({ port });
          await server.listen();
          await new Promise((r) => setTimeout(r, 30));
          expect(await client.set('k', 'v')).toBe(true);
          expect((await client.getMulti(['k'])).get('k')?.value.toString()).toBe('v');
          await server.close();
          await expect(client.get('k')).rejects.toBeInstanceOf(HotpathMcError);
        } finally {
          client.close();
        }
      });

      it('times out with HP_MC_TIMEOUT when the server does not answer', async () => {
        const silent = net.createServer(() => {});
        await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
        const port = (silent.address() as net.AddressInfo).port;
        const client = createClient({ servers: [`127.0.0.1:${port}`], protocol, timeout: 200 });
        try {
          await expect(client.get('k')).rejects.toMatchObject({ code: 'HP_MC_TIMEOUT' });
          await expect(client.getMulti(['a', 'b'])).rejects.toMatchObject({ code: 'HP_MC_TIMEOUT' });
        } finally {
          client.close();
          silent.close();
        }
      });

      it('a server that dies halfway through a reply fails the requests in flight, then the client reconnects', async () => {
        const backend = createServer({ port: 0 });
        await backend.listen();
        let connections = 0;
        const sockets = new Set<net.Socket>();
        // The first connection gets half a reply, then the socket dies; later ones reach a real server.
        const flaky = net.createServer((socket) => {
          sockets.add(socket);
          if (connections++ === 0) {
            socket.once('data', () => {
              socket.write(protocol === 'meta' ? 'VA 10 f0\r\nabc' : 'VALUE k 0 10\r\nabc');
              setTimeout(() => socket.destroy(), 20);
            });
            return;
          }
          const upstream = net.connect(backend.port, '127.0.0.1');
          sockets.add(upstream);
          socket.pipe(upstream).pipe(socket);
          socket.on('error', () => upstream.destroy());
          upstream.on('error', () => socket.destroy());
        });
        await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
        const port = (flaky.address() as net.AddressInfo).port;
        const client = createClient({
          servers: [`127.0.0.1:${port}`],
          protocol,
          timeout: 10_000,
          retryDelay: 10,
        });
        try {
          const inFlight = [client.get('k'), client.set('k2', 'v'), client.getMulti(['a', 'b'])];
          for (const request of inFlight) {
            await expect(request).rejects.toMatchObject({ code: 'HP_MC_CONNECTION_CLOSED' });
          }
          expect(await client.set('k', 'after')).toBe(true);
          expect((await client.get('k'))?.value.toString()).toBe('after');
          expect(connections).toBe(2);
        } finally {
          client.close();
          for (const socket of sockets) socket.destroy();
          flaky.close();
          await backend.close();
        }
      });
    });
  }

  /** A TCP proxy to `port` that can misbehave: drip replies one byte per write, or answer garbage. */
  async function startProxy(port: number, mode: 'drip' | 'garbage') {
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((socket) => {
      sockets.add(socket);
      socket.setNoDelay(true);
      if (mode === 'garbage') {
        socket.on('data', () => socket.write('HELLO THERE\r\n'));
        return;
      }
      const upstream = net.connect(port, '127.0.0.1');
      sockets.add(upstream);
      socket.pipe(upstream);
      let queue = Buffer.alloc(0);
      let dripping = false;
      const drip = () => {
        if (queue.length === 0 || socket.destroyed) {
          dripping = false;
          return;
        }
        socket.write(queue.subarray(0, 1));
        queue = queue.subarray(1);
        setImmediate(drip);
      };
      upstream.on('data', (chunk: Buffer) => {
        queue = Buffer.concat([queue, chunk]);
        if (!dripping) {
          dripping = true;
          drip();
        }
      });
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    return {
      port: (proxy.address() as net.AddressInfo).port,
      close() {
        for (const socket of sockets) socket.destroy();
        proxy.close();
      },
    };
  }

  for (const protocol of protocols) {
    it(`${protocol} mode: replies that arrive one byte per write give the same results`, async () => {
      const proxy = await startProxy(ours.port, 'drip');
      try {
        await withClient(proxy.port, protocol, async (client) => {
          const value = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 13) & 0xff));
          expect(await client.set(p2(protocol, 'drip'), value, { flags: 6 })).toBe(true);
          await client.set(p2(protocol, 'n'), '41');
          const [got, gets, multi, miss, incr, touched] = await Promise.all([
            client.get(p2(protocol, 'drip')),
            client.gets(p2(protocol, 'drip')),
            client.getMulti([p2(protocol, 'nope'), p2(protocol, 'drip'), p2(protocol, 'n')]),
            client.get(p2(protocol, 'nope')),
            client.incr(p2(protocol, 'n')),
            client.touch(p2(protocol, 'nope'), 10),
          ]);
          expect(got).toEqual({ key: p2(protocol, 'drip'), flags: 6, value });
          expect(gets?.value.equals(value)).toBe(true);
          // the cas arrived whole: a positive unique that a second gets (no write between) repeats
          expect(present(gets?.cas, 'the cas of gets drip')).toBeGreaterThan(0n);
          expect((await client.gets(p2(protocol, 'drip')))?.cas).toBe(gets?.cas);
          expect([...multi.keys()].sort()).toEqual([p2(protocol, 'drip'), p2(protocol, 'n')]);
          expect(multi.get(p2(protocol, 'drip'))?.value.equals(value)).toBe(true);
          expect(miss).toBeUndefined();
          expect(incr).toBe(42n);
          expect(touched).toBe(false);
          expect(Object.values(await client.version())[0]).toMatch(/^1\.6/);
        });
      } finally {
        proxy.close();
      }
    });

    it(`${protocol} mode: a server answering garbage fails the request with HP_MC_PROTOCOL and drops the connection`, async () => {
      const proxy = await startProxy(ours.port, 'garbage');
      const client = createClient({ servers: [`127.0.0.1:${proxy.port}`], protocol, timeout: 10_000 });
      try {
        await expect(client.get('k')).rejects.toMatchObject({ code: 'HP_MC_PROTOCOL' });
        await expect(client.getMulti(['a', 'b'])).rejects.toMatchObject({ code: 'HP_MC_PROTOCOL' });
      } finally {
        client.close();
        proxy.close();
      }
    });
  }

  it('rejects an unknown protocol option with HP_MC_INVALID_OPTION', () => {
    expect(() => createClient({ servers: ['127.0.0.1:1'], protocol: 'binary' as 'text' })).toThrow(
      expect.objectContaining({ code: 'HP_MC_INVALID_OPTION', message: expect.stringContaining('"binary"') }),
    );
  });
});
