import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureDrift } from '../src/drift/drift.js';
import { probePath } from '../src/measure/probe-path.js';
import { measureRounds } from '../src/measure/rounds.js';
import { resolveSettings } from '../src/settings/schema.js';
import { FIRST_LOOK_PAIRS } from '../src/verdict/sequential.js';
import { levelled } from './helpers/levelled.js';
import { makeRepo } from './helpers/repo.js';

// Real servers, rounds: auto with a small budget. Head's loop does 100× base's work, about 20×
// the CPU per request with the HTTP server's own: a verdict is clear at an early look; a drift
// point (until: 'budget') measures the whole budget anyway.
const server = (iterations: number) => `require('node:http').createServer((req, res) => {
  let x = 0;
  for (let i = 0; i < ${iterations}; i++) x += Math.sqrt(i);
  res.end(String(x));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

describe('rounds: auto, until the verdict or until the budget (real servers)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-auto-'));
    writeFileSync(join(dir, 'base.cjs'), server(20_000));
    writeFileSync(join(dir, 'head.cjs'), server(2_000_000));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const settings = levelled(
    resolveSettings({
      overrides: {
        start: 'x',
        duration: '0.5',
        warmup: '0',
        connections: '2',
        rounds: 'auto',
        maxRounds: '8',
        maxTime: '120',
        profiler: 'none',
        // when to stop is the subject: no memory edges (their collections cost a fifth of a run)
        memory: 'off',
      },
    }),
  );
  const plan = (until?: 'verdict' | 'budget') => ({
    base: { side: 'base' as const, command: 'node base.cjs', cwd: dir },
    head: { side: 'head' as const, command: 'node head.cjs', cwd: dir },
    settings: until === 'budget' ? { ...settings, maxRounds: 5 } : settings,
    ...(until ? { until } : {}),
  });
  const context = { probePath: probePath(), env: process.env };

  it('stops at a look before the budget when the answer is clear (the default), and runs the budget for a drift point', async () => {
    const verdict = await measureRounds(plan(), context);
    expect(verdict.stop).toMatchObject({ rounds: 'auto', reason: 'conclusive' });
    // Often at the first look; at three pairs the interval is wide (t with 2 degrees of freedom
    // at a quarter of alpha), and on a host whose speed moves 40 % between rounds the first look
    // was open in 2 of 5 runs of a 4.5× head (CI rehearsal 13 ran the budget of 5). With a
    // budget of 8, never the whole budget.
    const looks = verdict.stop?.looks.map((l) => l.pairs) ?? [];
    expect(looks[0]).toBe(FIRST_LOOK_PAIRS);
    expect(verdict.base.length).toBe(looks.at(-1));
    expect(verdict.base.length).toBeLessThan(8);

    const budget = await measureRounds(plan('budget'), context);
    // Never looked (no alpha spent on looks: the intervals keep their full level), ran max-rounds.
    expect(budget.stop).toEqual({ rounds: 'auto', reason: 'max-rounds', looks: [] });
    expect(budget.base).toHaveLength(5);
    expect(budget.head).toHaveLength(5);
  });

  it('a drift point measures the whole budget: measureDrift runs max-rounds pairs without a look', async () => {
    // The reference (tagged) burns 20× the work of head: a verdict would be clear at the first look.
    const { dir: repo, baseSha } = makeRepo(
      dir,
      { 'server.js': server(400_000) },
      { 'server.js': server(20_000) },
    );
    execFileSync('git', ['tag', 'v1.0.0', baseSha], { cwd: repo });
    const run = await measureDrift({ ...settings, start: 'node server.js', maxRounds: 4 }, 'tag:v*', {
      baseDir: repo,
    });
    expect(run.reference.ref).toBe('v1.0.0');
    expect(run.shard.measurements.stop).toEqual({ rounds: 'auto', reason: 'max-rounds', looks: [] });
    expect(run.shard.measurements.base).toHaveLength(4);
    expect(run.point.scenarios[0]?.metrics.find((m) => m.metric === 'cpuPerRequest')?.pairs).toBe(4);
  });
});
