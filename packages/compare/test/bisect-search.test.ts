import { describe, expect, it } from 'vitest';
import {
  applyVerdict,
  nextProbe,
  type SearchState,
  startSearch,
  stepsLeft,
  suspects,
} from '../src/bisect/search.js';
import { decidingChange, sideOfHalfStep } from '../src/bisect/step.js';
import type { Report } from '../src/model.js';

// The bisect search's state machine, table-driven: which commit it probes, where the range goes.

/** Runs the search against a history whose first bad commit is `culprit`, skipping `broken`. */
function simulate(commits: number, culprit: number, broken: number[] = []) {
  let state: SearchState = startSearch(commits);
  const probes: number[] = [];
  for (let probe = nextProbe(state); probe !== undefined; probe = nextProbe(state)) {
    probes.push(probe);
    state = applyVerdict(state, probe, broken.includes(probe) ? 'skip' : probe >= culprit ? 'bad' : 'good');
  }
  return { state, probes };
}

describe('bisect search', () => {
  it('probes the middle, the later commit on a tie', () => {
    expect(nextProbe(startSearch(9))).toBe(4); // (0, 8): 4
    expect(nextProbe(startSearch(6))).toBe(3); // (0, 5): 2.5 → 3
    expect(nextProbe(startSearch(2))).toBeUndefined(); // good and bad only: bad is the culprit
  });

  it.each([1, 2, 5, 16, 31, 32])('finds the culprit %i of 33 commits in at most 5 probes', (culprit) => {
    const { state, probes } = simulate(33, culprit);
    expect(suspects(state)).toEqual([culprit]);
    expect(probes.length).toBeLessThanOrEqual(5);
  });

  it('passes over a skipped probe to the nearest open commit, and names the skipped next to the culprit', () => {
    expect(simulate(7, 5, [3]).probes).toEqual([3, 4, 5]);
    const { state } = simulate(6, 4, [3]);
    expect(suspects(state)).toEqual([3, 4]);
  });

  it('estimates the comparisons left: log₂ of the open commits, plus the culprit check', () => {
    expect(stepsLeft(startSearch(33))).toBe(6);
    expect(stepsLeft(startSearch(9))).toBe(4);
    expect(stepsLeft(startSearch(2))).toBe(1);
  });
});

describe("a step's deciding change", () => {
  const metric = (metric: string, outcome: string, change: number, margin: number, unit = 'µs') => ({
    metric,
    unit,
    better: 'lower',
    outcome,
    change,
    ci: [change - 0.1, change + 0.1],
    margin,
    inVerdict: true,
  });
  const reportOf = (...metrics: ReturnType<typeof metric>[]) =>
    ({ scenarios: [{ name: 'GET /', metrics }] }) as unknown as Report;

  it('is a regressed metric before an inconclusive one, and that before the rest', () => {
    const r = reportOf(
      metric('retainedBytesPerRequest', 'inconclusive', 64, 1024, 'B'),
      metric('cpuPerRequest', 'regressed', 0.15, 0.05),
      metric('p50', 'unchanged', 0.3, 0.05),
    );
    expect(decidingChange(r)?.metric).toBe('cpuPerRequest');
    expect(
      decidingChange(
        reportOf(metric('p50', 'unchanged', 0.3, 0.05), metric('p99', 'inconclusive', 0.01, 0.05)),
      )?.metric,
    ).toBe('p99');
  });

  it('weighs changes of different units by their margins (64 B of 1 KiB is less than 4 % of 5 %)', () => {
    const r = reportOf(
      metric('retainedBytesPerRequest', 'unchanged', 64, 1024, 'B'),
      metric('cpuPerRequest', 'unchanged', 0.04, 0.05),
    );
    expect(decidingChange(r)?.metric).toBe('cpuPerRequest');
  });
});

describe('an inconclusive probe placed by half the step', () => {
  const known = [
    {
      scenario: 'GET /',
      metric: 'cpuPerRequest',
      unit: 'µs',
      better: 'lower' as const,
      change: 0.16,
      ci: null,
    },
    {
      scenario: 'GET /',
      metric: 'cpuPerRequest',
      unit: 'µs',
      better: 'lower' as const,
      change: 0.14,
      ci: null,
    },
  ];
  const probe = (ci: [number, number], better = 'lower', metric = 'cpuPerRequest') =>
    ({
      scenarios: [{ name: 'GET /', metrics: [{ metric, better, change: (ci[0] + ci[1]) / 2, ci }] }],
    }) as unknown as Report;

  it.each([
    [[-0.06, 0.07], 'good'], // within ±threshold not shown, but surely below 7.5 %
    [[0.09, 0.22], 'bad'],
    [[0.02, 0.12], undefined], // straddles half the step: undecided
  ] as const)('interval %j: %s', (ci, side) => {
    expect(sideOfHalfStep(probe([ci[0], ci[1]]), known)).toBe(side);
  });

  it('nothing known, or the metric missing: undecided', () => {
    expect(sideOfHalfStep(probe([-0.01, 0.01]), [])).toBeUndefined();
    expect(sideOfHalfStep(probe([-0.01, 0.01], 'lower', 'p50'), known)).toBeUndefined();
  });

  it('a higher-is-better metric counts its drop as the step', () => {
    const rps = known.map((k) => ({
      ...k,
      metric: 'requestsPerSecond',
      better: 'higher' as const,
      change: -k.change,
    }));
    expect(sideOfHalfStep(probe([-0.2, -0.1], 'higher', 'requestsPerSecond'), rps)).toBe('bad');
    expect(sideOfHalfStep(probe([-0.03, 0.04], 'higher', 'requestsPerSecond'), rps)).toBe('good');
  });
});
