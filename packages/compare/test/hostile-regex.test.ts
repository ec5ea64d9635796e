// Issue #67: patterns applied to text of a results file backtracked super-linearly — the SLO's
// split and entry patterns, the duration, latency, percent and number patterns (`\s*` on both
// sides of an optional unit, `\d+\.?\d*`), the file slug's trim — and `settings.slo` had no
// length cap (80 KB of spaces: 20 s before the error, which echoed the whole string). Each
// input below took the old code from half a second to many seconds; each must now finish in
// well under 50 ms (the one timing assertion of the issue, far from noise at these sizes).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HotpathCompareError } from '../src/errors.js';
import { fileSlug } from '../src/run/report-files.js';
import { coerce, SHOWN_VALUE_CHARS } from '../src/settings/coerce.js';
import { parseDuration } from '../src/settings/duration.js';
import { canonicalSlo, parseSlo } from '../src/settings/slo.js';
import { SETTINGS } from '../src/settings/table.js';
import { readShards } from '../src/shard/file.js';
import { FIXTURES } from './helpers/repo.js';

const BOUND_MS = 50;
const N = 80_000;
const spaces = ' '.repeat(N);

function timed<T>(run: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = run();
  return { value, ms: performance.now() - start };
}

const spec = (key: string) => {
  const found = SETTINGS.find((s) => s.key === key);
  if (!found) throw new Error(`no setting ${key}`);
  return found;
};

function refusal(run: () => unknown): { error: HotpathCompareError; ms: number } {
  const start = performance.now();
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(HotpathCompareError);
    return { error: error as HotpathCompareError, ms: performance.now() - start };
  }
  throw new Error('expected a refusal');
}

describe('hostile text against the patterns, each under 50 ms', () => {
  it.each([
    ['an SLO of spaces (the split)', `${spaces}x`],
    ['an SLO entry with a long run of spaces before junk', `p99<=1${spaces}x`],
    ['an SLO with spaces around "and" many times', 'p99<=1 '.concat(' and'.repeat(N / 4), 'x')],
    ['an SLO of commas', ','.repeat(N)],
  ])('parseSlo: %s', (_, text) => {
    const { value, ms } = timed(() => parseSlo(text));
    expect(value).toBeUndefined();
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('parseDuration: a number, spaces, junk', () => {
    const { value, ms } = timed(() => parseDuration(`1${spaces}x`));
    expect(value).toBeUndefined();
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it.each([
    ['threshold', `${'1'.repeat(N)}x`],
    ['threshold', `1${spaces}x`],
    ['rate', `1${spaces}x%`],
    ['duration', `1${spaces}x`],
    ['slo', `${spaces}x`],
  ])('coerce %s: refused quickly, the value echoed cut short', (key, text) => {
    const { error, ms } = refusal(() => coerce(spec(key), text, 'config', key));
    expect(ms).toBeLessThan(BOUND_MS);
    expect(error.code).toBe('HP_COMPARE_INVALID_SETTING');
    expect(error.message).toContain(`(${JSON.stringify(text).length} characters)`);
    expect(error.message.length).toBeLessThan(SHOWN_VALUE_CHARS + 600);
  });

  it('fileSlug: a name of dashes', () => {
    const { value, ms } = timed(() => fileSlug(`a${'-'.repeat(N)}a`, 0));
    expect(value).toBe('1-a');
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('what was accepted is still accepted', () => {
    expect(canonicalSlo('p99 <= 50 ms and errors<=1 %')).toBe('p99<=50ms,errors<=1%');
    expect(canonicalSlo(' p50:0.05s ; p90 = 20ms,errors≤0.5%  ')).toBe('p50<=50ms,p90<=20ms,errors<=0.5%');
    expect(canonicalSlo('p99<=')).toBeUndefined();
    expect(parseDuration(' 500 ms ')).toBe(0.5);
    expect(coerce(spec('threshold'), ' 7.5 % ', 'config')).toBe(7.5);
    expect(fileSlug('--GET /users--', 1)).toBe('2-get-users');
  });
});

describe('a results file whose settings.slo is 80 KB of spaces', () => {
  const root = mkdtempSync(join(tmpdir(), 'hotpath-slo-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is refused in well under a second, naming the setting, the value cut short', () => {
    const results = join(root, 'results');
    cpSync(join(FIXTURES, 'recorded-shard'), results, { recursive: true });
    const file = join(results, 'shard-1-of-1', 'hotpath-results.json');
    const data = JSON.parse(readFileSync(file, 'utf8'));
    data.settings.slo = `${spaces}x`;
    writeFileSync(file, JSON.stringify(data));
    const { error, ms } = refusal(() => readShards([results]));
    expect(ms).toBeLessThan(1000);
    expect(error.message).toContain('"slo"');
    expect(error.message).toContain('expected an SLO such as');
    expect(error.message).toContain(`(${N + 3} characters)`);
    expect(error.message.length).toBeLessThan(1000);
  });
});

describe('a results file whose settings hold a key of 100 000 characters', () => {
  const root = mkdtempSync(join(tmpdir(), 'hotpath-key-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is refused naming the key cut short, with its length', () => {
    const results = join(root, 'results');
    cpSync(join(FIXTURES, 'recorded-shard'), results, { recursive: true });
    const file = join(results, 'shard-1-of-1', 'hotpath-results.json');
    const data = JSON.parse(readFileSync(file, 'utf8'));
    data.settings[`k${'\u001b'.repeat(99_999)}`] = 1;
    for (let i = 0; i < 30; i++) data.settings[`extra${i}`] = 1;
    writeFileSync(file, JSON.stringify(data));
    const { error } = refusal(() => readShards([results]));
    expect(error.message).toContain('unknown settings "k\\u001b');
    expect(error.message).toContain('… (100000 characters)');
    expect(error.message).toContain('and 21 more');
    expect(error.message.length).toBeLessThan(2000);
  });
});
