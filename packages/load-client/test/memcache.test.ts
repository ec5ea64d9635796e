import { TextReplyParser } from '@hotpath/memcache-proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRun, run } from '../src/index.js';
import { MemcacheReplyParser } from '../src/memcache-protocol.js';
import { type Memcached, startMemcached } from './memcache.js';

describe('memcache replies', () => {
  it('parses VALUE blocks, misses, stores and errors however the bytes are split', () => {
    const text =
      'VALUE k 0 5\r\nhello\r\nEND\r\nEND\r\nSTORED\r\nNOT_STORED\r\nSERVER_ERROR out of memory\r\nCLIENT_ERROR bad\r\nERROR\r\n' +
      'VALUE k2 3 2 99\r\n\r\n\r\nEND\r\n';
    const all = Buffer.from(text);
    const cuts = [[all], [...all].map((b) => Buffer.from([b]))];
    for (let i = 1; i < all.length; i++) cuts.push([all.subarray(0, i), all.subarray(i)]);
    for (const chunks of cuts) {
      const statuses: number[] = [];
      const errors: string[] = [];
      const parser = new MemcacheReplyParser({
        onResponse: (status) => statuses.push(status),
        onParseError: (reason) => errors.push(reason),
      });
      // One reused buffer, overwritten between reads, as the connection does.
      const shared = Buffer.alloc(all.length);
      for (const chunk of chunks) {
        chunk.copy(shared);
        parser.execute(shared, chunk.length);
        shared.fill(0);
      }
      expect(errors).toEqual([]);
      expect(statuses).toEqual([200, 404, 201, 409, 500, 400, 500, 200]);
    }
  });

  it("classifies replies the same way as @hotpath/memcache-proto's TextReplyParser", () => {
    const stream = Buffer.from(
      'VALUE a 1 3\r\nabc\r\nEND\r\nEND\r\nSTORED\r\nNOT_STORED\r\nEXISTS\r\nNOT_FOUND\r\n' +
        'SERVER_ERROR object too large for cache\r\nCLIENT_ERROR bad data chunk\r\nERROR\r\n',
    );
    const ours: number[] = [];
    new MemcacheReplyParser({ onResponse: (status) => ours.push(status), onParseError: () => {} }).execute(
      stream,
      stream.length,
    );
    const theirs = new TextReplyParser().push(stream).map((reply) => {
      if (reply.type === 'values') return reply.values.length > 0 ? 200 : 404;
      if (reply.type === 'status')
        return { STORED: 201, NOT_STORED: 409, EXISTS: 409, NOT_FOUND: 410 }[reply.status as string];
      if (reply.type === 'error') return reply.kind === 'CLIENT_ERROR' ? 400 : 500;
      return -1;
    });
    expect(ours).toEqual(theirs);
    expect(ours).toHaveLength(9);
  });

  it('reports a reply that is not memcache as a parse error', () => {
    const errors: string[] = [];
    const parser = new MemcacheReplyParser({ onResponse: () => {}, onParseError: (r) => errors.push(r) });
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\n'), 17);
    expect(errors).toHaveLength(1);
  });
});

describe.each(['memcached', 'hotpath-memcached'] as const)('memcache:// against a real %s', (kind) => {
  let memcached: Memcached;
  beforeAll(async () => {
    memcached = await startMemcached(kind);
  });
  afterAll(async () => {
    await memcached?.stop();
  });

  it('sends exactly `amount` gets, all hits after the preload', async () => {
    const before = await memcached.stats();
    const result = await run({
      url: memcached.url,
      amount: 5000,
      connections: 4,
      pipelining: 4,
      memcache: { operation: 'get', keySpace: 500, keyPrefix: 'full:' },
    });
    const after = await memcached.stats();
    expect(result.requests.total).toBe(5000);
    expect(result.statusCodes).toEqual({ hit: 5000 });
    expect(result.non2xx).toBe(0);
    const delta = (stat: string) => (after[stat] ?? Number.NaN) - (before[stat] ?? Number.NaN);
    expect(delta('cmd_get')).toBe(5000);
    // The preload stored the 500 keys.
    expect(delta('cmd_set')).toBe(500);
  });

  it('with preload false sends only the load: no sets, and the keys an earlier run stored still hit', async () => {
    const memcache = { operation: 'get' as const, keySpace: 300, keyPrefix: 'again:' };
    await run({ url: memcached.url, amount: 300, connections: 2, memcache });
    const before = await memcached.stats();
    const result = await run({
      url: memcached.url,
      amount: 3000,
      connections: 2,
      memcache: { ...memcache, preload: false },
    });
    const after = await memcached.stats();
    expect((after.cmd_set ?? Number.NaN) - (before.cmd_set ?? Number.NaN)).toBe(0);
    expect((after.cmd_get ?? Number.NaN) - (before.cmd_get ?? Number.NaN)).toBe(3000);
    expect(result.statusCodes).toEqual({ hit: 3000 });
    expect(() =>
      createRun({ url: memcached.url, memcache: { preload: 'no' as unknown as boolean } }),
    ).toThrow(/memcache preload.*expected true or false/);
  });

  it('gets about the hit ratio asked for', async () => {
    const result = await run({
      url: memcached.url,
      amount: 4000,
      connections: 2,
      memcache: { operation: 'get', keySpace: 2000, hitRatio: 0.5, keyPrefix: 'half:' },
    });
    const hits = result.statusCodes.hit ?? 0;
    expect(hits + (result.statusCodes.miss ?? 0)).toBe(4000);
    expect(hits / 4000).toBeGreaterThan(0.4);
    expect(hits / 4000).toBeLessThan(0.6);
  });

  it('sets values of the given size and mixes gets and sets', async () => {
    const sets = await run({
      url: memcached.url,
      amount: 1000,
      connections: 2,
      memcache: { operation: 'set', keySpace: 100, valueSize: 1000, keyPrefix: 'set:' },
    });
    expect(sets.statusCodes).toEqual({ stored: 1000 });
    const mix = await run({
      url: memcached.url,
      amount: 2000,
      connections: 2,
      memcache: { operation: 'mix', setRatio: 0.25, keySpace: 100, keyPrefix: 'mix:' },
    });
    const stored = mix.statusCodes.stored ?? 0;
    expect(stored + (mix.statusCodes.hit ?? 0) + (mix.statusCodes.miss ?? 0)).toBe(2000);
    expect(stored / 2000).toBeGreaterThan(0.15);
    expect(stored / 2000).toBeLessThan(0.35);
  });
});
