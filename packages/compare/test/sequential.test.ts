import { describe, expect, it } from 'vitest';
import type { RoundResult, Side } from '../src/model.js';
import { verdictPolicy } from '../src/verdict/policy.js';
import { alphaShare, decideAfterPair, FIRST_LOOK_PAIRS, outcomeSoFar } from '../src/verdict/sequential.js';
import { seeded } from './helpers/random.js';
import { METRICS, settings, simulate, simulatedRound } from './helpers/simulated-rounds.js';

describe('alpha spending (rounds: auto)', () => {
  it('spends at most alpha over every look, the last look what is left', () => {
    let spent = 0;
    const shares: number[] = [];
    for (let pairs = FIRST_LOOK_PAIRS; pairs < 12; pairs++) {
      const share = alphaShare(pairs, 12, spent, false);
      expect(share).toBeGreaterThanOrEqual(0);
      shares.push(share);
      spent += share;
    }
    expect(spent).toBeLessThan(1);
    const last = alphaShare(12, 12, spent, true);
    expect(spent + last).toBeCloseTo(1, 12);
    // early looks get little, later looks more
    expect(shares[0]).toBeLessThan(shares[shares.length - 1] ?? 0);
  });

  it('A/A on a noisy machine: false alarms stay within the family alpha over all the looks (600 runs)', () => {
    const random = seeded(11);
    let alarms = 0;
    const runs = 600;
    for (let i = 0; i < runs; i++) {
      const run = simulate(random, 1, { rps: 0.03, cpu: 0.02 });
      expect(run.spent).toBeLessThanOrEqual(1 + 1e-9);
      if (run.outcome === 'regressed' || run.outcome === 'improved') alarms++;
    }
    // family alpha 5 %: allow three standard errors of the estimate above it
    expect(alarms / runs).toBeLessThan(0.05 + 3 * Math.sqrt((0.05 * 0.95) / runs));
  });

  it('A/A on a quiet machine ends shown no worse (unchanged or not-worse), not inconclusive (500 runs)', () => {
    // The run stops once the gate's question is answered: not worse than the threshold. Whether
    // the better side's bound is within it too (unchanged) is not waited for.
    const random = seeded(13);
    const outcomes = { unchanged: 0, 'not-worse': 0, other: 0 };
    const runs = 500;
    for (let i = 0; i < runs; i++) {
      const { outcome } = simulate(random, 1, { rps: 0.01, cpu: 0.01 });
      if (outcome === 'unchanged' || outcome === 'not-worse') outcomes[outcome]++;
      else outcomes.other++;
    }
    console.log(`A/A outcomes over ${runs} simulated runs: ${JSON.stringify(outcomes)}`);
    expect(outcomes.other / runs).toBeLessThan(0.1);
    // most end shown within the threshold both ways
    expect(outcomes.unchanged / runs).toBeGreaterThan(0.7);
  });

  it('a head truly worse than the threshold is called unchanged or not worse in at most alpha of runs, over all the looks (600 runs)', () => {
    // "unchanged" rests on each metric's one-sided worst case, without Bonferroni over the metrics
    // (every one must be within the threshold: an intersection–union test) but with alpha spent
    // over the looks. CPU +6 % against a 5 % threshold: a true regression past it.
    const random = seeded(17);
    let unchanged = 0;
    const runs = 600;
    for (let i = 0; i < runs; i++) {
      const { outcome } = simulate(random, 1.06, { rps: 0.03, cpu: 0.03 });
      if (outcome === 'unchanged' || outcome === 'not-worse') unchanged++;
    }
    expect(unchanged / runs).toBeLessThan(0.05 + 3 * Math.sqrt((0.05 * 0.95) / runs));
  });

  it('stops at the first look on a 4× regression', () => {
    const run = simulate(seeded(3), 4);
    expect(run.stop).toBe('conclusive');
    expect(run.outcome).toBe('regressed');
    expect(run.pairs).toBe(FIRST_LOOK_PAIRS);
  });

  it('finds a 5 % CPU regression in most runs within the budget (500 simulated runs)', () => {
    const random = seeded(5);
    let found = 0;
    for (let i = 0; i < 500; i++) {
      const run = simulate(random, 1.05);
      if (run.outcome === 'regressed') found++;
    }
    expect(found / 500).toBeGreaterThan(0.8);
  });
});

/**
 * A matrix of `shards` auto-rounds measurements of one pair of commits, merged as report() merges
 * them: every shard stopped on its own data, their pairs pooled, the intervals at the smallest
 * share of alpha that a shard's deciding look spent.
 */
function simulateShards(
  random: () => number,
  shards: number,
  factor: number,
  noise: { rps: number; cpu: number },
  run: typeof settings,
) {
  const merged: Record<Side, RoundResult[]> = { base: [], head: [] };
  let share = 1;
  for (let shard = 1; shard <= shards; shard++) {
    const one = simulate(random, factor, noise, { shard, settings: run });
    merged.base.push(...one.results.base);
    merged.head.push(...one.results.head);
    share = Math.min(share, one.lastShare);
  }
  return outcomeSoFar(merged, run.scenarios, verdictPolicy(run), share).outcome;
}

describe('shards of rounds: auto, merged', () => {
  const fine = { ...settings, threshold: 1 };
  // per round: 2.5 % sd of CPU per request, 4 % of throughput (a busy runner): one shard alone
  // cannot resolve a 3 % change against a 1 % threshold, four shards pooled can
  const busy = { rps: 0.04, cpu: 0.025 };

  it('A/A: four shards that each stopped on their own data, pooled, stay within the family alpha (300 runs)', () => {
    const random = seeded(23);
    let alarms = 0;
    const runs = 300;
    for (let i = 0; i < runs; i++) {
      const outcome = simulateShards(random, 4, 1, busy, fine);
      if (outcome === 'regressed' || outcome === 'improved') alarms++;
    }
    expect(alarms / runs).toBeLessThan(0.05 + 3 * Math.sqrt((0.05 * 0.95) / runs));
  });

  it('finds a 3 % CPU regression at threshold 1 % with four shards in most runs, where one shard mostly cannot (200 runs each)', () => {
    const found = (shards: number, seed: number) => {
      const random = seeded(seed);
      let n = 0;
      for (let i = 0; i < 200; i++) if (simulateShards(random, shards, 1.03, busy, fine) === 'regressed') n++;
      return n / 200;
    };
    expect(found(4, 29)).toBeGreaterThan(0.8);
    expect(found(1, 31)).toBeLessThan(0.5);
  });
});

describe('at a fixed rate, rounds: auto waits for p99', () => {
  // head's CPU per request doubles from the first pair (decided at the first look); its p99 is
  // three times base's, but the first three pairs' p99 are too spread to decide it yet
  const p99Ratios = [3, 1.05, 6, 3, 3.2, 2.8, 3, 3.1, 2.9, 3, 3, 3];
  const run = (rate: boolean) => {
    const [first] = settings.scenarios;
    if (!first) throw new Error('no scenario');
    const scenario = { ...first, ...(rate ? { rate: 500 } : {}) };
    const run = { ...settings, metrics: [...METRICS, 'p99' as const], scenarios: [scenario] };
    const results: Record<Side, RoundResult[]> = { base: [], head: [] };
    let spent = 0;
    for (let pair = 1; pair <= p99Ratios.length; pair++) {
      const jitter = 1 + 0.01 * (pair % 3);
      const base = simulatedRound('base', pair, 500, 100 * jitter, 60);
      const head = simulatedRound('head', pair, 500, 200 * jitter, 120);
      const latency = (r: RoundResult, p99: number) => {
        const [one] = r.scenarios;
        if (one) one.load.latency = { ...one.load.latency, p99 };
      };
      latency(base, 10 * jitter);
      latency(head, 10 * jitter * (p99Ratios[pair - 1] ?? 3));
      results.base.push(base);
      results.head.push(head);
      const decision = decideAfterPair({
        measurements: results,
        settings: run,
        pairs: pair,
        elapsedMs: pair * 15_000,
        spent,
      });
      if (decision.look) spent += decision.look.alphaShare;
      if (decision.stop) return { pair, decision, share: decision.look?.alphaShare ?? 1, results, run };
    }
    throw new Error('never stopped');
  };

  it('a closed model (p99 listed in metrics) stops at the first look on the CPU regression', () => {
    const { pair, decision } = run(false);
    expect(pair).toBe(FIRST_LOOK_PAIRS);
    expect(decision.outcome).toBe('regressed');
  });

  it('at a rate, the run goes on until p99 is decided too, and then p99 is regressed', () => {
    const { pair, decision, share, results, run: settingsAtRate } = run(true);
    expect(decision.stop).toBe('conclusive');
    expect(pair).toBeGreaterThan(FIRST_LOOK_PAIRS);
    const policy = verdictPolicy(settingsAtRate);
    expect(policy.waitFor.s).toEqual(['p99']);
    const earlier = outcomeSoFar(
      { base: results.base.slice(0, FIRST_LOOK_PAIRS), head: results.head.slice(0, FIRST_LOOK_PAIRS) },
      settingsAtRate.scenarios,
      policy,
      share,
    );
    expect(earlier).toEqual({ outcome: 'regressed', ready: false });
    expect(outcomeSoFar(results, settingsAtRate.scenarios, policy, share)).toEqual({
      outcome: 'regressed',
      ready: true,
    });
  });
});

describe('a scenario with an SLO waits for capacity', () => {
  const [first] = settings.scenarios;
  if (!first) throw new Error('no scenario');
  it('names capacity among the metrics a look waits for, beside p99 at a rate', () => {
    const withSlo = { ...settings, scenarios: [{ ...first, slo: 'p99<=50ms' }] };
    expect(verdictPolicy(withSlo).waitFor.s).toEqual(['capacity']);
    const atRate = {
      ...settings,
      metrics: [...settings.metrics, 'p99' as const],
      scenarios: [{ ...first, rate: 500, slo: 'p99<=50ms' }],
    };
    expect(verdictPolicy(atRate).waitFor.s).toEqual(['p99', 'capacity']);
    expect(verdictPolicy(settings).waitFor.s).toEqual([]);
  });
});
