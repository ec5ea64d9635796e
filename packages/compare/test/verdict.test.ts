import { describe, expect, it } from 'vitest';
import type { RoundMetrics } from '../src/model.js';
import { METRIC_NAMES, RETAINED_WINDOW_NOISE } from '../src/settings/metrics.js';
import { combineOutcomes, judgeMetrics, outcomeOf, SPOILED_CORES } from '../src/verdict/judge.js';
import { roundPairs } from '../src/verdict/round-pairs.js';
import { defined } from './helpers/defined.js';

const ALL = [
  'requestsPerSecond',
  'p50',
  'p90',
  'p99',
  'errorRate',
  'cpuPerRequest',
  'mainThreadCpuPerRequest',
  'eventLoopUtilization',
] as const;
/** judgeMetrics on base round k paired with head round k, at one test's 95 % level. */
const judge = (
  base: readonly RoundMetrics[],
  head: readonly RoundMetrics[],
  threshold: number,
  alpha = 0.05,
) =>
  judgeMetrics(
    base.flatMap((b, i) => {
      const h = head[i];
      return h ? [{ base: b, head: h }] : [];
    }),
    // alpha / 2: the worst case is the interval's worse end (the tests written before the
    // equivalence level had its own value).
    { threshold, metrics: ALL, alpha, equivalenceAlpha: alpha / 2, retainedThreshold: 64 },
  );

const round = (
  rps: number,
  p50 = 10,
  errorRate = 0,
  cpuPerRequest = Number.NaN,
  extra: Partial<RoundMetrics> = {},
): RoundMetrics => ({
  // every metric of the catalogue unmeasured, then the ones this round has
  ...(Object.fromEntries(METRIC_NAMES.map((m) => [m, Number.NaN])) as RoundMetrics),
  requestsPerSecond: rps,
  p50,
  p90: p50 * 1.5,
  p99: p50 * 3,
  errorRate,
  cpuPerRequest,
  ...extra,
});

/** Recorded per-round numbers from runs on this machine (2 cores, shared). */
const cases = [
  {
    name: 'pbkdf2 → pbkdf2Sync: -45 % throughput, p50 doubles',
    base: [round(45, 21.6), round(44, 21.3), round(40, 22.4), round(45, 21.1)],
    head: [round(22, 41.3), round(22, 40.8), round(26, 37.2), round(24, 39.9)],
    expect: { requestsPerSecond: 'regressed', p50: 'regressed', errorRate: 'unchanged' },
  },
  {
    name: 'A/A: noise of a busy machine',
    base: [round(207, 38), round(184, 40), round(146, 43)],
    head: [round(168, 37), round(185, 39), round(155, 36)],
    expect: { requestsPerSecond: 'inconclusive', p50: 'inconclusive' },
  },
  {
    name: 'significant but within the 10 % threshold',
    base: [round(1000), round(1002), round(998)],
    head: [round(960), round(962), round(958)],
    expect: { requestsPerSecond: 'unchanged' },
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
    expect: { requestsPerSecond: 'inconclusive', cpuPerRequest: 'regressed' },
  },
  {
    name: 'a single round per side never flags',
    base: [round(100)],
    head: [round(50)],
    expect: { requestsPerSecond: 'inconclusive' },
  },
] as const;

describe('judgeMetrics on recorded rounds', () => {
  it.each(cases)('$name', ({ base, head, expect: expected }) => {
    const verdicts = judge(base, head, 0.1);
    for (const [metric, status] of Object.entries(expected)) {
      expect(verdicts.find((v) => v.metric === metric)?.outcome, metric).toBe(status);
    }
  });

  it('reports the change and an interval that contains it', () => {
    const rps = defined(judge(cases[0].base, cases[0].head, 0.1)[0]);
    const ci = defined(rps.ci);
    // Ratio of the geometric means of the rounds, minus one.
    const geo = (xs: number[]) => Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);
    const rate = (rounds: (typeof cases)[0]['base']) => geo(rounds.map((r) => r.requestsPerSecond));
    expect(rps.change).toBeCloseTo(rate(cases[0].head) / rate(cases[0].base) - 1, 6);
    expect(rps.change).toBeCloseTo(94 / 174 - 1, 2);
    expect(ci[0]).toBeLessThan(rps.change);
    expect(ci[1]).toBeGreaterThan(rps.change);
    expect(ci[1]).toBeLessThan(0);
  });

  it('leaves out CPU per request when a round has no probe data', () => {
    const verdicts = judge([round(100), round(101)], [round(100), round(99)], 0.1);
    expect(verdicts.map((v) => v.metric)).not.toContain('cpuPerRequest');
  });

  it('cancels drift of the machine within each pair: −15 % on a machine slowing from 200 to 100 req/s', () => {
    const base = [round(200), round(160), round(130), round(100)];
    const head = base.map((r) => round(r.requestsPerSecond * 0.85));
    const rps = defined(judge(base, head, 0.1)[0]);
    expect(rps.change).toBeCloseTo(-0.15, 6);
    expect(rps.outcome).toBe('regressed');
  });

  it('a stricter level (more tests in the run) widens the interval', () => {
    const wide = defined(judge(cases[0].base, cases[0].head, 0.1, 0.005)[0]);
    const narrow = defined(judge(cases[0].base, cases[0].head, 0.1, 0.05)[0]);
    const width = (ci: [number, number] | null) => (ci ? ci[1] - ci[0] : Number.NaN);
    expect(width(wide.ci)).toBeGreaterThan(width(narrow.ci));
    expect(wide.detectable).toBeGreaterThan(defined(narrow.detectable));
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
    expect(judge(base, head, 0.02)[0]?.outcome).toBe('regressed');
  });
});

describe('five outcomes', () => {
  it('decides from the interval and the margin, as "how much worse"', () => {
    expect(outcomeOf(0.12, [0.08, 0.16], 0.16, 0.05)).toBe('regressed');
    expect(outcomeOf(-0.12, [-0.16, -0.08], -0.08, 0.05)).toBe('improved');
    expect(outcomeOf(0.01, [-0.02, 0.04], 0.04, 0.05)).toBe('unchanged');
    // significant, but shown to be at most 4.5 % worse: no regression past the threshold
    expect(outcomeOf(0.03, [0.015, 0.045], 0.045, 0.05)).toBe('unchanged');
    // worse beyond zero but the interval reaches past the threshold: could not tell
    expect(outcomeOf(0.03, [0.01, 0.09], 0.09, 0.05)).toBe('inconclusive');
    expect(outcomeOf(0, [-0.2, 0.2], 0.2, 0.05)).toBe('inconclusive');
    // the worst case (one-sided, at the equivalence level) decides unchanged, not the interval
    expect(outcomeOf(0.01, [-0.03, 0.07], 0.04, 0.05)).toBe('unchanged');
    expect(outcomeOf(0.01, [-0.03, 0.07], 0.06, 0.05)).toBe('inconclusive');
  });

  it('unchanged needs both one-sided bounds within the margin; the worse one alone is not-worse', () => {
    // pnpm demo's first row once: requests/s +57.4 % [−8.3, +170.2] %, at worst 17.6 % better.
    // As "how much worse": −0.574, interval [−1.702, 0.083], worst case −0.176, best case −1.3.
    expect(outcomeOf(-0.574, [-1.702, 0.083], -0.176, 0.05, -1.3)).toBe('not-worse');
    // a change beyond the margin is never unchanged, whatever its side: its bounds hold it
    for (const change of [-0.2, -0.08, -0.06, 0.06, 0.08, 0.2])
      for (const half of [0.001, 0.01, 0.05, 0.3]) {
        const ci: [number, number] = [change - 1.2 * half, change + 1.2 * half];
        expect(outcomeOf(change, ci, change + half, 0.05, change - half)).not.toBe('unchanged');
      }
    expect(outcomeOf(0.01, [-0.02, 0.04], 0.03, 0.05, -0.01)).toBe('unchanged');
    expect(outcomeOf(0.01, [-0.08, 0.04], 0.03, 0.05, -0.07)).toBe('not-worse');
    expect(outcomeOf(0.01, [-0.08, 0.09], 0.07, 0.05, -0.07)).toBe('inconclusive');
  });

  it('a run is regressed if any is, else inconclusive, else improved, else not-worse, else unchanged', () => {
    expect(combineOutcomes(['unchanged', 'inconclusive', 'regressed', 'improved'])).toBe('regressed');
    expect(combineOutcomes(['unchanged', 'improved', 'inconclusive'])).toBe('inconclusive');
    expect(combineOutcomes(['unchanged', 'not-worse', 'improved'])).toBe('improved');
    expect(combineOutcomes(['unchanged', 'not-worse'])).toBe('not-worse');
    expect(combineOutcomes(['unchanged'])).toBe('unchanged');
    expect(combineOutcomes([])).toBe('unchanged');
  });

  it('a quiet A/A run ends unchanged and says how small a change it could have seen', () => {
    const base = [1000, 1010, 990, 1005, 995, 1002].map((r) => round(r, 10, 0, 50));
    const head = [1003, 1006, 994, 1001, 999, 1004].map((r) => round(r, 10, 0, 50.2));
    const verdicts = judge(base, head, 0.05, 0.01);
    const rps = defined(verdicts.find((v) => v.metric === 'requestsPerSecond'));
    expect(rps.outcome).toBe('unchanged');
    expect(rps.detectable).toBeGreaterThan(0);
    expect(rps.detectable).toBeLessThan(0.05);
    expect(rps.reason).toBeUndefined();
  });

  it('without an interval (one pair) the metric is inconclusive with its reason, and no detectable change', () => {
    const [rps] = judge([round(100)], [round(50)], 0.1);
    expect(rps?.outcome).toBe('inconclusive');
    expect(rps?.reason).toBe('too-few-pairs');
    expect(rps?.ci).toBeNull();
    expect(rps?.detectable).toBeNull();
  });

  it('pairs a neighbour spoiled leave the wall-clock metrics, not the CPU-time ones', () => {
    const quiet = { otherLoad: 0.02 };
    const busy = { otherLoad: 0.02 + SPOILED_CORES + 0.6 };
    const base = [1000, 1000, 1000, 1000, 1000].map((r, i) =>
      round(r, 10, 0, 100, { mainThreadCpuPerRequest: 60, ...(i === 1 ? busy : quiet) }),
    );
    // head round 2 lost half its throughput to the neighbour in base's round... and its own
    const head = [1001, 480, 999, 1000, 1002].map((r, i) =>
      round(r, 10, 0, 100.1, { mainThreadCpuPerRequest: 60.1, ...(i === 1 ? quiet : quiet) }),
    );
    const verdicts = judge(base, head, 0.05, 0.01);
    const rps = defined(verdicts.find((v) => v.metric === 'requestsPerSecond'));
    const cpu = defined(verdicts.find((v) => v.metric === 'mainThreadCpuPerRequest'));
    expect(rps.pairs).toBe(4);
    expect(rps.excluded).toBe(1);
    expect(rps.outcome).toBe('unchanged');
    expect(cpu.pairs).toBe(5);
    expect(cpu.excluded).toBe(0);
    // with the spoiled pair kept, the throughput interval would be far too wide to tell
    const kept = judgeMetrics(
      base.map((b, i) => ({
        base: { ...b, otherLoad: undefined },
        head: { ...defined(head[i]), otherLoad: undefined },
      })),
      { threshold: 0.05, metrics: ALL, alpha: 0.01, equivalenceAlpha: 0.005, retainedThreshold: 64 },
    );
    expect(kept.find((v) => v.metric === 'requestsPerSecond')?.outcome).toBe('inconclusive');
  });

  it("the event loop's own CPU per request sees work moved onto the main thread", () => {
    // pbkdf2 → pbkdf2Sync: all-thread CPU per request barely moves, the main thread's multiplies
    const base = [0, 1, 2, 3].map(() => round(1000, 10, 0, 2000, { mainThreadCpuPerRequest: 90 }));
    const head = [0, 1, 2, 3].map((i) => round(1000, 10, 0, 2010 + i, { mainThreadCpuPerRequest: 1900 + i }));
    const verdicts = judge(base, head, 0.05, 0.01);
    expect(verdicts.find((v) => v.metric === 'mainThreadCpuPerRequest')?.outcome).toBe('regressed');
    expect(verdicts.find((v) => v.metric === 'cpuPerRequest')?.outcome).toBe('unchanged');
  });
});

describe('retained bytes per request: by amount, with a margin no window can see below', () => {
  // Each window retains a constant 400 KiB whatever its requests (compiled code, bytecode
  // flushed and rebuilt), plus `leak` bytes per request; `requests` served in the window.
  const retained = (requests: number, leak: number, jitter: number): RoundMetrics =>
    round(1000, 10, 0, 100, {
      retainedBytesPerRequest: (400 * 1024 + jitter) / requests + leak,
      requests,
    });
  const jitters = [-30_000, 20_000, 5_000, -10_000, 15_000];
  const pairs = (baseRequests: number, headRequests: number, leak: number) =>
    judge(
      jitters.map((j) => retained(baseRequests, 0, j)),
      jitters.map((j) => retained(headRequests, leak, -j)),
      0.05,
    ).find((v) => v.metric === 'retainedBytesPerRequest');

  it('a 256-byte leak over 40 000 requests a window regresses, by bytes, against the 64-byte floor', () => {
    const v = pairs(40_000, 40_000, 256);
    expect(v?.outcome).toBe('regressed');
    expect(v?.change).toBeCloseTo(256, 0);
    expect(v?.margin).toBe(64);
  });

  it('a three times slower head that leaks nothing is no leak: the margin is the window noise over its requests', () => {
    // per request: base 400 KiB / 3 000, head 400 KiB / 1 000 — +273 B a request, and no leak
    const v = pairs(3_000, 1_000, 0);
    expect(v?.change).toBeGreaterThan(200);
    expect(v?.margin).toBeCloseTo(RETAINED_WINDOW_NOISE / 1_000, 6);
    expect(v?.outcome).not.toBe('regressed');
  });
});
