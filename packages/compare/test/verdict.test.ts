import { describe, expect, it } from 'vitest';
import type { RoundMetrics } from '../src/model.js';
import { roundPairs } from '../src/report/scenario.js';
import { judgeMetrics } from '../src/report/verdict.js';
import { defined } from './helpers/defined.js';

const ALL = ['requestsPerSecond', 'p50', 'p90', 'p99', 'errorRate', 'cpuPerRequest'] as const;
/** judgeMetrics on base round k paired with head round k, at one test's 95 % level. */
const judge = (
  base: readonly RoundMetrics[],
  head: readonly RoundMetrics[],
  threshold: number,
  alpha = 0.05,
) =>
  judgeMetrics(
    base.map((b, i) => ({ base: b, head: defined(head[i], `head round ${i}`) })),
    { threshold, metrics: ALL, alpha },
  );

const round = (rps: number, p50 = 10, errorRate = 0, cpuPerRequest = Number.NaN): RoundMetrics => ({
  requestsPerSecond: rps,
  p50,
  p90: p50 * 1.5,
  p99: p50 * 3,
  errorRate,
  cpuPerRequest,
});

/** Recorded per-round numbers from runs on this machine (2 cores, shared). */
const cases = [
  {
    name: 'pbkdf2 → pbkdf2Sync: -45 % throughput, p50 doubles',
    base: [round(45, 21.6), round(44, 21.3), round(40, 22.4), round(45, 21.1)],
    head: [round(22, 41.3), round(22, 40.8), round(26, 37.2), round(24, 39.9)],
    expect: { requestsPerSecond: 'regressed', p50: 'regressed', errorRate: 'not-significant' },
  },
  {
    name: 'A/A: noise of a busy machine',
    base: [round(207, 38), round(184, 40), round(146, 43)],
    head: [round(168, 37), round(185, 39), round(155, 36)],
    expect: { requestsPerSecond: 'not-significant', p50: 'not-significant' },
  },
  {
    name: 'significant but within the 10 % threshold',
    base: [round(1000), round(1002), round(998)],
    head: [round(960), round(962), round(958)],
    expect: { requestsPerSecond: 'within-threshold' },
  },
  {
    name: 'a clear improvement',
    base: [round(100, 20), round(101, 20), round(99, 20)],
    head: [round(150, 12), round(151, 12), round(149, 12)],
    expect: { requestsPerSecond: 'improved', p50: 'improved' },
  },
  {
    name: 'errors appear in head (base 0 %)',
    base: [round(100, 10, 0), round(100, 10, 0), round(100, 10, 0)],
    head: [round(100, 10, 0.2), round(100, 10, 0.22), round(100, 10, 0.19)],
    expect: { errorRate: 'regressed' },
  },
  {
    name: 'CPU per request +33 % while throughput drowns in machine noise (recorded A/B run)',
    base: [round(56, 70, 0, 2900), round(151, 26, 0, 2950), round(155, 25, 0, 2870)],
    head: [round(92, 43, 0, 3880), round(122, 32, 0, 3900), round(35, 110, 0, 3950)],
    expect: { requestsPerSecond: 'not-significant', cpuPerRequest: 'regressed' },
  },
  {
    name: 'a single round per side never flags',
    base: [round(100)],
    head: [round(50)],
    expect: { requestsPerSecond: 'not-significant' },
  },
] as const;

describe('judgeMetrics on recorded rounds', () => {
  it.each(cases)('$name', ({ base, head, expect: expected }) => {
    const verdicts = judge(base, head, 0.1);
    for (const [metric, status] of Object.entries(expected)) {
      expect(verdicts.find((v) => v.metric === metric)?.status, metric).toBe(status);
    }
  });

  it('reports the change and an interval that contains it', () => {
    const rps = defined(judge(cases[0].base, cases[0].head, 0.1)[0], 'the first verdict');
    // Ratio of the geometric means of the rounds, minus one.
    const geo = (xs: number[]) => Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);
    const rate = (rounds: (typeof cases)[0]['base']) => geo(rounds.map((r) => r.requestsPerSecond));
    expect(rps.change).toBeCloseTo(rate(cases[0].head) / rate(cases[0].base) - 1, 6);
    expect(rps.change).toBeCloseTo(94 / 174 - 1, 2);
    expect(rps.ci[0]).toBeLessThan(rps.change);
    expect(rps.ci[1]).toBeGreaterThan(rps.change);
    expect(rps.ci[1]).toBeLessThan(0);
  });

  it('leaves out CPU per request when a round has no probe data', () => {
    const verdicts = judge([round(100), round(101)], [round(100), round(99)], 0.1);
    expect(verdicts.map((v) => v.metric)).not.toContain('cpuPerRequest');
  });

  it('cancels drift of the machine within each pair: −15 % on a machine slowing from 200 to 100 req/s', () => {
    const base = [round(200), round(160), round(130), round(100)];
    const head = base.map((r) => round(r.requestsPerSecond * 0.85));
    const rps = defined(judge(base, head, 0.1)[0], 'the first verdict');
    expect(rps.change).toBeCloseTo(-0.15, 6);
    expect(rps.status).toBe('regressed');
  });

  it('a stricter level (more tests in the run) widens the interval', () => {
    const wide = defined(judge(cases[0].base, cases[0].head, 0.1, 0.005)[0], 'the first verdict');
    const narrow = defined(judge(cases[0].base, cases[0].head, 0.1, 0.05)[0], 'the first verdict');
    expect(wide.ci[1] - wide.ci[0]).toBeGreaterThan(narrow.ci[1] - narrow.ci[0]);
    expect(wide.pairs).toBe(4);
  });

  it('pairs rounds within each shard, in order', () => {
    const b = [
      { id: 'b1', shard: 1 },
      { id: 'b2', shard: 1 },
      { id: 'b3', shard: 2 },
    ];
    const h = [
      { id: 'h1', shard: 1 },
      { id: 'h3', shard: 2 },
      { id: 'h2', shard: 1 },
      { id: 'h4', shard: 2 },
    ];
    expect(roundPairs(b, h).map(([x, y]) => `${x.id}-${y.id}`)).toEqual(['b1-h1', 'b2-h2', 'b3-h3']);
  });

  it('uses the threshold it is given', () => {
    const base = [round(1000), round(1002), round(998)];
    const head = [round(960), round(962), round(958)];
    expect(defined(judge(base, head, 0.02)[0], 'the first verdict').status).toBe('regressed');
  });
});
