// Issue #46: a results file's key with terminal escapes reached the `::error::` line raw. The
// report stage's errors are printable (compare's printable()), and logSafe escapes the same set.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as core from '@actions/core';
import type { HotpathCompareError } from '@hotpath/compare';
import { printable } from '@hotpath/compare/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readShards } from '../../compare/src/shard/file.js';
import { logSafe, safeLines } from '../src/log.js';

/** Sets the terminal's title (OSC … BEL), then erases the line (CSI 2K). */
const HOSTILE_KEY = '\u001b]0;pwned\u0007\u001b[2K';
const ESCAPED_KEY = '\\u001b]0;pwned\\u0007\\u001b[2K';
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('logSafe', () => {
  it('escapes what compare’s printable escapes, line breaks included, and breaks up `::`', () => {
    const text = `a${HOSTILE_KEY}\u009b2K\nb\r\u2028::set-output name=x::y`;
    expect(logSafe(text)).toBe(`${printable(text)}`.replace(/::/g, ': :'));
    expect(logSafe(text)).toBe(`a${ESCAPED_KEY}\\u009b2K\\nb\\r\\u2028: :set-output name=x: :y`);
    expect(logSafe(text)).not.toMatch(RAW_CONTROL);
  });

  it('safeLines writes each line of output escaped', () => {
    const lines: string[] = [];
    const out = safeLines((line) => lines.push(line));
    out.push(Buffer.from(`one${HOSTILE_KEY}\ntwo\r\nthree`));
    out.end();
    expect(lines).toEqual([`one${ESCAPED_KEY}`, 'two', 'three']);
  });
});

describe('the ::error:: line for a results file with a terminal escape in a key', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-action-log-'));
    const shard = join(dir, 'shard-1-of-1');
    cpSync(new URL('../../compare/test/fixtures/recorded-shard/shard-1-of-1/', import.meta.url), shard, {
      recursive: true,
    });
    const file = join(shard, 'hotpath-results.json');
    const data = JSON.parse(readFileSync(file, 'utf8'));
    data.settings[HOSTILE_KEY] = 1;
    writeFileSync(file, JSON.stringify(data));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is what core.setFailed prints for the report stage’s error: the key escaped, no ESC or BEL', () => {
    let error: unknown;
    try {
      readShards([dir]);
    } catch (err) {
      error = err;
    }
    // The report stage's error (its class from compare's sources here, from the bundle in the Action).
    expect((error as Error).name).toBe('HotpathCompareError');
    const err = error as HotpathCompareError;
    // As the Action's main prints a HotpathCompareError.
    const written: string[] = [];
    const write = process.stdout.write;
    const exitCode = process.exitCode;
    process.stdout.write = ((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      core.setFailed(`${err.code}: ${err.message}`);
    } finally {
      process.stdout.write = write;
      process.exitCode = exitCode;
    }
    const line = written.join('');
    expect(line).toMatch(/^::error::HP_COMPARE_INVALID_SETTING: unknown setting /);
    expect(line).toContain(ESCAPED_KEY);
    expect(line.trimEnd()).not.toMatch(RAW_CONTROL);
  });
});
