import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type MemcachedServer, SlabAllocator } from '../src/index.js';
import { exchange, freePort, present, startRealMemcached } from './helpers.js';

const HAVE_MEMCACHED = existsSync('/usr/bin/memcached');
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

/** `stats <group>` as a name -> value map. */
async function stats(port: number, group = ''): Promise<Map<string, string>> {
  const reply = await exchange(port, `stats${group === '' ? '' : ` ${group}`}\r\n`);
  const map = new Map<string, string>();
  for (const [, name, value] of reply.matchAll(/^STAT (\S+) (.*)\r$/gm))
    map.set(present(name), present(value));
  return map;
}

/** Sets `count` keys `<prefix><i>` with `size`-byte values (noreply), in batches. */
async function fill(port: number, prefix: string, count: number, size: number, exptime = 0): Promise<void> {
  const value = 'x'.repeat(size);
  for (let i = 0; i < count; i += 500) {
    let batch = '';
    for (let j = i; j < Math.min(count, i + 500); j++) {
      batch += `set ${prefix}${j} 0 ${exptime} ${size} noreply\r\n${value}\r\n`;
    }
    expect(await exchange(port, batch)).toBe('MN\r\n');
  }
}

/** The chunk sizes memcached prints with -vv for these flags. */
async function memcachedClasses(flags: string[]): Promise<number[]> {
  const port = await freePort();
  const root = process.getuid?.() === 0 ? ['-u', 'root'] : [];
  const child = spawn(
    '/usr/bin/memcached',
    ['-vv', '-p', String(port), '-l', '127.0.0.1', '-U', '0', ...root, ...flags],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let text = '';
  child.stderr.on('data', (d) => (text += d));
  await new Promise((r) => setTimeout(r, 400));
  child.kill('SIGKILL');
  return [...text.matchAll(/slab class\s+\d+: chunk size\s+(\d+)/g)].map((m) => Number(m[1]));
}

describe('slab storage', () => {
  it.skipIf(!HAVE_MEMCACHED).each([
    [[], {}],
    [['-f', '1.5', '-n', '32'], { growthFactor: 1.5, minChunkBytes: 32 }],
    [['-f', '2'], { growthFactor: 2 }],
  ] as [string[], { growthFactor?: number; minChunkBytes?: number }][])(
    'has the size classes of memcached %j',
    async (flags, options) => {
      const expected = await memcachedClasses(flags);
      expect(expected.length).toBeGreaterThan(5);
      const ours = new SlabAllocator({ limitBytes: 64 << 20, ...options }).classes.map((c) => c.chunkSize);
      expect(ours, `memcached ${flags.join(' ')}: ${expected.join(' ')}`).toEqual(expected);
    },
  );

  it.skipIf(!HAVE_MEMCACHED)(
    'reports pages and chunks in stats slabs and items as memcached does for the same items',
    async () => {
      const real = await startRealMemcached();
      try {
        const ours = await start();
        for (const port of [real.port, ours.port]) await fill(port, 'sl', 1000, 100);
        const theirs = await stats(real.port, 'slabs');
        const mine = await stats(ours.port, 'slabs');
        for (const name of ['active_slabs', 'total_malloced']) {
          expect(mine.get(name), `${name}: memcached ${theirs.get(name)}`).toBe(theirs.get(name));
        }
        const usedClass = (map: Map<string, string>) =>
          present(
            [...map.keys()].find((k) => k.endsWith(':used_chunks')),
            'a class with used chunks',
          ).split(':')[0];
        const cls = usedClass(mine);
        const theirCls = usedClass(theirs);
        for (const field of ['total_pages', 'used_chunks']) {
          expect(
            mine.get(`${cls}:${field}`),
            `${field}: memcached ${theirs.get(`${theirCls}:${field}`)}`,
          ).toBe(theirs.get(`${theirCls}:${field}`));
        }
        const chunk = Number(mine.get(`${cls}:chunk_size`));
        expect(Number(mine.get(`${cls}:chunks_per_page`))).toBe(Math.floor((1 << 20) / chunk));
        expect(Number(mine.get(`${cls}:free_chunks`))).toBe(Math.floor((1 << 20) / chunk) - 1000);
        const items = await stats(ours.port, 'items');
        expect(items.get(`items:${cls}:number`)).toBe('1000');
      } finally {
        await real.stop();
      }
    },
  );

  it('does not grow total_malloced when expired items are replaced by new ones of the same size', async () => {
    const server = await start({ sweepIntervalMs: 50 });
    await fill(server.port, 'old', 20_000, 100, 1);
    const before = await stats(server.port, 'slabs');
    expect(before.get('total_malloced')).toBe(String(3 << 20)); // 20 000 chunks of 152 bytes
    await new Promise((r) => setTimeout(r, 2200));
    await fill(server.port, 'new', 20_000, 100);
    const after = await stats(server.port, 'slabs');
    expect(after.get('total_malloced')).toBe(before.get('total_malloced'));
    expect((await stats(server.port)).get('curr_items')).toBe('20000');
  });

  it('evicts least recently used items of a class once the page budget (-m) is spent', async () => {
    const server = await start({ memoryMb: 2 });
    await fill(server.port, 'ev', 30_000, 100); // about 4.6 MB of 152-byte chunks
    const slabs = await stats(server.port, 'slabs');
    expect(Number(slabs.get('total_malloced'))).toBeLessThanOrEqual(2 << 20);
    const general = await stats(server.port);
    expect(Number(general.get('evictions'))).toBeGreaterThan(10_000);
    expect(await exchange(server.port, 'get ev0\r\n')).toBe('END\r\nMN\r\n');
    expect(await exchange(server.port, 'get ev29999\r\n')).toBe(
      `VALUE ev29999 0 100\r\n${'x'.repeat(100)}\r\nEND\r\nMN\r\n`,
    );
  });

  it('keeps an item larger than half a page in a buffer of its own, counted in total_malloced', async () => {
    const server = await start({ itemSizeMax: 2 << 20 });
    const value = 'L'.repeat(700_000);
    expect(await exchange(server.port, `set big 3 0 ${value.length}\r\n${value}\r\n`)).toBe(
      'STORED\r\nMN\r\n',
    );
    expect(await exchange(server.port, 'get big\r\n')).toBe(
      `VALUE big 3 700000\r\n${value}\r\nEND\r\nMN\r\n`,
    );
    const malloced = Number((await stats(server.port, 'slabs')).get('total_malloced'));
    expect(malloced).toBeGreaterThanOrEqual(700_000);
    expect(await exchange(server.port, 'delete big\r\n')).toBe('DELETED\r\nMN\r\n');
    expect(Number((await stats(server.port, 'slabs')).get('total_malloced'))).toBeLessThan(malloced);
  });
});
