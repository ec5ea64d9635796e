import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createServer, KetamaRing, type MemcachedServer } from '../src/index.js';

/** Several servers, pools and the ketama ring (single-server scenarios: client-meta.test.ts). */
describe('Client', () => {
  let ours: MemcachedServer;
  beforeAll(async () => {
    ours = createServer({ port: 0 });
    await ours.listen();
  });
  afterAll(async () => {
    await ours?.close();
  });

  for (const protocol of ['text', 'meta'] as const) {
    it(`${protocol} mode: spreads keys over several servers by ketama and reads them back`, async () => {
      const second = createServer({ port: 0 });
      await second.listen();
      const servers = [`127.0.0.1:${ours.port}`, `127.0.0.1:${second.port}`];
      const client = createClient({ servers, protocol });
      try {
        const keys = Array.from({ length: 200 }, (_, i) => `${protocol}-spread${i}`);
        await Promise.all(keys.map((k) => client.set(k, k)));
        expect(second.cache.store.size).toBeGreaterThan(40);
        expect(second.cache.store.size).toBeLessThan(160);
        const all = await client.getMulti(keys);
        expect(all.size).toBe(200);
        for (const key of keys) expect(all.get(key)?.value.toString()).toBe(key);
        // each key sits on the server the ring names for it
        const onSecond = keys.filter((k) => client.serverFor(k) === servers[1]);
        expect(onSecond.length).toBe(second.cache.store.size);
      } finally {
        client.close();
        await second.close();
      }
    });

    it(`${protocol} mode: a pool opens poolSize connections and spreads requests over them`, async () => {
      const server = createServer({ port: 0 });
      await server.listen();
      const client = createClient({ servers: [`127.0.0.1:${server.port}`], protocol, poolSize: 3 });
      try {
        const results = await Promise.all(Array.from({ length: 30 }, (_, i) => client.set(`pool${i}`, 'v')));
        expect(results.every(Boolean)).toBe(true);
        expect(server.connections).toBe(3);
        expect((await client.getMulti(['pool0', 'pool29'])).size).toBe(2);
      } finally {
        client.close();
        await server.close();
      }
    });
  }

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
