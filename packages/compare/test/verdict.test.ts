import { describe, expect, it } from 'vitest';
import { judgeMetrics, type RoundMetrics } from '../src/analyse/verdict.js';

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
    const verdicts = judgeMetrics(base, head, 0.1);
    for (const [metric, status] of Object.entries(expected)) {
      expect(verdicts.find((v) => v.metric === metric)?.status, metric).toBe(status);
    }
  });

  it('reports the change and an interval that contains it', () => {
    const [rps] = judgeMetrics(cases[0].base, cases[0].head, 0.1);
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
    const verdicts = judgeMetrics([round(100), round(101)], [round(100), round(99)], 0.1);
    expect(verdicts.map((v) => v.metric)).not.toContain('cpuPerRequest');
  });

  it('uses the threshold it is given', () => {
    const base = [round(1000), round(1002), round(998)];
    const head = [round(960), round(962), round(958)];
    expect(judgeMetrics(base, head, 0.02)[0].status).toBe('regressed');
  });
});
