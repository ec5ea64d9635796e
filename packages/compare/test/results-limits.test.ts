import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Profile } from '@hotpath/tick-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HotpathCompareError } from '../src/errors.js';
import { RESULTS_LIMITS } from '../src/limits.js';
import type { Measurements, RoundResult, Shard } from '../src/model.js';
import { report } from '../src/report/report.js';
import { resolveSettings, type Settings } from '../src/settings/schema.js';
import { findShards, RESULTS_FILE, readShard, readShards, writeShard } from '../src/shard/file.js';
import { CLI_BIN } from './helpers/repo.js';
import { shardOf } from './helpers/shards.js';

/** A profile of `functions` functions and `stacks` stacks: about 110 bytes per function as JSON. */
function bigProfile(functions: number, stacks: number): Profile {
  return {
    source: 'cpuprofile',
    totalTicks: stacks,
    functions: Array.from({ length: functions }, (_, i) => ({
      name: `handler${i}`,
      file: `src/routes/r${i % 97}.js`,
      line: i + 1,
      column: 3,
      kind: 'js' as const,
      self: 1,
      total: 1,
    })),
    stacks: Array.from({ length: stacks }, (_, i) => ({
      frames: [i % functions, (i * 7) % functions, (i * 13) % functions],
      count: 1,
    })),
    warnings: [],
  };
}

function roundOf(side: 'base' | 'head', n: number, scenario: string, profile?: Profile): RoundResult {
  return {
    side,
    round: n,
    scenarios: [
      {
        scenario,
        load: {
          duration: 1,
          requests: { total: 100, mean: 100 + (n % 3), perSecond: [100] },
          latency: { mean: 2, p50: 2, p90: 3, p99: 4, max: 5 },
          statusCodes: { '200': 100 },
          non2xx: 0,
          errors: 0,
          errorsByKind: {},
        },
        profile,
        monitors: [],
        profilers: ['node:inspector'],
      },
    ],
    pids: [1],
    warnings: [],
  };
}

function measurements(settings: Settings, base: number, head: number, profile?: Profile): Measurements {
  const name = settings.scenarios[0]?.name ?? '';
  const order: ('base' | 'head')[] = [];
  for (let i = 0; i < Math.max(base, head); i++) {
    if (i < base) order.push('base');
    if (i < head) order.push('head');
  }
  return {
    base: Array.from({ length: base }, (_, i) => roundOf('base', i + 1, name, profile)),
    head: Array.from({ length: head }, (_, i) => roundOf('head', i + 1, name, profile)),
    order,
    scenarios: [name],
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:00.000Z',
  };
}

const settingsOf = (rounds: number) => resolveSettings({ config: { start: 'node s.js', url: '/', rounds } });

/**
 * Writes a shard whose every round names the same profile file (the first one writeShard wrote),
 * as a crafted results file would: 97 references to one profile of about 2.2 MB.
 */
function writeRepeatedProfile(dir: string, rounds: number, base = 49, head = 48): string {
  const folder = writeShard(
    dir,
    shardOf(measurements(settingsOf(rounds), base, head, bigProfile(12_000, 30_000)), settingsOf(rounds)),
  );
  const path = join(folder, RESULTS_FILE);
  const data = JSON.parse(readFileSync(path, 'utf8'));
  const first = data.base[0].scenarios[0].profile as string;
  for (const side of ['base', 'head']) for (const r of data[side]) r.scenarios[0].profile = first;
  writeFileSync(path, JSON.stringify(data));
  for (const f of readdirSync(join(folder, 'profiles')))
    if (`profiles/${f}` !== first) rmSync(join(folder, 'profiles', f));
  return folder;
}

/** `hotpath report` in a child process with a heap limit (MiB). */
function reportIn(dirs: string[], out: string, heapMiB: number) {
  return spawnSync(
    process.execPath,
    [`--max-old-space-size=${heapMiB}`, CLI_BIN, 'report', ...dirs, '--out', out],
    {
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
}

function expectLimit(fn: () => unknown, message: RegExp): void {
  let error: unknown;
  try {
    fn();
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(HotpathCompareError);
  expect((error as HotpathCompareError).code).toBe('HP_COMPARE_RESULTS_LIMIT');
  expect((error as Error).message).toMatch(message);
}

describe('the report stage reads within its limits', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-limits-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('ends a crafted results file that names one 2.2 MB profile 97 times in the clear error under a 128 MB heap (issue #28)', () => {
    const dir = join(root, 'crafted');
    const folder = writeRepeatedProfile(dir, 6);
    expect(readFileSync(join(folder, RESULTS_FILE)).length).toBeLessThan(200_000);
    const r = reportIn([dir], join(root, 'crafted-out'), 128);
    expect(r.status, r.stderr).toBe(1);
    expect(r.signal).toBeNull();
    expect(r.stderr).toMatch(
      /^hotpath: HP_COMPARE_RESULTS_LIMIT: the number of base rounds in shard 1\/1 \(.*hotpath-results\.json\) is 49: expected at most 6 \(the rounds setting the shard carries \(max-rounds with rounds auto\)\)\n$/,
    );
  });

  it('ends the same 97 references within the rounds setting in the clear error too: each costs the merge its bytes', () => {
    const dir = join(root, 'repeated');
    writeRepeatedProfile(dir, 49);
    const r = reportIn([dir], join(root, 'repeated-out'), 128);
    expect(r.status, r.stderr).toBe(1);
    expect(r.signal).toBeNull();
    expect(r.stderr).toMatch(
      /^hotpath: HP_COMPARE_RESULTS_LIMIT: the size of the profiles to merge, each counted at every round that names it, with profile .*, is \d+ bytes: expected at most \d+ bytes \(an eighth of this process's heap limit of \d+ MiB; a larger --max-old-space-size in NODE_OPTIONS raises it up to 1073741824 bytes\)\n$/,
    );
    // With this process's heap the same results are read, the profile parsed once for 97 rounds.
    const [shard] = readShards([dir]);
    const rounds = [...(shard?.measurements.base ?? []), ...(shard?.measurements.head ?? [])];
    expect(rounds).toHaveLength(97);
    const profiles = new Set(rounds.map((x) => x.scenarios[0]?.profile));
    expect(profiles.size).toBe(1);
    expect([...profiles][0]?.functions).toHaveLength(12_000);
  });

  it('reports a profile that six rounds name under a 128 MB heap', () => {
    const dir = join(root, 'six');
    writeRepeatedProfile(dir, 3, 3, 3);
    const out = join(root, 'six-out');
    const r = reportIn([dir], out, 128);
    expect(r.signal).toBeNull();
    expect(r.stderr).not.toMatch(/heap|unexpected/i);
    expect([0, 1]).toContain(r.status);
    expect(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')).rounds).toBe(3);
  });

  it('refuses more results and profile bytes than an eighth of the heap before parsing any', () => {
    const dir = join(root, 'heap-share');
    writeShard(dir, shardOf(measurements(settingsOf(3), 3, 3, bigProfile(10, 10)), settingsOf(3)));
    // Sparse files: their size is what counts, and nothing reads them (zeros are not JSON).
    for (const f of readdirSync(join(dir, 'shard-1-of-1', 'profiles')))
      truncateSync(join(dir, 'shard-1-of-1', 'profiles', f), 4 * 1024 * 1024);
    const r = reportIn([dir], join(root, 'heap-share-out'), 128);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /HP_COMPARE_RESULTS_LIMIT: the size of the results and profiles to report, with profile .*, is \d+ bytes: expected at most \d+ bytes \(an eighth of this process's heap limit of \d+ MiB; a larger --max-old-space-size in NODE_OPTIONS raises it up to 1073741824 bytes\)/,
    );
  });

  it('refuses a file over the per-file limit by its size, without reading it', () => {
    const dir = join(root, 'big-file');
    const folder = writeShard(
      dir,
      shardOf(measurements(settingsOf(1), 1, 1, bigProfile(3, 3)), settingsOf(1)),
    );
    truncateSync(join(folder, 'profiles', 'base-1-1.json'), RESULTS_LIMITS.fileBytes + 1);
    expectLimit(
      () => readShards([dir]),
      /^the size of profile .*base-1-1\.json is 268435457 bytes: expected at most 268435456 bytes$/,
    );
  });

  it('refuses profiles that would be merged more than 1 GiB over all their references', () => {
    const dir = join(root, 'referenced');
    const folder = writeRepeatedProfile(dir, 10, 10, 10);
    const [profile] = readdirSync(join(folder, 'profiles'));
    truncateSync(join(folder, 'profiles', profile ?? ''), 60 * 1024 * 1024);
    // A heap of 8 GiB: the unique 60 MB is within the total; 20 references are not.
    const r = reportIn([dir], join(root, 'referenced-out'), 8192);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /HP_COMPARE_RESULTS_LIMIT: the size of the profiles to merge, each counted at every round that names it, with profile .*, is 1132462080 bytes: expected at most 1073741824 bytes/,
    );
  });

  it('refuses more results files than shards can be, while walking the folders', () => {
    const dir = join(root, 'many-files');
    for (let i = 0; i <= RESULTS_LIMITS.files; i++) {
      mkdirSync(join(dir, `a${i}`), { recursive: true });
      writeFileSync(join(dir, `a${i}`, RESULTS_FILE), '{}');
    }
    expectLimit(
      () => findShards(dir),
      /^the number of hotpath-results\.json files below .* is more than 256: expected at most 256$/,
    );
  });

  it('refuses a shard id beyond 256 shards or outside 1..n, naming it', () => {
    const dir = join(root, 'ids');
    const folder = writeShard(dir, shardOf(measurements(settingsOf(2), 2, 2), settingsOf(2)));
    const path = join(folder, RESULTS_FILE);
    const data = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...data, shard: { index: 1, total: 300 } }));
    expectLimit(
      () => readShard(path),
      /^the shard count of shard 1\/300 \(.*\) is 300: expected at most 256$/,
    );
    writeFileSync(path, JSON.stringify({ ...data, shard: { index: 5, total: 4 } }));
    expectLimit(() => readShard(path), /^the shard index of shard 5\/4 \(.*\) is 5: expected 1 to 4$/);
  });

  it('refuses a round order longer than the rounds, and more scenario results than scenarios', () => {
    const settings = settingsOf(2);
    const m = measurements(settings, 2, 2);
    expectLimit(
      () => report([shardOf({ ...m, order: [...m.order, 'base'] }, settings)]),
      /^the round order of shard 1\/1 \(given to report\(\)\) is 5 entries long: expected at most 4, one per round$/,
    );
    const doubled = m.base.map((r) => ({ ...r, scenarios: [...r.scenarios, ...r.scenarios] }));
    expectLimit(
      () => report([shardOf({ ...m, base: doubled }, settings)]),
      /^the number of scenario results in shard 1\/1 \(given to report\(\)\) is 6: expected at most 4 \(1 scenarios in each of its rounds\)$/,
    );
  });

  it('refuses 32 shards of 1000 rounds given to report(): the settings allow 100 rounds per side', () => {
    const settings = settingsOf(10);
    const shards: Shard[] = Array.from({ length: 32 }, (_, i) =>
      shardOf(measurements(settings, 1000, 1000), settings, undefined, { index: i + 1, total: 32 }),
    );
    expectLimit(
      () => report(shards),
      /^the number of base rounds in shard 1\/32 \(given to report\(\)\) is 1000: expected at most 10 \(the rounds setting the shard carries \(max-rounds with rounds auto\)\)$/,
    );
  });

  it('refuses more than 256 shards given to report()', () => {
    const settings = settingsOf(1);
    const m = measurements(settings, 1, 1);
    const shards = Array.from({ length: 257 }, (_, i) =>
      shardOf(m, settings, undefined, { index: i + 1, total: 256 }),
    );
    expectLimit(() => report(shards), /^the number of shards to merge is 257: expected at most 256$/);
  });

  it('says which profile is not a regular file instead of reading it', () => {
    const dir = join(root, 'not-a-file');
    const folder = writeShard(
      dir,
      shardOf(measurements(settingsOf(1), 1, 1, bigProfile(3, 3)), settingsOf(1)),
    );
    rmSync(join(folder, 'profiles', 'base-1-1.json'));
    mkdirSync(join(folder, 'profiles', 'base-1-1.json'));
    expect(() => readShards([dir])).toThrow(/^profile .*base-1-1\.json is not a regular file$/);
    rmSync(join(folder, 'profiles', 'base-1-1.json'), { recursive: true });
    expect(() => readShards([dir])).toThrow(/^profile .*base-1-1\.json cannot be read: ENOENT/);
  });
});

describe('the README names the limits of the report stage', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Limits of the report stage'),
    readme.indexOf('## Error codes'),
  );
  it.each([
    ['results files', `| ${RESULTS_LIMITS.files} `],
    ['shards', `n ≤ ${RESULTS_LIMITS.shards}`],
    ['one file', `| ${RESULTS_LIMITS.fileBytes / 1024 / 1024} MiB`],
    [
      'all bytes',
      `| ${RESULTS_LIMITS.totalBytes / 1024 ** 3} GiB, and at most an eighth of the heap limit |`,
    ],
    [
      'referenced bytes',
      `every round that names it | ${RESULTS_LIMITS.referencedProfileBytes / 1024 ** 3} GiB`,
    ],
  ])('%s', (_, text) => {
    expect(RESULTS_LIMITS.heapShare).toBe(1 / 8);
    expect(section).toContain(text);
  });
});
