import { describe, expect, it } from 'vitest';
import { splitFields } from '../src/log-fields.js';
import { defined } from './helpers/defined.js';
import { prng } from './helpers/prng.js';

/**
 * The splitting rule spelled out on a string: fields end at commas; a field that starts with a
 * quote runs to its closing quote ("" inside is an escaped quote) before looking for the comma;
 * a comma at the very end leaves an empty last field; at most `max` fields, the last one then
 * takes the rest of the line.
 */
function reference(line: string, max: number): [number, number][] {
  const fields: [number, number][] = [];
  let pos = 0;
  for (;;) {
    if (fields.length === max - 1) {
      fields.push([pos, line.length]);
      return fields;
    }
    let p = pos;
    if (line[p] === '"') {
      p++;
      while (p < line.length && !(line[p] === '"' && line[p + 1] !== '"')) p += line[p] === '"' ? 2 : 1;
    }
    const comma = line.indexOf(',', Math.min(p, line.length));
    if (comma === -1) {
      fields.push([pos, line.length]);
      return fields;
    }
    fields.push([pos, comma]);
    pos = comma + 1;
    if (pos === line.length) {
      if (fields.length < max) fields.push([pos, pos]);
      return fields;
    }
  }
}

function split(line: string, max: number, padding = 0): [number, number][] {
  // The line sits inside a larger buffer, with commas around it that must not count.
  const buf = Buffer.from(`${','.repeat(padding)}${line}${','.repeat(padding)}`, 'latin1');
  const starts = new Int32Array(max);
  const ends = new Int32Array(max);
  const n = splitFields(buf, padding, padding + line.length, starts, ends);
  return Array.from(starts.subarray(0, n), (start, i) => [
    start - padding,
    defined(ends[i], 'an end') - padding,
  ]);
}

describe('splitFields', () => {
  it('splits as the rule spelled out does, on random lines with quotes, escapes and empty fields', () => {
    const rand = prng(7);
    const alphabet = ['a', '0', 'x', ',', ',', '"', '""', '\\x2C', ' '];
    for (let k = 0; k < 3000; k++) {
      let line = '';
      const length = Math.floor(rand() * 24);
      for (let i = 0; i < length; i++) line += alphabet[Math.floor(rand() * alphabet.length)];
      const max = 1 + Math.floor(rand() * 8);
      expect(split(line, max, k % 3), JSON.stringify({ line, max })).toEqual(reference(line, max));
    }
  });

  it('reads the fields of real log lines', () => {
    const line = 'code-creation,JS,0,1234,0x7f00,96,"handle a,b" /srv/app.js:4:16,0x1a,~';
    const fields = split(line, 16).map(([s, e]) => line.slice(s, e));
    expect(fields).toEqual([
      'code-creation',
      'JS',
      '0',
      '1234',
      '0x7f00',
      '96',
      '"handle a,b" /srv/app.js:4:16',
      '0x1a',
      '~',
    ]);
    expect(split('tick,0x1,2,', 8)).toEqual([
      [0, 4],
      [5, 8],
      [9, 10],
      [11, 11],
    ]);
    expect(split('', 4)).toEqual([[0, 0]]);
  });
});
