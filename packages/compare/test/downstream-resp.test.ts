import { describe, expect, it } from 'vitest';
import { RespCounter } from '../src/measure/probe-downstream-resp.js';

// The probe counts Redis commands in a client's writes and replies in the server's data (RESP2
// and RESP3), so that on a connection every request shares, each reply ends its own command.
// Drivers split and join values at any byte: every test here also feeds its stream one byte at a
// time and in every two-piece split, and must count the same.

const command = (...args: string[]) =>
  `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;

/** Top-level values started and completed over the chunks, fed in order to one counter. */
function count(chunks: (string | Uint8Array)[]): { started: number; completed: number } {
  const counter = new RespCounter();
  let started = 0;
  let completed = 0;
  for (const chunk of chunks) {
    counter.feed(chunk);
    started += counter.started;
    completed += counter.completed;
  }
  return { started, completed };
}

/** The counts of `stream` whole, byte by byte, and split in two at every point. */
function everySplit(stream: string): { started: number; completed: number }[] {
  const bytes = Buffer.from(stream, 'utf8');
  const results = [count([stream]), count([...bytes].map((b) => Uint8Array.of(b)))];
  for (let at = 1; at < bytes.length; at++) results.push(count([bytes.subarray(0, at), bytes.subarray(at)]));
  return results;
}

function expectEverySplit(stream: string, expected: { started: number; completed: number }) {
  for (const result of everySplit(stream)) expect(result).toEqual(expected);
}

describe('RespCounter', () => {
  it('counts commands in writes, whatever their bodies hold', () => {
    // a body holding CRLF, `*` and `$` is skipped by its length, not read
    const writes = [command('GET', 'item:1'), command('SET', 'k', '*2\r\n$3\r\nfoo'), command('PING')];
    expectEverySplit(writes.join(''), { started: 3, completed: 3 });
  });

  it('reads a string write by its UTF-8 bytes (a body of multi-byte characters)', () => {
    const write = command('SET', 'name', 'Zoë — ✓ 𝄞') + command('GET', 'name');
    expectEverySplit(write, { started: 2, completed: 2 });
  });

  it('counts each reply once, nested and null ones too (RESP2)', () => {
    const replies = [
      '+OK\r\n',
      '-ERR wrong type\r\n',
      ':42\r\n',
      '$5\r\nhello\r\n',
      '$-1\r\n',
      '$0\r\n\r\n',
      '*-1\r\n',
      '*0\r\n',
      '*3\r\n$1\r\na\r\n*2\r\n:1\r\n$-1\r\n+x\r\n',
    ];
    expectEverySplit(replies.join(''), { started: replies.length, completed: replies.length });
  });

  it('RESP3: maps, sets, doubles and blob errors are replies; pushes and attributes are not', () => {
    const replies = [
      '%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n:2\r\n',
      '~2\r\n+x\r\n+y\r\n',
      ',3.14\r\n',
      '_\r\n',
      '#t\r\n',
      '(12345678901234567890\r\n',
      '!9\r\nERR oops!\r\n',
      '=9\r\ntxt:hello\r\n',
    ];
    const push = '>3\r\n+message\r\n+channel\r\n$2\r\nhi\r\n';
    const attribute = '|1\r\n+ttl\r\n:3600\r\n';
    const stream = `${replies[0]}${push}${attribute}${replies.slice(1).join('')}`;
    for (const result of everySplit(stream)) expect(result.completed).toBe(replies.length);
  });

  it('counts an inline command as one', () => {
    expectEverySplit('PING\r\nECHO hi\r\n', { started: 2, completed: 2 });
  });

  it('ignores what is no chunk', () => {
    expect(count([undefined as unknown as string])).toEqual({ started: 0, completed: 0 });
  });
});
