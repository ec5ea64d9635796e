import { describe, expect, it } from 'vitest';
import {
  encodeDelete,
  encodeGet,
  encodeIncr,
  encodeSet,
  encodeStore,
  type TextReply,
  TextReplyParser,
} from '../src/index.js';

const stream = Buffer.from(
  'STORED\r\nVALUE a 5 3\r\nabc\r\nVALUE b 0 2 77\r\n\r\n\r\nEND\r\nEND\r\n42\r\nNOT_FOUND\r\nDELETED\r\n' +
    'STAT pid 1\r\nSTAT version 1.6\r\nEND\r\nVERSION 1.6.18\r\nERROR\r\nCLIENT_ERROR bad data chunk\r\n' +
    'SERVER_ERROR object too large for cache\r\nHD c1 t-1\r\nVA 2 f3\r\nhi\r\nEN\r\nMN\r\n',
);

const expected: TextReply[] = [
  { type: 'status', status: 'STORED' },
  {
    type: 'values',
    values: [
      { key: 'a', flags: 5, value: Buffer.from('abc') },
      { key: 'b', flags: 0, value: Buffer.from('\r\n'), cas: 77n },
    ],
  },
  { type: 'values', values: [] },
  { type: 'number', value: 42n },
  { type: 'status', status: 'NOT_FOUND' },
  { type: 'status', status: 'DELETED' },
  { type: 'stats', stats: { pid: '1', version: '1.6' } },
  { type: 'version', version: '1.6.18' },
  { type: 'error', kind: 'ERROR', message: '' },
  { type: 'error', kind: 'CLIENT_ERROR', message: 'bad data chunk' },
  { type: 'error', kind: 'SERVER_ERROR', message: 'object too large for cache' },
  { type: 'meta', code: 'HD', flags: ['c1', 't-1'] },
  { type: 'meta', code: 'VA', flags: ['f3'], value: Buffer.from('hi') },
  { type: 'meta', code: 'EN', flags: [] },
  { type: 'meta', code: 'MN', flags: [] },
];

describe('TextReplyParser', () => {
  it('parses a pipelined stream in one chunk', () => {
    expect(new TextReplyParser().push(stream)).toEqual(expected);
  });

  it('parses the same stream split at every possible point, and byte by byte', () => {
    for (let cut = 1; cut < stream.length; cut++) {
      const parser = new TextReplyParser();
      const replies = [...parser.push(stream.subarray(0, cut)), ...parser.push(stream.subarray(cut))];
      expect(replies).toEqual(expected);
    }
    const seen: TextReply[] = [];
    const parser = new TextReplyParser({ onReply: (r) => seen.push(r) });
    for (let i = 0; i < stream.length; i++) parser.push(stream.subarray(i, i + 1));
    expect(seen).toEqual(expected);
    expect(parser.replies).toBe(expected.length);
    expect(parser.buffered).toBe(0);
  });

  it('rejects bytes that are not protocol with HP_MC_PROTOCOL', () => {
    expect(() => new TextReplyParser().push(Buffer.from('HELLO\r\n'))).toThrow(
      expect.objectContaining({ name: 'HotpathMcError', code: 'HP_MC_PROTOCOL' }),
    );
  });

  // found by test/fuzz-properties.test.ts: a VALUE line whose cas (or flags) is not a number
  // threw a bare SyntaxError from BigInt instead of HP_MC_PROTOCOL
  it.each([
    'VALUE bb 0 2 \u0000000000000\r\nxx\r\nEND\r\n',
    'VALUE bb 0 2 12x\r\nxx\r\nEND\r\n',
    'VALUE bb x 2\r\nxx\r\nEND\r\n',
  ])('rejects a VALUE line with a bad cas or flags token with HP_MC_PROTOCOL: %j', (line) => {
    expect(() => new TextReplyParser().push(Buffer.from(line, 'latin1'))).toThrow(
      expect.objectContaining({ name: 'HotpathMcError', code: 'HP_MC_PROTOCOL' }),
    );
  });
});

describe('text encoders', () => {
  it('encode get, set, store, delete and incr exactly', () => {
    expect(encodeGet('a').toString()).toBe('get a\r\n');
    expect(encodeGet(['a', 'b']).toString()).toBe('get a b\r\n');
    expect(encodeSet('k', Buffer.from('v\r\n'), 7, 60).toString()).toBe('set k 7 60 3\r\nv\r\n\r\n');
    expect(encodeStore('cas', 'k', 'x', { cas: 12n, noreply: true }).toString()).toBe(
      'cas k 0 0 1 12 noreply\r\nx\r\n',
    );
    expect(encodeDelete('k').toString()).toBe('delete k\r\n');
    expect(encodeIncr('k', 18446744073709551615n).toString()).toBe('incr k 18446744073709551615\r\n');
  });

  it('reject bad keys and values with codes', () => {
    expect(() => encodeGet('a b')).toThrow(/must not contain spaces/);
    expect(() => encodeGet('k'.repeat(251))).toThrow(/1 to 250 bytes, got 251/);
    expect(() => encodeSet('k', 'v', -1)).toThrow(/flags must be an integer from 0 to 4294967295, got -1/);
    expect(() => encodeIncr('k', -1)).toThrow(/unsigned 64-bit/);
  });
});

// Issue #67: the text reply parser had no line cap and no value cap, and concatenated its whole
// buffer with every chunk (20 MiB without a newline: all of it buffered, 6.5 s). It refuses past
// the limits now, as the meta parser does, holding at most the limit.
describe('TextReplyParser limits', () => {
  const MiB = 1024 * 1024;
  const refusal = (run: () => unknown): Error => {
    try {
      run();
    } catch (err) {
      return err as Error;
    }
    throw new Error('expected HP_MC_PROTOCOL');
  };

  it('refuses 20 MiB without a newline once past 64 KiB, never holding more', () => {
    const parser = new TextReplyParser();
    const chunk = Buffer.alloc(16 * 1024, 'a');
    let fed = 0;
    let most = 0;
    const err = refusal(() => {
      for (; fed < 20 * MiB; fed += chunk.length) {
        parser.push(chunk);
        most = Math.max(most, parser.buffered);
      }
    });
    expect(err).toMatchObject({ code: 'HP_MC_PROTOCOL' });
    expect(err.message).toContain('reply line longer than 65536 bytes (maxLineBytes)');
    expect(fed).toBeLessThanOrEqual(64 * 1024);
    expect(most).toBeLessThanOrEqual(64 * 1024);
  });

  it('refuses one 20 MiB chunk without a newline, and one with a newline at its end', () => {
    const big = Buffer.alloc(20 * MiB, 'a');
    expect(refusal(() => new TextReplyParser().push(big))).toMatchObject({ code: 'HP_MC_PROTOCOL' });
    big[big.length - 1] = 10;
    const err = refusal(() => new TextReplyParser().push(big));
    expect(err.message).toContain(`${20 * MiB - 1} bytes`);
  });

  it('a line in many parts is one line; a line past maxLineBytes in parts is refused', () => {
    const parser = new TextReplyParser({ maxLineBytes: 16 });
    expect(parser.push(Buffer.from('NOT_'))).toEqual([]);
    expect(parser.push(Buffer.from('FOU'))).toEqual([]);
    expect(parser.push(Buffer.from('ND\r\nSTO'))).toEqual([{ type: 'status', status: 'NOT_FOUND' }]);
    expect(parser.buffered).toBe(3);
    expect(refusal(() => parser.push(Buffer.from('RED but much longer')))).toMatchObject({
      code: 'HP_MC_PROTOCOL',
    });
  });

  it('refuses a VALUE or VA larger than maxValueBytes at its header, naming the size', () => {
    const parser = new TextReplyParser({ maxValueBytes: 1000 });
    const err = refusal(() => parser.push(Buffer.from('VALUE k 0 1001\r\n')));
    expect(err).toMatchObject({ code: 'HP_MC_PROTOCOL' });
    expect(err.message).toContain('1001 bytes is larger than 1000 bytes (maxValueBytes)');
    expect(refusal(() => new TextReplyParser().push(Buffer.from('VALUE k 0 2000000000\r\n')))).toMatchObject({
      code: 'HP_MC_PROTOCOL',
    });
    expect(refusal(() => new TextReplyParser().push(Buffer.from('VA 99999999999 f1\r\n')))).toMatchObject({
      code: 'HP_MC_PROTOCOL',
    });
    expect(refusal(() => new TextReplyParser().push(Buffer.from('VALUE k 0 1e3\r\n')))).toMatchObject({
      code: 'HP_MC_PROTOCOL',
    });
  });

  it('gathers a value split over a thousand chunks once, and checks the CRLF after it', () => {
    const value = Buffer.alloc(MiB, 'v');
    const stream = Buffer.concat([Buffer.from('VALUE k 1 1048576\r\n'), value, Buffer.from('\r\nEND\r\n')]);
    const parser = new TextReplyParser();
    const replies: TextReply[] = [];
    for (let at = 0; at < stream.length; at += 1049)
      replies.push(...parser.push(stream.subarray(at, at + 1049)));
    expect(replies).toHaveLength(1);
    const reply = replies[0];
    expect(reply?.type === 'values' && reply.values[0]?.value.equals(value)).toBe(true);
    expect(parser.buffered).toBe(0);
    const bad = refusal(() => new TextReplyParser().push(Buffer.from('VALUE k 0 2\r\nabXY\r\nEND\r\n')));
    expect(bad.message).toContain('not followed by CRLF');
  });

  it('quotes a bad line with every byte outside printable ASCII escaped (C1 controls included)', () => {
    const err = refusal(() =>
      new TextReplyParser().push(Buffer.from('BOGUS \u009b2J\u001b]0;x\u0007"\r\n', 'latin1')),
    );
    expect(err.message).toBe('unexpected reply line "BOGUS \\x9b2J\\x1b]0;x\\x07\\""');
  });
});
