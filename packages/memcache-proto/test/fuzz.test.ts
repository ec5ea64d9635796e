import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MemcachedServer } from '../src/index.js';
import { exchange, present } from './helpers.js';

/** mulberry32: a small seeded PRNG so a failing seed can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COMMANDS = [
  'get',
  'gets',
  'gat',
  'set',
  'add',
  'cas',
  'append',
  'incr',
  'decr',
  'delete',
  'touch',
  'mg',
  'ms',
  'ma',
  'md',
  'mn',
  'stats',
  'version',
  'verbosity',
];

/** Random input: protocol-shaped commands on fuzz keys, truncated, mixed with raw bytes and binary headers. */
function fuzzInput(rand: () => number): Buffer {
  const parts: Buffer[] = [];
  const pick = <T>(xs: readonly T[]) => present(xs[Math.floor(rand() * xs.length)]);
  const count = 1 + Math.floor(rand() * 12);
  for (let i = 0; i < count; i++) {
    const r = rand();
    if (r < 0.5) {
      const key = `f${Math.floor(rand() * 20)}${rand() < 0.05 ? 'x'.repeat(260) : ''}`;
      const n = pick([0, 1, 5, 100, -1, 2_000_000, 4294967296]);
      const tokens = [
        pick(COMMANDS),
        key,
        pick(['0', '1', '-1', 'abc', '99999999999']),
        pick(['0', '10', '-5']),
        String(n),
      ];
      let line = tokens.slice(0, 1 + Math.floor(rand() * tokens.length)).join(pick([' ', '  ', '\t']));
      if (rand() < 0.3) line += pick([' noreply', ' v k c t', ' q O123 b', ' N30 J5 MD']);
      parts.push(Buffer.from(`${line}${pick(['\r\n', '\n', '\r', ''])}`));
      if (n > 0 && n < 1000 && rand() < 0.7) parts.push(Buffer.alloc(n + pick([0, 2, 2, 2, 3]), 'd'));
    } else if (r < 0.8) {
      const bytes = Buffer.alloc(Math.floor(rand() * 300));
      for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(rand() * 256);
      parts.push(bytes);
    } else if (r < 0.9) {
      const header = Buffer.alloc(24 + Math.floor(rand() * 40));
      for (let j = 0; j < header.length; j++) header[j] = Math.floor(rand() * 256);
      header[0] = 0x80;
      header[1] = Math.floor(rand() * 0x26);
      parts.push(header);
    } else {
      parts.push(Buffer.alloc(Math.floor(rand() * 5000), pick(['a', ' ', '\r'])));
    }
  }
  const all = Buffer.concat(parts);
  return rand() < 0.3 ? all.subarray(0, Math.floor(rand() * all.length)) : all;
}

function blast(port: number, input: Buffer, rand: () => number): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, 2000);
    socket.on('error', done);
    socket.on('close', done);
    socket.on('data', () => {});
    socket.on('connect', async () => {
      let pos = 0;
      while (pos < input.length && !socket.destroyed) {
        const size = 1 + Math.floor(rand() * 700);
        socket.write(input.subarray(pos, pos + size));
        pos += size;
        if (rand() < 0.3) await new Promise((r) => setImmediate(r));
      }
      if (rand() < 0.5) done();
      else socket.end();
    });
  });
}

describe.each([
  ['shared input buffer', true],
  ['a Buffer per read', false],
])('fuzz: random and truncated input (%s)', (_mode, sharedInputBuffer) => {
  let server: MemcachedServer;
  const victim = Array.from(
    { length: 50 },
    (_, i) => [`victim-${i}`, `value-${i}-${'z'.repeat(i * 7)}`] as const,
  );
  beforeAll(async () => {
    server = createServer({ port: 0, itemSizeMax: 64 * 1024, idleTimeoutSeconds: 30, sharedInputBuffer });
    await server.listen();
    const request = victim.map(([k, v]) => `set ${k} 7 0 ${v.length}\r\n${v}\r\n`).join('');
    expect(await exchange(server.port, request)).toBe(`${'STORED\r\n'.repeat(victim.length)}MN\r\n`);
  });
  afterAll(async () => {
    await server?.close();
  });

  const randomSeed = Math.floor(Math.random() * 2 ** 31);
  it.each([
    ['fixed', 12345],
    ['random', randomSeed],
  ])(
    '%s seed %i: the server never crashes and never corrupts another connection’s items',
    async (_kind, seed) => {
      console.log(`fuzz seed ${seed} (replay: set it as the fixed seed)`);
      const rand = prng(seed);
      for (let round = 0; round < 15; round++) {
        await Promise.all(Array.from({ length: 10 }, () => blast(server.port, fuzzInput(rand), rand)));
      }
      const keys = victim.map(([k]) => k).join(' ');
      const expected = victim.map(([k, v]) => `VALUE ${k} 7 ${v.length}\r\n${v}\r\n`).join('');
      expect(await exchange(server.port, `get ${keys}\r\n`)).toBe(`${expected}END\r\nMN\r\n`);
      expect(await exchange(server.port, 'set after 0 0 2\r\nok\r\nget after\r\n')).toBe(
        'STORED\r\nVALUE after 0 2\r\nok\r\nEND\r\nMN\r\n',
      );
    },
  );

  it('closes a connection whose buffered input exceeds the per-connection cap', async () => {
    const capped = createServer({ port: 0, maxInputBytes: 8192, sharedInputBuffer });
    await capped.listen();
    try {
      const reply = await exchange(capped.port, `get ${'k '.repeat(10_000)}`, 4, false);
      expect(reply).toBe('SERVER_ERROR input buffer full\r\n<closed>');
    } finally {
      await capped.close();
    }
  });
});
