import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createServer,
  HotpathMcError,
  type MemcachedServer,
  MetaReplyParser,
  TextReplyParser,
} from '../src/index.js';
import { exchange } from './helpers.js';

// Property-based fuzzing of the three server parsers (text, meta, binary) and the two client
// reply parsers, with fast-check: generated command streams, split at arbitrary points, and
// mutated (bytes flipped, inserted, dropped, the stream cut short). Fixed seeds and bounded
// runs keep the suite fast and every failure replayable; a failure found becomes a named
// regression case below.

// A hunt for new failures runs more, from other seeds: FUZZ_SEED=<n> FUZZ_SCALE=<k> vitest run …
const SEED = Number(process.env.FUZZ_SEED ?? 28_2026);
const SCALE = Math.max(1, Number(process.env.FUZZ_SCALE ?? 1));

// ---- generated text and meta command streams ----

// the longest stays a valid key (250 bytes at most) with the run's prefix in front
const keyArb = fc.constantFrom('a', 'bb', 'key:1', 'k'.repeat(236), 'n1', 'ÿ');
/** Data blocks, as latin1 strings (so a counterexample prints readably). */
const dataArb = fc.oneof(
  {
    arbitrary: fc.uint8Array({ minLength: 0, maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')),
    weight: 9,
  },
  // big enough that a multi-key get of a few of them pauses at the output batch mark
  { arbitrary: fc.integer({ min: 20_000, max: 60_000 }).map((n) => `<${n} z>`), weight: 1 },
);
/** Expands `<n z>` (a big data block written short) to n bytes of z. */
const expand = (text: string) => text.replace(/<(\d+) z>/g, (_m, n: string) => 'z'.repeat(Number(n)));
const size = (data: string) => expand(data).length;
const flagsArb = fc.constantFrom(0, 1, 4294967295);
/** Where a command names a key, it writes `$` + key; the stream gives each run a prefix of its own there. */
const P = '$';

/** One valid text or meta command whose reply does not depend on cas values or the clock. */
const commandArb: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({
      cmd: fc.constantFrom('set', 'add', 'replace', 'append', 'prepend'),
      key: keyArb,
      flags: flagsArb,
      data: dataArb,
      noreply: fc.boolean(),
    })
    .map(
      ({ cmd, key, flags, data, noreply }) =>
        `${cmd} ${P}${key} ${flags} 0 ${size(data)}${noreply ? ' noreply' : ''}\r\n${data}\r\n`,
    ),
  fc
    .array(keyArb, { minLength: 1, maxLength: 12 })
    .map((keys) => `get ${keys.map((k) => P + k).join(' ')}\r\n`),
  keyArb.map((key) => `delete ${P}${key}\r\n`),
  fc
    .record({ cmd: fc.constantFrom('incr', 'decr'), key: keyArb, by: fc.bigInt(0n, 2n ** 64n - 1n) })
    .map(({ cmd, key, by }) => `${cmd} ${P}${key} ${by}\r\n`),
  keyArb.map((key) => `touch ${P}${key} 1000\r\n`),
  fc
    .record({ key: keyArb, flags: fc.subarray(['v', 'f', 's', 'k', 'q', 'O9']) })
    .map(({ key, flags }) => `mg ${P}${key} ${flags.join(' ')}\r\n`),
  fc
    .record({
      key: keyArb,
      data: dataArb,
      mode: fc.constantFrom('', ' MS', ' ME', ' MA', ' MP', ' MR'),
      f: flagsArb,
    })
    .map(({ key, data, mode, f }) => `ms ${P}${key} ${size(data)} F${f}${mode}\r\n${data}\r\n`),
  keyArb.map((key) => `md ${P}${key}\r\n`),
  fc
    .record({ key: keyArb, mode: fc.constantFrom('', ' MI', ' MD'), n: fc.constantFrom('', ' N0', ' J5') })
    .map(({ key, mode, n }) => `ma ${P}${key} v${mode}${n}\r\n`),
  fc.constant('mn\r\n'),
  fc.constant('version\r\n'),
);

/** The stream's bytes, its keys under `prefix`. */
const bytesOf = (commands: string[], prefix: string) =>
  Buffer.from(expand(commands.join('')).replaceAll(P, prefix), 'latin1');

const streamArb = fc.array(commandArb, { minLength: 1, maxLength: 25 });

/** Cut points of a buffer of length n (sorted, distinct, inside it). */
function splitAt(buf: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % Math.max(1, buf.length)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let last = 0;
  for (const p of points) {
    if (p > last) pieces.push(buf.subarray(last, p));
    last = Math.max(last, p);
  }
  pieces.push(buf.subarray(last));
  return pieces;
}

/**
 * Writes the pieces one event-loop turn apart (so the server sees them as separate reads),
 * half-closes, and resolves with everything the server sent before it closed.
 */
function sendPieces(port: number, pieces: Buffer[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('the server neither answered nor closed within 10 s'));
    }, 10_000);
    socket.on('data', (d) => got.push(d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(got));
    });
    socket.on('connect', async () => {
      for (const piece of pieces) {
        if (socket.destroyed) return;
        socket.write(piece);
        await new Promise((r) => setTimeout(r, 1));
      }
      socket.end();
    });
  });
}

// ---- mutation of a byte stream ----

type Mutation = { at: number; kind: 'flip' | 'insert' | 'drop'; byte: number };
const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom('flip', 'insert', 'drop'),
  byte: fc.constantFrom(0, 10, 13, 32, 0x80, 0xff, 48, 57, 97),
});

function mutate(buf: Buffer, mutations: Mutation[], cut: number | null): Buffer {
  const bytes = [...buf];
  for (const m of mutations) {
    if (bytes.length === 0) break;
    const at = m.at % bytes.length;
    if (m.kind === 'flip') bytes[at] = m.byte;
    else if (m.kind === 'insert') bytes.splice(at, 0, m.byte);
    else bytes.splice(at, 1);
  }
  const out = Buffer.from(bytes);
  return cut === null ? out : out.subarray(0, cut % (out.length + 1));
}

// ---- binary requests ----

/** A binary request (memcached's protocol_binary.h layout). */
function binaryRequest(opcode: number, key: Buffer, extras: Buffer, value: Buffer, opaque: number): Buffer {
  const header = Buffer.alloc(24);
  header[0] = 0x80;
  header[1] = opcode;
  header.writeUInt16BE(key.length, 2);
  header[4] = extras.length;
  header.writeUInt32BE(extras.length + key.length + value.length, 8);
  header.writeUInt32BE(opaque, 12);
  return Buffer.concat([header, extras, key, value]);
}

const binaryArb: fc.Arbitrary<Buffer> = fc
  .record({
    opcode: fc.integer({ min: 0, max: 0x25 }),
    key: fc.uint8Array({ maxLength: 40 }),
    extras: fc.constantFrom(0, 4, 8, 20),
    value: fc.uint8Array({ maxLength: 200 }),
    opaque: fc.nat(),
  })
  .map(({ opcode, key, extras, value, opaque }) =>
    binaryRequest(opcode, Buffer.from(key), Buffer.alloc(extras, 1), Buffer.from(value), opaque),
  );

/** Splits a binary response stream into responses; throws when it is not well framed. */
function binaryResponses(buf: Buffer): number {
  let pos = 0;
  let count = 0;
  while (pos < buf.length) {
    if (buf[pos] !== 0x81) throw new Error(`byte ${pos} of the reply is ${buf[pos]}, not a response magic`);
    if (buf.length - pos < 24) throw new Error(`a response header cut at ${buf.length - pos} bytes`);
    const body = buf.readUInt32BE(pos + 8);
    const keyLength = buf.readUInt16BE(pos + 2);
    const extras = buf[pos + 4] ?? 0;
    if (keyLength + extras > body) throw new Error('a response whose key and extras exceed its body');
    pos += 24 + body;
    count++;
  }
  if (pos !== buf.length) throw new Error('a response body cut short');
  return count;
}

// ---- the server under test ----

let server: MemcachedServer;
const VICTIM = 'victim-value-'.repeat(20);
beforeAll(async () => {
  server = createServer({ port: 0, itemSizeMax: 64 * 1024, maxInputBytes: 256 * 1024, log: () => {} });
  await server.listen();
  expect(await exchange(server.port, `set victim 5 0 ${VICTIM.length}\r\n${VICTIM}\r\n`)).toBe(
    'STORED\r\nMN\r\n',
  );
});
afterAll(async () => {
  await server?.close();
});

/** The victim item (stored by another connection) is unchanged and the server still serves. */
async function serverIsWhole(): Promise<void> {
  expect(await exchange(server.port, 'get victim\r\n')).toBe(
    `VALUE victim 5 ${VICTIM.length}\r\n${VICTIM}\r\nEND\r\nMN\r\n`,
  );
}

let run = 0;
/** A key prefix of its own for every stream, so that streams do not see each other's items. */
const prefix = () => `r${run++}:`;

describe('fuzz properties: server parsers', () => {
  it(
    'text and meta: the reply to a command stream does not depend on how it is split into reads',
    async () => {
      await fc.assert(
        fc.asyncProperty(streamArb, fc.array(fc.nat(), { maxLength: 12 }), async (commands, cuts) => {
          const a = prefix();
          const b = prefix().replace(/^r\d+/, (m) => `r${'0'.repeat(a.length - m.length - 1)}${m.slice(1)}`);
          const whole = bytesOf(commands, a);
          const split = bytesOf(commands, b);
          expect(split.length).toBe(whole.length);
          const one = await sendPieces(server.port, [whole]);
          const many = await sendPieces(server.port, splitAt(split, cuts));
          const manyText = many.toString('latin1').replaceAll(b, a);
          const oneText = one.toString('latin1');
          if (manyText !== oneText) {
            let at = 0;
            while (manyText[at] === oneText[at]) at++;
            expect(
              `split: ${JSON.stringify(manyText.slice(Math.max(0, at - 80), at + 80))}`,
              `replies differ at byte ${at} of ${oneText.length} / ${manyText.length}`,
            ).toBe(`whole: ${JSON.stringify(oneText.slice(Math.max(0, at - 80), at + 80))}`);
          }
        }),
        { seed: SEED, numRuns: 60 * SCALE },
      );
      await serverIsWhole();
    },
    60_000 * SCALE,
  );

  it(
    'text and meta: a mutated or cut stream is answered or closed, never crashes or corrupts',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          streamArb,
          fc.array(mutationArb, { minLength: 1, maxLength: 6 }),
          fc.option(fc.nat()),
          fc.array(fc.nat(), { maxLength: 6 }),
          async (commands, mutations, cut, cuts) => {
            const stream = mutate(bytesOf(commands, prefix()), mutations, cut);
            await sendPieces(server.port, splitAt(stream, cuts));
          },
        ),
        { seed: SEED + 1, numRuns: 80 * SCALE },
      );
      await serverIsWhole();
    },
    60_000 * SCALE,
  );

  it(
    'binary: generated and mutated requests get well-framed responses, never a crash',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(binaryArb, { minLength: 1, maxLength: 12 }),
          fc.array(mutationArb, { maxLength: 4 }),
          fc.array(fc.nat(), { maxLength: 6 }),
          async (requests, mutations, cuts) => {
            const stream = Buffer.concat(requests);
            const reply = await sendPieces(server.port, splitAt(mutate(stream, mutations, null), cuts));
            if (mutations.length === 0) binaryResponses(reply);
          },
        ),
        { seed: SEED + 2, numRuns: 80 * SCALE },
      );
      await serverIsWhole();
    },
    60_000 * SCALE,
  );
});

// ---- the client reply parsers ----

const textReplyArb = fc.oneof(
  fc
    .array(fc.record({ key: keyArb, flags: flagsArb, data: dataArb, cas: fc.option(fc.nat()) }), {
      maxLength: 4,
    })
    .map((values) =>
      Buffer.concat([
        ...values.map((v) =>
          Buffer.from(
            `VALUE ${v.key} ${v.flags} ${size(v.data)}${v.cas === null ? '' : ` ${v.cas}`}\r\n${expand(v.data)}\r\n`,
            'latin1',
          ),
        ),
        Buffer.from('END\r\n'),
      ]),
    ),
  fc
    .constantFrom(
      'STORED',
      'NOT_STORED',
      'EXISTS',
      'NOT_FOUND',
      'DELETED',
      'TOUCHED',
      'OK',
      'ERROR',
      'CLIENT_ERROR bad',
      'SERVER_ERROR oom',
      'VERSION 1.6.18',
    )
    .map((s) => Buffer.from(`${s}\r\n`)),
  fc.bigInt(0n, 2n ** 64n - 1n).map((n) => Buffer.from(`${n}\r\n`)),
  fc
    .array(fc.tuple(fc.constantFrom('pid', 'uptime', 'curr_items'), fc.nat()), { maxLength: 4 })
    .map((lines) => Buffer.from(`${lines.map(([k, v]) => `STAT ${k} ${v}\r\n`).join('')}END\r\n`)),
);

const metaReplyArb = fc.oneof(
  fc
    .record({ data: dataArb, flags: fc.subarray(['f5', 's3', 'c77', 'O12', 'kabc', 't-1']) })
    .map(({ data, flags }) =>
      Buffer.from(`VA ${size(data)}${flags.map((f) => ` ${f}`).join('')}\r\n${expand(data)}\r\n`, 'latin1'),
    ),
  fc
    .tuple(fc.constantFrom('HD', 'EN', 'NF', 'NS', 'EX', 'MN'), fc.subarray(['O1', 'kx', 'c3']))
    .map(([code, flags]) => Buffer.from(`${code}${flags.map((f) => ` ${f}`).join('')}\r\n`)),
);

/** Parses pieces in order; returns the replies (as JSON, values as hex) or the error thrown. */
function parseAll(make: () => { push(b: Buffer): unknown[] }, pieces: Buffer[]): string {
  const parser = make();
  const replies: unknown[] = [];
  try {
    for (const piece of pieces) replies.push(...parser.push(piece));
  } catch (error) {
    if (!(error instanceof HotpathMcError) || error.code !== 'HP_MC_PROTOCOL') throw error;
    return `error after ${replies.length}`;
  }
  return JSON.stringify(replies, (_k, v) =>
    typeof v === 'bigint' ? `${v}n` : v?.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v,
  );
}

describe.each([
  ['TextReplyParser', () => new TextReplyParser(), textReplyArb],
  ['MetaReplyParser', () => new MetaReplyParser(), metaReplyArb],
] as const)('fuzz properties: %s', (_name, make, replyArb) => {
  it('parses a reply stream the same however it is split', () => {
    fc.assert(
      fc.property(
        fc.array(replyArb, { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (replies, cuts) => {
          const stream = Buffer.concat(replies);
          const whole = parseAll(make, [stream]);
          expect(whole).not.toMatch(/^error/);
          expect(JSON.parse(whole)).toHaveLength(replies.length);
          expect(parseAll(make, splitAt(stream, cuts))).toBe(whole);
        },
      ),
      { seed: SEED + 3, numRuns: 300 * SCALE },
    );
  });

  it('on mutated bytes either parses or throws HP_MC_PROTOCOL, nothing else', () => {
    fc.assert(
      fc.property(
        fc.array(replyArb, { minLength: 1, maxLength: 8 }),
        fc.array(mutationArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (replies, mutations, cuts) => {
          parseAll(make, splitAt(mutate(Buffer.concat(replies), mutations, null), cuts));
        },
      ),
      { seed: SEED + 4, numRuns: 300 * SCALE },
    );
  });
});
