import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { HotpathCompareError } from '../src/errors.js';
import type { Measurements, RoundResult } from '../src/model.js';
import { runReport } from '../src/run/compare.js';
import { resolveSettings } from '../src/settings/schema.js';
import { RESULTS_FILE, readShard, writeShard } from '../src/shard/file.js';
import { shardOf } from './helpers/shards.js';

// Property-based tests (fast-check) of the results reader, the report job's boundary with data
// that jobs running pull-request code wrote. Fixed seeds and bounded runs (a few seconds); a
// failure prints its seed and shrunk counterexample, which then becomes a regression test.
const SEED = 0x28_5a4d;

const root = mkdtempSync(join(tmpdir(), 'hotpath-results-properties-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const settings = resolveSettings({ config: { start: 'node s.js', url: '/', rounds: 3 } });
const NAME = settings.scenarios[0]?.name ?? '';

function round(side: 'base' | 'head', n: number, rps: number, p99: number): RoundResult {
  return {
    side,
    round: n,
    scenarios: [
      {
        scenario: NAME,
        load: {
          duration: 1,
          requests: { total: Math.round(rps), mean: rps, perSecond: [rps] },
          latency: { mean: p99 / 2, p50: p99 / 2, p90: p99 / 1.5, p99, max: p99 * 2 },
          statusCodes: { '200': Math.round(rps) },
          non2xx: 0,
          errors: 0,
          errorsByKind: {},
        },
        profile: {
          source: 'cpuprofile',
          totalTicks: 3,
          functions: [{ name: 'f', file: 'src/f.js', line: 1, column: 1, kind: 'js', self: 3, total: 3 }],
          stacks: [{ frames: [0], count: 3 }],
          warnings: [],
        },
        monitors: [],
        profilers: ['node:inspector'],
      },
    ],
    pids: [n],
    warnings: [],
  };
}

const measurements = (rps: number[], p99: number[]): Measurements => ({
  base: rps.map((r, i) => round('base', i + 1, r, p99[i] ?? 1)),
  head: rps.map((r, i) => round('head', i + 1, r * 0.9, (p99[i] ?? 1) * 1.1)),
  order: rps.flatMap(() => ['base', 'head'] as const),
  scenarios: [NAME],
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:01:00.000Z',
});

const folder = writeShard(join(root, 'valid'), shardOf(measurements([100, 101, 99], [4, 5, 6]), settings));
const path = join(folder, RESULTS_FILE);
const VALID = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

/** Where a crafted file may differ from a valid one: any field, at any depth hotpath reads. */
const FIELDS: (string | number)[][] = [
  ['schema'],
  ['shard'],
  ['shard', 'index'],
  ['shard', 'total'],
  ['sides', 'base', 'sha'],
  ['settings'],
  ['settings', 'rounds'],
  ['settings', 'scenarios'],
  ['environment'],
  ['environment', 'cpus'],
  ['warnings'],
  ['order'],
  ['scenarios'],
  ['base'],
  ['base', 0],
  ['base', 0, 'round'],
  ['base', 0, 'scenarios'],
  ['base', 0, 'scenarios', 0, 'scenario'],
  ['base', 0, 'scenarios', 0, 'profile'],
  ['base', 0, 'scenarios', 0, 'load'],
  ['base', 0, 'scenarios', 0, 'load', 'latency', 'p99'],
  ['base', 0, 'scenarios', 0, 'load', 'requests', 'perSecond'],
  ['base', 0, 'scenarios', 0, 'monitors'],
  ['head', 2, 'side'],
  ['head', 2, 'pids'],
  ['loadLevels'],
  ['placement'],
];

function replaced(at: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(VALID) as Record<string | number, unknown>;
  let node: Record<string | number, unknown> = copy;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = at[at.length - 1];
  if (last !== undefined) node[last] = value;
  return copy;
}

/** readShard on `text` written as the results file: a Shard, or only hotpath's own error. */
function readText(text: string) {
  writeFileSync(path, text);
  try {
    return readShard(path);
  } catch (error) {
    expect(error).toBeInstanceOf(HotpathCompareError);
    expect((error as HotpathCompareError).code).toMatch(
      /^HP_COMPARE_(RESULTS|RESULTS_LIMIT|INVALID_SETTING)$/,
    );
    expect((error as Error).message.length).toBeGreaterThan(10);
    return error as HotpathCompareError;
  }
}

describe('the results reader (fast-check, fixed seed)', () => {
  it('reads a valid file with any one field replaced into a Shard or its own clear error', () => {
    fc.assert(
      fc.property(fc.constantFrom(...FIELDS), fc.jsonValue({ maxDepth: 3 }), (at, value) => {
        readText(JSON.stringify(replaced(at, value)));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('reads any JSON value or any text into its own clear error', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue().map((v) => JSON.stringify(v) ?? ''),
          fc.string(),
        ),
        (text) => {
          expect(readText(text)).toBeInstanceOf(HotpathCompareError);
        },
      ),
      { seed: SEED + 1, numRuns: 200 },
    );
  });

  it('gives back what writeShard wrote', () => {
    const value = fc.double({ min: 0.001, max: 1e6, noNaN: true });
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 3 })
          .chain((n) =>
            fc.tuple(
              fc.array(value, { minLength: n, maxLength: n }),
              fc.array(value, { minLength: n, maxLength: n }),
            ),
          ),
        ([rps, p99]) => {
          const m = measurements(rps, p99);
          const dir = mkdtempSync(join(root, 'roundtrip-'));
          try {
            const read = readShard(join(writeShard(dir, shardOf(m, settings)), RESULTS_FILE));
            expect(read.measurements.base.map((r) => r.scenarios[0]?.load)).toEqual(
              m.base.map((r) => r.scenarios[0]?.load),
            );
            expect(read.measurements.head.map((r) => r.scenarios[0]?.profile)).toEqual(
              m.head.map((r) => r.scenarios[0]?.profile),
            );
            expect(read.measurements.order).toEqual(m.order);
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { seed: SEED + 2, numRuns: 60 },
    );
  });
});

/** Every entry below `dir`, relative, sorted. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => {
      const rel = join(prefix, e.name);
      return e.isDirectory() ? [rel, ...tree(dir, rel)] : [rel];
    })
    .sort();
}

describe('the report stage on crafted results (fast-check, fixed seed)', () => {
  const folderName = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom('..', '../..', '/tmp', '/etc', '~', '.', 'hotpath-report', '../elsewhere'),
  );
  it('writes only into the folder the reporter names, whatever out, names and keys the results carry', () => {
    fc.assert(
      fc.property(folderName, fc.string({ maxLength: 20 }), (out, key) => {
        const work = mkdtempSync(join(root, 'report-'));
        try {
          const results = join(work, 'results');
          const file = join(
            writeShard(results, shardOf(measurements([100, 101, 99], [4, 5, 6]), settings)),
            RESULTS_FILE,
          );
          const data = JSON.parse(readFileSync(file, 'utf8'));
          data.settings.out = out.startsWith('/') ? out : join(work, out);
          data.sides.head.ref = key;
          data.warnings = [key];
          writeFileSync(file, JSON.stringify(data));
          const before = tree(work);
          const chosen = join(work, 'chosen');
          mkdirSync(chosen);
          let written: string | undefined;
          try {
            written = runReport([results], { out: chosen }).files.dir;
          } catch (error) {
            // a crafted file may be refused, with hotpath's own error only
            expect(error).toBeInstanceOf(HotpathCompareError);
          }
          if (written !== undefined) expect(written).toBe(chosen);
          const after = tree(work).filter((p) => p !== 'chosen' && !p.startsWith(`chosen/`));
          expect(after).toEqual(before);
        } finally {
          rmSync(work, { recursive: true, force: true });
        }
      }),
      { seed: SEED + 3, numRuns: 40 },
    );
  });
});
