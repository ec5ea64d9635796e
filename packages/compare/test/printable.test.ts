// Issue #46: text from a results file, a server or git reached stderr and the workflow log with
// its terminal escapes (a key that set the terminal's title and erased the line). printable()
// writes every control character as an escape; HotpathCompareError messages go through it.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTail, HotpathCompareError } from '../src/errors.js';
import { printable } from '../src/printable.js';
import { coerce } from '../src/settings/coerce.js';
import { SETTINGS } from '../src/settings/table.js';
import { readShards } from '../src/shard/file.js';
import { CLI_BIN } from './helpers/repo.js';

/** Sets the terminal's title (OSC … BEL), then erases the line (CSI 2K). */
const HOSTILE_KEY = '\u001b]0;pwned\u0007\u001b[2K';
const ESCAPED_KEY = '\\u001b]0;pwned\\u0007\\u001b[2K';
/** Any control character printable() escapes (a line feed allowed separately). */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('printable', () => {
  it.each([
    ['ESC, OSC and BEL', HOSTILE_KEY, ESCAPED_KEY],
    [
      'a one-character CSI (C1) and the other C1 controls',
      '\u009b2Kx\u0085\u009d',
      '\\u009b2Kx\\u0085\\u009d',
    ],
    ['DEL and NUL', 'a\u007fb\u0000', 'a\\u007fb\\u0000'],
    ['carriage return and tab', 'ok\rFAIL\tx', 'ok\\rFAIL\\tx'],
    ['the line and paragraph separators', 'a\u2028b\u2029c', 'a\\u2028b\\u2029c'],
    ['bidi overrides and isolates', '\u202egnp.exe\u2066x\u2069', '\\u202egnp.exe\\u2066x\\u2069'],
    ['a line feed (one line)', 'one\ntwo', 'one\\ntwo'],
  ])('escapes %s', (_, text, expected) => {
    expect(printable(text)).toBe(expected);
    expect(printable(text)).not.toMatch(RAW_CONTROL);
  });

  it('keeps line feeds where lines are legitimate, and everything that is not a control character', () => {
    expect(printable('line one\nline\u001b two', { newlines: true })).toBe('line one\nline\\u001b two');
    const ordinary = 'café 東京 🔥 a\\b "q" <x> ::set-output';
    expect(printable(ordinary)).toBe(ordinary);
    expect(printable(ordinary, { newlines: true })).toBe(ordinary);
  });

  it('every HotpathCompareError message and output tail is printable (line breaks kept)', () => {
    const err = new HotpathCompareError('HP_COMPARE_GIT', `git failed:\n${HOSTILE_KEY}\u009b`);
    expect(err.message).toBe(`git failed:\n${ESCAPED_KEY}\\u009b`);
    expect(formatTail(['ok', `bad${HOSTILE_KEY}`])).toBe(`  | ok\n  | bad${ESCAPED_KEY}`);
  });

  it('a setting value in an error is printable, DEL and C1 included (JSON.stringify leaves them raw)', () => {
    const spec = SETTINGS.find((s) => s.key === 'duration');
    if (!spec) throw new Error('no duration setting');
    expect(() => coerce(spec, `5\u009b\u007f${HOSTILE_KEY}`, 'config')).toThrow(
      `got "5\\u009b\\u007f${ESCAPED_KEY}"`,
    );
  });
});

describe('a results file with a terminal escape in a key and in its folder name (issue #46)', () => {
  let dir: string;
  let results: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-printable-'));
    results = join(dir, 'results');
    // The folder the artifact names, with the escape in its name too.
    const shard = join(results, `shard${HOSTILE_KEY}`);
    cpSync(new URL('./fixtures/recorded-shard/shard-1-of-1/', import.meta.url), shard, { recursive: true });
    const file = join(shard, 'hotpath-results.json');
    const data = JSON.parse(readFileSync(file, 'utf8'));
    data.settings[HOSTILE_KEY] = 1;
    writeFileSync(file, JSON.stringify(data));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('`hotpath report DIR` prints the key and the path escaped: no ESC or BEL reaches stderr', () => {
    const r = spawnSync(process.execPath, [CLI_BIN, 'report', results, '--out', join(dir, 'out')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).not.toBe(0);
    expect(r.stderr).toContain('HP_COMPARE_INVALID_SETTING');
    expect(r.stderr).toContain(`"${ESCAPED_KEY}"`);
    expect(r.stderr).toContain(`shard${ESCAPED_KEY}`);
    expect(r.stderr).not.toMatch(/[\u001b\u0007\u009b]/);
    expect(r.stdout).not.toMatch(/[\u001b\u0007\u009b]/);
  });

  it('the error the report stage throws (what the Action prints in ::error::) is printable', () => {
    let error: unknown;
    try {
      readShards([results]);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HotpathCompareError);
    const message = (error as HotpathCompareError).message;
    expect(message).toContain(ESCAPED_KEY);
    expect(message).not.toMatch(RAW_CONTROL);
    expect(message).not.toContain('\n');
  });
});
