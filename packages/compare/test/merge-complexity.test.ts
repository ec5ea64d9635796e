import { describe, expect, it } from 'vitest';
import type { Measurements, RoundResult, Shard } from '../src/model.js';
import { renderMarkdown } from '../src/render/markdown.js';
import { report } from '../src/report/report.js';
import { analyseScenario } from '../src/report/scenario.js';
import { mergeShards } from '../src/report/shards.js';
import { resolveSettings } from '../src/settings/schema.js';
import { lookLevels, verdictPolicy } from '../src/verdict/policy.js';
import { shardOf } from './helpers/shards.js';

// How much work merging shards and building the rounds table take, counted rather than timed: a
// proxy counts every property read of the input, at any depth. Linear work reads each round a
// bounded number of times, so doubling the rounds at most doubles the reads (a quadratic rounds
// table, as the one issue #28 found, quadruples them). The time is measured in bench/merge.mjs.

/** `value` behind proxies (every nested object too) that count property reads. */
function counting<T extends object>(value: T): { value: T; reads: () => number } {
  let reads = 0;
  const proxies = new WeakMap<object, object>();
  const wrap = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const known = proxies.get(v);
    if (known) return known;
    const proxy = new Proxy(v, {
      get(target, key, receiver) {
        reads++;
        return wrap(Reflect.get(target, key, receiver));
      },
    });
    proxies.set(v, proxy);
    return proxy;
  };
  return { value: wrap(value) as T, reads: () => reads };
}

const settings = resolveSettings({ config: { start: 'node s.js', url: '/', rounds: 100 } });
const [SCENARIO] = settings.scenarios;
if (!SCENARIO) throw new Error('the settings have a scenario');
const NAME = SCENARIO.name;

function round(side: 'base' | 'head', n: number): RoundResult {
  const rps = 100 + ((n * 7) % 11) + (side === 'head' ? 1 : 0);
  return {
    side,
    round: n,
    scenarios: [
      {
        scenario: NAME,
        load: {
          duration: 1,
          requests: { total: rps, mean: rps, perSecond: [rps] },
          latency: { mean: 2, p50: 2, p90: 3, p99: 4 + (n % 5), max: 9 },
          statusCodes: { '200': rps },
          non2xx: 0,
          errors: 0,
          errorsByKind: {},
        },
        monitors: [],
        profilers: ['node:inspector'],
      },
    ],
    pids: [1],
    warnings: [],
  };
}

function measurements(rounds: number): Measurements {
  const order: ('base' | 'head')[] = [];
  for (let i = 0; i < rounds; i++) order.push('base', 'head');
  return {
    base: Array.from({ length: rounds }, (_, i) => round('base', i + 1)),
    head: Array.from({ length: rounds }, (_, i) => round('head', i + 1)),
    order,
    scenarios: [NAME],
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:00.000Z',
  };
}

const shards = (count: number, rounds: number): Shard[] =>
  Array.from({ length: count }, (_, i) =>
    shardOf(measurements(rounds), settings, undefined, { index: i + 1, total: count }),
  );

/** Reads per round of `run` on `count` shards of `rounds` rounds, and at twice the shards. */
function readsAtTwice(count: number, rounds: number, run: (input: Shard[]) => unknown) {
  const reads = (n: number) => {
    const input = counting(shards(n, rounds));
    run(input.value);
    return input.reads();
  };
  const one = reads(count);
  const two = reads(2 * count);
  return { perRound: one / (count * rounds * 2), growth: two / one };
}

describe('merging shards and the rounds table take linear work', () => {
  it('mergeShards reads each round a bounded number of times (16 → 32 shards of 100 rounds)', () => {
    const { perRound, growth } = readsAtTwice(16, 100, (input) => mergeShards(input));
    expect(perRound).toBeLessThan(20);
    expect(growth).toBeLessThan(2.2);
  });

  it('report() reads each round a bounded number of times (16 → 32 shards of 100 rounds)', () => {
    const { perRound, growth } = readsAtTwice(16, 100, (input) => report(input));
    expect(perRound).toBeLessThan(200);
    expect(growth).toBeLessThan(2.2);
  });

  it('the rounds table of 32 shards × 1000 rounds: linear in analyseScenario and in the markdown', () => {
    // Past the limits report() keeps (100 rounds per shard): the stages themselves, unbounded.
    const merged = (count: number) => mergeShards(shards(count, 100)).measurements;
    const scale = (m: Measurements, times: number): Measurements => ({
      ...m,
      base: Array.from({ length: times }, () => m.base).flat(),
      head: Array.from({ length: times }, () => m.head).flat(),
      order: Array.from({ length: times }, () => m.order).flat(),
    });
    const count = (m: Measurements) => {
      const input = counting(m);
      const scenario = analyseScenario(
        input.value,
        SCENARIO,
        verdictPolicy(settings),
        lookLevels(verdictPolicy(settings)),
      );
      const analysed = input.reads();
      const made = report(shards(1, 100));
      const doc = counting({
        ...made,
        scenarios: made.scenarios.map((s) => ({ ...s, rounds: scenario.rounds })),
      });
      renderMarkdown(doc.value, { maxLength: Number.POSITIVE_INFINITY });
      return { analysed, rendered: doc.reads(), rows: scenario.rounds.length };
    };
    const half = count(scale(merged(16), 10)); // 16 shards × 1000 rounds
    const full = count(scale(merged(32), 10)); // 32 shards × 1000 rounds
    expect(full.rows).toBe(64_000);
    expect(full.analysed / half.analysed).toBeLessThan(2.2);
    expect(full.rendered / half.rendered).toBeLessThan(2.2);
    expect(full.analysed / full.rows).toBeLessThan(100);
  });
});
