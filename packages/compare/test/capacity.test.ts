import { describe, expect, it } from 'vitest';
import {
  capacityFrom,
  capacityStep,
  nextBracketRate,
  nextCapacityRate,
  overloadStep,
  startRates,
  stepConnections,
  stepMeets,
  stepSeconds,
} from '../src/measure/capacity.js';
import type { CapacitySearch, LoadResult, Measurements, RoundResult, ScenarioRound } from '../src/model.js';
import { capacityFindings } from '../src/report/diagnosis.js';
import { resolveSettings } from '../src/settings/schema.js';
import { CAPACITY_PRECISION, CAPACITY_STEPS, describeSlo, formatSlo, parseSlo } from '../src/settings/slo.js';
import { scenarioMetrics, verdictPolicy } from '../src/verdict/policy.js';
import { metricPairs } from '../src/verdict/round-pairs.js';

describe('slo: written as text or an object, held as one canonical text', () => {
  it.each([
    ['p99<=50ms,errors<=1%', { p99: 50, errors: 1 }],
    ['p99 <= 50 ms, errors <= 0.5 %', { p99: 50, errors: 0.5 }],
    ['p99≤0.2s', { p99: 200, errors: 1 }],
    ['p90=20, p99=80ms', { p90: 20, p99: 80, errors: 1 }],
    ['P99: 50ms and errors: 2', { p99: 50, errors: 2 }],
    ['errors<=0%', { errors: 0 }],
  ])('%s', (text, targets) => {
    expect(parseSlo(text)).toEqual(targets);
  });

  it('takes an object from a config (numbers in ms and percent, or text)', () => {
    expect(parseSlo({ p99: '50 ms', errors: '1%' })).toEqual({ p99: 50, errors: 1 });
    expect(parseSlo({ p50: 5, p99: 40 })).toEqual({ p50: 5, p99: 40, errors: 1 });
  });

  it.each([
    '',
    'fast',
    'p98<=50ms',
    'p99<=-5ms',
    'p99<=0ms',
    'p99<=50us',
    'errors<=150%',
    'p99<=50ms,p99<=60ms',
    'p99<=50ms,,x',
  ])('refuses %j', (text) => {
    expect(parseSlo(text)).toBeUndefined();
  });

  it('refuses objects that are not targets', () => {
    expect(parseSlo({})).toBeUndefined();
    expect(parseSlo({ p99: '50 ms', latency: 3 })).toBeUndefined();
    expect(parseSlo(['p99<=50ms'])).toBeUndefined();
    expect(parseSlo(50)).toBeUndefined();
  });

  it('formats the canonical text and the words for people', () => {
    const targets = { p90: 20, p99: 50, errors: 1 };
    expect(formatSlo(targets)).toBe('p90<=20ms,p99<=50ms,errors<=1%');
    expect(parseSlo(formatSlo(targets))).toEqual(targets);
    expect(describeSlo(targets)).toBe('p90 ≤ 20 ms, p99 ≤ 50 ms, errors ≤ 1 %');
  });

  it('resolves from a flag, an input and a config to the same text, per scenario too', () => {
    const flag = resolveSettings({ overrides: { slo: 'p99 <= 50 ms' }, overridesSource: 'flag' });
    expect(flag.scenarios[0]?.slo).toBe('p99<=50ms,errors<=1%');
    const config = resolveSettings({
      config: { scenarios: [{ name: 'a', slo: { p99: '0.05s' } }, { name: 'b' }] },
    });
    expect(config.scenarios.map((s) => s.slo)).toEqual(['p99<=50ms,errors<=1%', undefined]);
  });

  it('a bad SLO names the value and what was expected', () => {
    expect(() => resolveSettings({ overrides: { slo: 'p99 < fast' }, overridesSource: 'flag' })).toThrow(
      /invalid --slo: expected an SLO such as p99<=50ms,errors<=1%.*got "p99 < fast"/,
    );
    expect(() => resolveSettings({ config: { slo: { p99: '50 ms', p42: 1 } } })).toThrow(/invalid "slo"/);
    expect(() => resolveSettings({ overrides: { slo: 'p99<=5ms' }, overridesSource: 'input' })).not.toThrow();
    expect(() => resolveSettings({ overrides: { slo: 'x' }, overridesSource: 'input' })).toThrow(
      /invalid input "slo"/,
    );
  });
});

const load = (rps: number, p99: number, failed = 0): LoadResult => ({
  duration: 1,
  requests: { total: rps, mean: rps, perSecond: [rps] },
  latency: { mean: p99 / 3, p50: p99 / 4, p90: p99 / 2, p99, max: p99 * 2 },
  statusCodes: { 200: rps - failed },
  non2xx: failed,
  errors: 0,
  errorsByKind: {},
});

describe('the capacity search', () => {
  const targets = { p99: 50, errors: 1 };

  it('a step meets the SLO when the rate was served and every target held', () => {
    expect(stepMeets(targets, capacityStep(targets, 1000, load(1000, 30)))).toBe(true);
    // the tail over the target
    expect(capacityStep(targets, 1000, load(1000, 51)).met).toBe(false);
    // the rate not served (the server fell behind: the open model's backlog)
    expect(capacityStep(targets, 1000, load(900, 30)).met).toBe(false);
    // fast failures are no capacity
    expect(capacityStep(targets, 1000, load(1000, 5, 20)).met).toBe(false);
    expect(capacityStep(targets, 1000, load(1000, 5, 10)).met).toBe(true);
    // a latency NaN (no response) never meets it
    expect(capacityStep(targets, 1000, load(1000, Number.NaN)).met).toBe(false);
  });

  it('ramps up by 25 % until a rate is missed, then bisects to the precision', () => {
    const step = (rate: number, met: boolean) => ({ rate, met });
    expect(nextBracketRate([step(1000, true)], 8, CAPACITY_PRECISION)).toBe(1250);
    expect(nextBracketRate([step(1000, true), step(1250, false)], 8, CAPACITY_PRECISION)).toBe(1118);
    const done = [step(1000, true), step(1250, false), step(1118, true), step(1182, false), step(1150, true)];
    expect(1182 / 1150).toBeLessThanOrEqual(CAPACITY_PRECISION);
    expect(nextBracketRate(done, 8, CAPACITY_PRECISION)).toBeUndefined();
    // nothing met: halve, down to 1 req/s
    expect(nextBracketRate([step(1000, false)], 8, CAPACITY_PRECISION)).toBe(500);
    expect(nextBracketRate([step(1, false)], 8, CAPACITY_PRECISION)).toBeUndefined();
    // bounded in steps
    const many = Array.from({ length: CAPACITY_STEPS }, (_, i) => step(100 * (i + 1), true));
    expect(nextBracketRate(many, CAPACITY_STEPS, CAPACITY_PRECISION)).toBeUndefined();
  });

  it('tries a missed rate once more before it counts; met at either try is met', () => {
    const at = (rate: number, p99: number) => capacityStep(targets, rate, load(rate, p99));
    // a stall at half the capacity: tried again, met, and the ramp goes on
    expect(nextCapacityRate([at(3600, 120)])).toBe(3600);
    expect(nextCapacityRate([at(3600, 120), at(3600, 3)])).toBe(4500);
    // missed twice: the bracket is set, bisection
    const twice = [at(3600, 3), at(4500, 90), at(4500, 80)];
    expect(nextCapacityRate(twice)).toBe(Math.round(Math.sqrt(3600 * 4500)));
    expect(capacityFrom([at(3600, 120), at(3600, 3)])).toBe(3600);
    // served under half the rate: far over the capacity, no stall explains it, not tried again
    const far = capacityStep(targets, 8000, load(3000, 900));
    expect(nextCapacityRate([far])).toBe(4000);
    expect(nextCapacityRate([at(3600, 3), capacityStep(targets, 4500, load(2000, 900))])).toBe(
      Math.round(Math.sqrt(3600 * 4500)),
    );
    // served just over half: tried again
    expect(nextCapacityRate([capacityStep(targets, 8000, load(4100, 900))])).toBe(8000);
    // within the step bound
    const full = Array.from({ length: CAPACITY_STEPS - 1 }, (_, i) => at(100 + i, 3));
    expect(nextCapacityRate([...full, at(5000, 90)])).toBeUndefined();
  });

  it('capacity is the highest rate met, or none (below the lowest rate tried)', () => {
    const steps = [1000, 1250, 1118].map((rate, i) => ({
      ...capacityStep(targets, rate, load(rate, i === 1 ? 80 : 20)),
    }));
    expect(capacityFrom(steps)).toBe(1118);
    expect(capacityFrom([capacityStep(targets, 500, load(500, 80))])).toBeNull();
  });

  it('sizes steps: enough requests for a p99, enough connections for the SLO at the rate', () => {
    expect(stepSeconds(10_000)).toBe(1);
    expect(stepSeconds(200)).toBe(2);
    expect(stepSeconds(10)).toBe(3);
    expect(stepConnections({ connections: 10 }, targets, 1000)).toBe(100);
    expect(stepConnections({ connections: 10 }, targets, 100)).toBe(50);
    expect(stepConnections({ connections: 200 }, targets, 100)).toBe(200);
    expect(stepConnections({ connections: 10 }, targets, 1e6)).toBe(1000);
    expect(startRates([load(2500, 10), load(3000, 10)])).toEqual([2250, 2250]);
    // a side slower than three quarters of the other's throughput starts at three quarters of its own
    expect(startRates([load(2000, 10), load(3000, 10)])).toEqual([1500, 2250]);
    expect(startRates([load(3000, 10), load(400, 10)])).toEqual([2250, 300]);
    expect(startRates([load(Number.NaN, 10), load(400, 10)])).toEqual([300, 300]);
    expect(startRates([load(0, 10), load(400, 10)])).toEqual([1, 300]);
  });
});

describe('goodput at twice base capacity', () => {
  it('counts successes within the latency target per second; without one, every success', () => {
    const shed = { ...load(1000, 5, 400), duration: 2 };
    // errors only: the successes per second
    expect(overloadStep({ errors: 1 }, 2000, shed)).toMatchObject({
      rate: 2000,
      goodput: 300,
      errorRate: 0.4,
    });
    // a latency target and no histogram to count within it: nothing is known to be within
    expect(overloadStep({ p99: 50, errors: 1 }, 2000, shed).goodput).toBe(0);
  });
});

describe('capacity in the verdict', () => {
  it('is a verdict metric of a scenario with an SLO, whatever metrics lists', () => {
    expect(scenarioMetrics(['requestsPerSecond', 'p50'], { slo: 'p99<=50ms,errors<=1%' })).toEqual([
      'requestsPerSecond',
      'p50',
      'capacity',
    ]);
    expect(scenarioMetrics(['requestsPerSecond', 'p50'], {})).toEqual(['requestsPerSecond', 'p50']);
    const policy = verdictPolicy({
      threshold: 5,
      hotThreshold: 5,
      retainedThreshold: 64,
      metrics: ['requestsPerSecond', 'p50'],
      failOn: 'metrics',
      failOnRegression: true,
      failOnInconclusive: false,
      scenarios: [{ name: 'a', slo: 'p99<=50ms,errors<=1%' }, { name: 'b' }],
    });
    expect(policy.tests).toBe(5);
  });

  const search = (capacity: number | null, rates: number[]): CapacitySearch => ({
    slo: 'p99<=50ms,errors<=1%',
    capacity,
    steps: rates.map((rate) => ({
      rate,
      requestsPerSecond: rate,
      p50: 1,
      p90: 2,
      p99: capacity !== null && rate <= capacity ? 10 : 90,
      errorRate: 0,
      met: capacity !== null && rate <= capacity,
    })),
  });
  const scenarioRound = (capacity: CapacitySearch): ScenarioRound => ({
    scenario: 's',
    load: load(1000, 10),
    monitors: [],
    profilers: [],
    capacity,
  });
  const rounds = (side: 'base' | 'head', searches: CapacitySearch[]): RoundResult[] =>
    searches.map((c, i) => ({ side, round: i + 1, scenarios: [scenarioRound(c)], pids: [], warnings: [] }));

  it('a side below the lowest rate tried, beside one that met the SLO, is bounded by that rate', () => {
    const measurements: Pick<Measurements, 'base' | 'head'> = {
      base: rounds('base', [search(1200, [500, 625, 781, 976, 1220, 1091, 1154, 1187])]),
      head: rounds('head', [search(null, [500, 250, 125, 62, 31, 15, 7, 3])]),
    };
    const [pair] = metricPairs(measurements, 's');
    expect(pair?.base.capacity).toBe(1200);
    expect(pair?.head.capacity).toBe(3);
    const both: Pick<Measurements, 'base' | 'head'> = {
      base: rounds('base', [search(null, [500, 250])]),
      head: rounds('head', [search(null, [500, 250])]),
    };
    expect(metricPairs(both, 's')[0]?.head.capacity).toBeNaN();
    expect(metricPairs(both, 's')[0]?.base.capacity).toBeNaN();
  });

  it('says which side met the SLO at no rate tried', () => {
    const findings = capacityFindings({
      base: [scenarioRound(search(1200, [500, 1200]))],
      head: [scenarioRound(search(null, [500, 250, 125])), scenarioRound(search(400, [500, 250, 400]))],
    });
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ kind: 'capacity-below', side: 'head', newInHead: true });
    expect(findings[0]?.message).toBe(
      'capacity at p99 ≤ 50 ms, errors ≤ 1 %: below the lowest rate tried (125 req/s) in 1 of 2 rounds: the server did not meet the SLO at any rate the search tried',
    );
  });
});
