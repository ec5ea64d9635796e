import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  createServer,
  HotpathMcError,
  KetamaRing,
  type MemcachedServer,
} from '../src/index.js';
import { freePort, type RealMemcached, startRealMemcached } from './helpers.js';

describe('Client', () => {
  let real: RealMemcached;
  let ours: MemcachedServer;
  beforeAll(async () => {
    real = await startRealMemcached();
    ours = createServer({ port: 0 });
    await ours.listen();
  });
  afterAll(async () => {
    await real?.stop();
    await ours?.close();
  });

  for (const target of ['real memcached', 'hotpath-memcached']) {
    it(`runs every command against ${target}`, async () => {
      const port = target === 'real memcached' ? real.port : ours.port;
      const client = createClient({ servers: [`127.0.0.1:${port}`], poolSize: 2, timeout: 10_000 });
      try {
        expect(await client.set('a', 'hello', { flags: 9 })).toBe(true);
        expect((await client.get('a'))?.value.toString()).toBe('hello');
        expect((await client.get('a'))?.flags).toBe(9);
        expect(await client.get('missing')).toBeUndefined();
        expect(await client.add('a', 'x')).toBe(false);
        expect(await client.replace('a', 'world')).toBe(true);
        expect(await client.append('a', '!')).toBe(true);
        expect(await client.prepend('a', '>')).toBe(true);
        const item = await client.gets('a');
        expect(item?.value.toString()).toBe('>world!');
        expect(await client.cas('a', 'new', item!.cas!)).toBe('STORED');
        expect(await client.cas('a', 'newer', item!.cas!)).toBe('EXISTS');
        expect(await client.set('n', '18446744073709551614')).toBe(true);
        expect(await client.incr('n', 3)).toBe(1n);
        expect(await client.decr('n', 5)).toBe(0n);
        expect(await client.incr('nope')).toBeUndefined();
        expect(await client.touch('a', 100)).toBe(true);
        expect((await client.gat('a', 200))?.value.toString()).toBe('new');
        expect(await client.delete('a')).toBe(true);
        expect(await client.delete('a')).toBe(false);
        // pipelining: many requests in flight on the same connections
        const keys = Array.from({ length: 500 }, (_, i) => `p${i}`);
        await Promise.all(keys.map((k) => client.set(k, `v-${k}`)));
        const values = await Promise.all(keys.map((k) => client.get(k)));
        expect(values.map((v) => v?.value.toString())).toEqual(keys.map((k) => `v-${k}`));
        const multi = await client.getMulti(['p1', 'p2', 'zz']);
        expect([...multi.keys()].sort()).toEqual(['p1', 'p2']);
        const stats = await client.stats();
        expect(Number(Object.values(stats)[0]!.curr_items)).toBeGreaterThan(500);
        expect(Object.values(await client.version())[0]).toMatch(/^1\.6/);
        await client.flushAll();
        expect(await client.get('p1')).toBeUndefined();
      } finally {
        client.close();
      }
    });
  }

  it('spreads keys over several servers by ketama and reads them back', async () => {
    const second = createServer({ port: 0 });
    await second.listen();
    const client = createClient({ servers: [`127.0.0.1:${ours.port}`, `127.0.0.1:${second.port}`] });
    try {
      const keys = Array.from({ length: 200 }, (_, i) => `spread${i}`);
      await Promise.all(keys.map((k) => client.set(k, k)));
      expect(ours.cache.store.size).toBeGreaterThan(40);
      expect(second.cache.store.size).toBeGreaterThan(40);
      const all = await client.getMulti(keys);
      expect(all.size).toBe(200);
    } finally {
      client.close();
      await second.close();
    }
  });

  it('fails with HP_MC_CONNECT_FAILED on a closed port, then reconnects once the server is up', async () => {
    const port = await freePort();
    const client = createClient({ servers: [`127.0.0.1:${port}`], timeout: 5000, retryDelay: 10 });
    try {
      await expect(client.get('k')).rejects.toMatchObject({ code: 'HP_MC_CONNECT_FAILED' });
      const server = createServer({ port });
      await server.listen();
      await new Promise((r) => setTimeout(r, 30));
      expect(await client.set('k', 'v')).toBe(true);
      await server.close();
      await expect(client.get('k')).rejects.toBeInstanceOf(HotpathMcError);
    } finally {
      client.close();
    }
  });

  it('times out with HP_MC_TIMEOUT when the server does not answer', async () => {
    const net = await import('node:net');
    const silent = net.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const client = createClient({ servers: [`127.0.0.1:${port}`], timeout: 200 });
    try {
      await expect(client.get('k')).rejects.toMatchObject({ code: 'HP_MC_TIMEOUT' });
    } finally {
      client.close();
      silent.close();
    }
  });

  it('ketama ring is stable: adding a server moves only a share of the keys', () => {
    const two = new KetamaRing([
      { host: '10.0.0.1', port: 11211 },
      { host: '10.0.0.2', port: 11211 },
    ]);
    const three = new KetamaRing([
      { host: '10.0.0.1', port: 11211 },
      { host: '10.0.0.2', port: 11211 },
      { host: '10.0.0.3', port: 11211 },
    ]);
    let moved = 0;
    for (let i = 0; i < 3000; i++) {
      const a = two.serverFor(`key${i}`);
      const b = three.serverFor(`key${i}`);
      if (a !== b) {
        moved++;
        expect(b).toBe(2);
      }
    }
    expect(moved).toBeGreaterThan(600);
    expect(moved).toBeLessThan(1400);
    expect(KetamaRing.hash('foo')).toBe(Buffer.from('acbd18db', 'hex').readUInt32LE(0));
  });
});
