// The report stage at its limits: how long reading, merging and rendering take.
//
//   node bench/merge.mjs          (about half a minute; run `pnpm build` first)
//
// 1. report() + render() on 256 shards × 100 rounds (the most the limits let through), and on
//    32 shards × 100 rounds. Anchor: the same on 1 shard of 100 rounds, per round.
// 2. analyseScenario + the markdown rounds table on 32 shards × 1000 rounds (issue #28's input:
//    past the limits, so report() refuses it; the stages are timed on their own).
// 3. readShards of 32 shards × 100 rounds written by writeShard (one small profile per round).
// Complexity is asserted by counting in test/merge-complexity.test.ts; this only times it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderMarkdown } from '../dist/render/markdown.js';
import { render } from '../dist/render/render.js';
import { report } from '../dist/report/report.js';
import { analyseScenario } from '../dist/report/scenario.js';
import { mergeShards } from '../dist/report/shards.js';
import { resolveSettings } from '../dist/settings/schema.js';
import { readShards, writeShard } from '../dist/shard/file.js';

const settings = resolveSettings({ config: { start: 'node s.js', url: '/', rounds: 100 } });
const [scenario] = settings.scenarios;
const profile = (n) => ({
  source: 'cpuprofile',
  totalTicks: 100,
  functions: [
    { name: 'a', file: 'src/a.js', line: 1, column: 1, kind: 'js', self: 50 + (n % 3), total: 50 },
    { name: 'b', file: 'src/b.js', line: 1, column: 1, kind: 'js', self: 50 - (n % 3), total: 50 },
  ],
  stacks: [
    { frames: [0], count: 50 + (n % 3) },
    { frames: [0, 1], count: 50 - (n % 3) },
  ],
  warnings: [],
});
const round = (side, n, withProfile) => {
  const rps = 100 + ((n * 7) % 11);
  return {
    side,
    round: n,
    scenarios: [
      {
        scenario: scenario.name,
        load: {
          duration: 1,
          requests: { total: rps, mean: rps, perSecond: [rps] },
          latency: { mean: 2, p50: 2, p90: 3, p99: 4 + (n % 5), max: 9 },
          statusCodes: { 200: rps },
          non2xx: 0,
          errors: 0,
          errorsByKind: {},
        },
        profile: withProfile ? profile(n) : undefined,
        monitors: [],
        profilers: ['node:inspector'],
      },
    ],
    pids: [1],
    warnings: [],
  };
};
const shards = (count, rounds, withProfile = true) =>
  Array.from({ length: count }, (_, i) => ({
    shard: { index: i + 1, total: count },
    sides: { base: { command: 'node s.js', cwd: '/b' }, head: { command: 'node s.js', cwd: '/h' } },
    settings,
    machine: { node: 'v20', platform: 'linux x64', cpus: 2, cpuModel: 'bench' },
    warnings: [],
    measurements: {
      base: Array.from({ length: rounds }, (_, r) => round('base', r + 1, withProfile)),
      head: Array.from({ length: rounds }, (_, r) => round('head', r + 1, withProfile)),
      order: Array.from({ length: 2 * rounds }, (_, r) => (r % 2 ? 'head' : 'base')),
      scenarios: [scenario.name],
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:01:00.000Z',
    },
  }));

/** Median milliseconds of `runs` calls of `fn`. */
function time(fn, runs = 3) {
  const all = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    all.push(performance.now() - start);
  }
  return all.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

const line = (label, ms, rounds) =>
  console.log(
    `${label.padEnd(58)} ${ms.toFixed(0).padStart(6)} ms  ${((ms / rounds) * 1000).toFixed(1).padStart(7)} µs/round`,
  );

console.log('report() + render(), one scenario, a small profile per round (median of 3):');
for (const [count, rounds] of [
  [1, 100],
  [32, 100],
  [256, 100],
]) {
  const input = shards(count, rounds);
  line(
    `  ${count} shard(s) × ${rounds} rounds`,
    time(() => render(report(input))),
    count * rounds * 2,
  );
}

console.log('analyseScenario + markdown rounds table past the limits (median of 3):');
{
  const merged = mergeShards(shards(32, 100, false)).measurements;
  const ten = (list) => Array.from({ length: 10 }, () => list).flat();
  const big = { ...merged, base: ten(merged.base), head: ten(merged.head), order: ten(merged.order) };
  const made = report(shards(1, 100, false));
  const ms = time(() => {
    const s = analyseScenario(big, scenario, settings, 0.05);
    renderMarkdown(
      { ...made, scenarios: [{ ...made.scenarios[0], rounds: s.rounds }] },
      {
        maxLength: Number.POSITIVE_INFINITY,
      },
    );
  });
  line('  32 shards × 1000 rounds', ms, 64_000);
}

console.log('readShards from files written by writeShard (one run):');
{
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-bench-merge-'));
  try {
    for (const s of shards(32, 100)) writeShard(dir, s);
    line(
      '  32 shards × 100 rounds',
      time(() => readShards([dir]), 1),
      6400,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
