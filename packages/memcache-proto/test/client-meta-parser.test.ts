import { describe, expect, it } from 'vitest';
import {
  encodeMetaArithmetic,
  encodeMetaDelete,
  encodeMetaGet,
  encodeMetaGetMulti,
  encodeMetaSet,
  HotpathMcError,
  type MetaParserReply,
  type MetaReply,
  MetaReplyParser,
  metaKeyToken,
} from '../src/index.js';
import { present } from './helpers.js';

function meta(code: MetaReply['code'], fields: Partial<MetaReply> = {}): MetaReply {
  return {
    type: 'meta-reply',
    code,
    value: undefined,
    flags: undefined,
    cas: undefined,
    ttl: undefined,
    size: undefined,
    opaque: undefined,
    key: undefined,
    base64Key: false,
    win: false,
    stale: false,
    winSent: false,
    ...fields,
  };
}

const stream = Buffer.from(
  'HD\r\nVA 5 f9 c18446744073709551615\r\nhe\r\no\r\nEN\r\nNS\r\nEX\r\nNF\r\n' +
    'VA 0 O7 t-1 s0\r\n\r\nHD c12 kZm9vIGJhcg== b W X Z h0 l3\r\nEN Oabc\r\n' +
    'VA 2\r\n17\r\nMN\r\nOK\r\nVERSION 1.6.18\r\nSTAT pid 1\r\nSTAT version 1.6.18\r\nEND\r\nEND\r\n' +
    'ERROR\r\nCLIENT_ERROR bad command line format\r\nSERVER_ERROR out of memory storing object\r\n' +
    'ME foo exp=-1 la=2 cas=3\r\nHD\n',
);

const expected: MetaParserReply[] = [
  meta('HD'),
  meta('VA', { value: Buffer.from('he\r\no'), flags: 9, cas: 18446744073709551615n }),
  meta('EN'),
  meta('NS'),
  meta('EX'),
  meta('NF'),
  meta('VA', { value: Buffer.alloc(0), opaque: 7, ttl: -1, size: 0 }),
  meta('HD', { cas: 12n, key: 'Zm9vIGJhcg==', base64Key: true, win: true, stale: true, winSent: true }),
  meta('EN', { opaque: -1 }),
  meta('VA', { value: Buffer.from('17') }),
  meta('MN'),
  { type: 'status', status: 'OK' },
  { type: 'version', version: '1.6.18' },
  { type: 'stats', stats: { pid: '1', version: '1.6.18' } },
  { type: 'stats', stats: {} },
  { type: 'error', kind: 'ERROR', message: '' },
  { type: 'error', kind: 'CLIENT_ERROR', message: 'bad command line format' },
  { type: 'error', kind: 'SERVER_ERROR', message: 'out of memory storing object' },
  meta('ME'),
  meta('HD'),
];

function protocolError(input: string | Buffer, options = {}): HotpathMcError | undefined {
  const parser = new MetaReplyParser(options);
  try {
    parser.push(typeof input === 'string' ? Buffer.from(input, 'latin1') : input);
  } catch (error) {
    return error as HotpathMcError;
  }
  return undefined;
}

describe('MetaReplyParser', () => {
  it('parses a pipelined stream of every reply kind in one chunk', () => {
    expect(new MetaReplyParser().push(stream)).toEqual(expected);
  });

  it('parses the same stream split at every point, and fed one byte at a time', () => {
    for (let cut = 1; cut < stream.length; cut++) {
      const parser = new MetaReplyParser();
      const replies = [...parser.push(stream.subarray(0, cut)), ...parser.push(stream.subarray(cut))];
      expect(replies).toEqual(expected);
    }
    const seen: MetaParserReply[] = [];
    const parser = new MetaReplyParser({ onReply: (reply) => seen.push(reply) });
    for (let i = 0; i < stream.length; i++) {
      // a copy, so the parser cannot lean on the bytes around the one it is given
      parser.push(Buffer.from(stream.subarray(i, i + 1)));
    }
    expect(seen).toEqual(expected);
    expect(parser.replies).toBe(expected.length);
    expect(parser.buffered).toBe(0);
  });

  it('gathers a 1 MB value arriving in many chunks, and the reply after it', () => {
    const value = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < value.length; i++) value[i] = (i * 7) & 0xff;
    const wire = Buffer.concat([
      Buffer.from(`VA ${value.length} f3 O1\r\n`),
      value,
      Buffer.from('\r\nMN\r\n'),
    ]);
    const parser = new MetaReplyParser();
    const replies: MetaParserReply[] = [];
    for (let i = 0; i < wire.length; i += 65_536) replies.push(...parser.push(wire.subarray(i, i + 65_536)));
    expect(replies).toHaveLength(2);
    const first = replies[0] as MetaReply;
    expect(first.flags).toBe(3);
    expect(first.opaque).toBe(1);
    expect(present(first.value, 'the VA value').equals(value)).toBe(true);
    expect((replies[1] as MetaReply).code).toBe('MN');
    expect(parser.buffered).toBe(0);
  });

  it.each([
    ['an unknown line', 'HELLO\r\n'],
    ['a lowercase code', 'hd\r\n'],
    ['a code glued to a flag', 'HDc1\r\n'],
    ['VA without a size', 'VA\r\n'],
    ['VA with a negative size', 'VA -1\r\n'],
    ['VA with a non-numeric size', 'VA x1 f0\r\n'],
    ['VA with an 11-digit size', 'VA 99999999999\r\n'],
    ['a data block longer than announced', 'VA 2\r\nabcd\r\n'],
    ['a data block without CRLF', 'VA 1\r\nabc'],
    ['a non-numeric flags token', 'HD fzz\r\n'],
    ['an out-of-range flags token', 'HD f4294967296\r\n'],
    ['a non-numeric cas token', 'HD c-5\r\n'],
    ['a cas above 64 bits', 'HD c18446744073709551616\r\n'],
    ['a bad ttl token', 'HD t1x\r\n'],
    ['a control byte as a flag', 'HD \u0001\r\n'],
    ['a bare number (text incr reply)', '42\r\n'],
    ['a text VALUE line', 'VALUE k 0 1\r\nx\r\nEND\r\n'],
  ])('rejects %s with HP_MC_PROTOCOL', (_name, input) => {
    const error = protocolError(input);
    expect(error).toBeInstanceOf(HotpathMcError);
    expect(error?.code).toBe('HP_MC_PROTOCOL');
  });

  it('rejects a line that never ends and a value over the limit instead of buffering forever', () => {
    const parser = new MetaReplyParser({ maxLineBytes: 1024 });
    parser.push(Buffer.alloc(1000, 65));
    expect(() => parser.push(Buffer.alloc(100, 65))).toThrow(/longer than 1024 bytes/);
    expect(protocolError('VA 2000 f1\r\n', { maxValueBytes: 1999 })?.code).toBe('HP_MC_PROTOCOL');
  });

  it('either parses or throws HP_MC_PROTOCOL on random and truncated input, never anything else', () => {
    let seed = 12345;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return seed;
    };
    const alphabet = Buffer.from('VAHDENFSXMOcfkbtsWZ0123456789 -\r\n\r\n');
    let thrown = 0;
    for (let round = 0; round < 2000; round++) {
      const length = random() % 60;
      const input = Buffer.alloc(length);
      for (let i = 0; i < length; i++) {
        input[i] = random() % 4 === 0 ? random() & 0xff : present(alphabet[random() % alphabet.length]);
      }
      const parser = new MetaReplyParser();
      try {
        for (let i = 0; i < input.length; ) {
          const step = 1 + (random() % 5);
          parser.push(input.subarray(i, i + step));
          i += step;
        }
      } catch (error) {
        expect(error).toBeInstanceOf(HotpathMcError);
        expect((error as HotpathMcError).code).toBe('HP_MC_PROTOCOL');
        thrown++;
      }
      expect(parser.buffered).toBeLessThanOrEqual(length);
    }
    expect(thrown).toBeGreaterThan(100);
    for (let cut = 0; cut < stream.length; cut++) {
      const parser = new MetaReplyParser();
      expect(parser.push(stream.subarray(0, cut)).length).toBeLessThanOrEqual(expected.length);
    }
  });
});

describe('meta encoders', () => {
  it('encode mg, ms, md, ma and a quiet getMulti pipeline exactly', () => {
    expect(encodeMetaGet('k', { value: true, flags: true, cas: true }).toString()).toBe('mg k v f c\r\n');
    expect(encodeMetaGet('k', { touch: 30, opaque: 5, quiet: true }).toString()).toBe('mg k T30 O5 q\r\n');
    expect(encodeMetaSet('k', Buffer.from('v\r\n'), { flags: 7, exptime: 60 }).toString()).toBe(
      'ms k 3 F7 T60\r\nv\r\n\r\n',
    );
    expect(encodeMetaSet('k', 'x', { mode: 'cas', cas: 12n }).toString()).toBe('ms k 1 C12\r\nx\r\n');
    expect(encodeMetaSet('k', 'x', { mode: 'add' }).toString()).toBe('ms k 1 ME\r\nx\r\n');
    expect(encodeMetaSet('k', 'x', { mode: 'append', flags: 3, exptime: 9 }).toString()).toBe(
      'ms k 1 MA\r\nx\r\n',
    );
    expect(encodeMetaSet('a b', 'x', { mode: 'replace' }).toString()).toBe('ms YSBi 1 b MR\r\nx\r\n');
    expect(encodeMetaDelete('k').toString()).toBe('md k\r\n');
    expect(
      encodeMetaArithmetic('k', { mode: 'decr', delta: 18446744073709551615n, value: true }).toString(),
    ).toBe('ma k v MD D18446744073709551615\r\n');
    expect(encodeMetaGetMulti(['a', 'b c'], { value: true, flags: true }).toString()).toBe(
      'mg a v f O0 q\r\nmg YiBj b v f O1 q\r\nmn\r\n',
    );
  });

  it('sends keys that are not printable ASCII as base64 with the b flag', () => {
    expect(metaKeyToken('plain-key_1')).toBe('plain-key_1');
    expect(metaKeyToken('a b')).toBe(`${Buffer.from('a b').toString('base64')} b`);
    expect(metaKeyToken('\u00e9')).toBe(`${Buffer.from([0xe9]).toString('base64')} b`);
    expect(metaKeyToken('\u043a\u043b\u044e\u0447')).toBe(
      `${Buffer.from('\u043a\u043b\u044e\u0447', 'utf8').toString('base64')} b`,
    );
    expect(metaKeyToken('x'.repeat(250))).toBe('x'.repeat(250));
  });

  it('reject bad keys and options with codes', () => {
    expect(() => encodeMetaGet('')).toThrow(expect.objectContaining({ code: 'HP_MC_INVALID_KEY' }));
    expect(() => encodeMetaGet('k'.repeat(251))).toThrow(/1 to 250 bytes, got 251/);
    expect(encodeMetaGet('\u00e9'.repeat(249) + ' ').toString()).toBe(
      `mg ${Buffer.from('\u00e9'.repeat(249) + ' ', 'latin1').toString('base64')} b\r\n`,
    );
    expect(() => encodeMetaGet('\u044f'.repeat(126))).toThrow(/got 252 bytes/);
    expect(() => encodeMetaSet('k', 'v', { flags: -1 })).toThrow(/flags must be an integer/);
    expect(() => encodeMetaSet('k', 'v', { mode: 'cas' })).toThrow(/64-bit unsigned cas/);
    expect(() => encodeMetaArithmetic('k', { delta: -1 })).toThrow(/unsigned 64-bit/);
    expect(() => encodeMetaGetMulti([])).toThrow(/at least one key/);
  });
});

describe('the built package exports the meta client parts', () => {
  it('resolves MetaReplyParser and the meta encoders by package name', async () => {
    const mod = await import('@hotpath/memcache-proto');
    expect(mod.encodeMetaGet('k', { value: true }).toString()).toBe('mg k v\r\n');
    const [reply] = new mod.MetaReplyParser().push(Buffer.from('VA 1 f2\r\nx\r\n'));
    expect(reply).toMatchObject({ type: 'meta-reply', code: 'VA', flags: 2, value: Buffer.from('x') });
    expect(new mod.Client({ servers: ['127.0.0.1:1'], protocol: 'meta' }).protocol).toBe('meta');
  });
});
