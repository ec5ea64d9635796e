import { describe, expect, it } from 'vitest';
import { placeStep, sideOfInterval, stepQuestions } from '../src/bisect/half-step.js';
import type { StepChange } from '../src/bisect/model.js';
import {
  applyVerdict,
  nextProbe,
  type SearchState,
  startSearch,
  stepsLeft,
  suspects,
} from '../src/bisect/search.js';
import { decidingChange, measurementFits, roundsBudget, stepCosts } from '../src/bisect/step.js';
import type { Report } from '../src/model.js';
import type { Settings } from '../src/settings/schema.js';
import { outcomeSoFar } from '../src/verdict/sequential.js';
import { seeded } from './helpers/random.js';
import { settings, simulate as simulateRounds } from './helpers/simulated-rounds.js';

const STEP: StepChange = {
  scenario: 's',
  metric: 'cpuPerRequest',
  unit: 'µs',
  better: 'lower',
  change: 0.15,
  ci: null,
};

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

describe("the search's budget, as the comparisons so far spent it", () => {
  // two measurements: 80 s with 64 s of rounds in 4 pairs, 50 s with 42 s of rounds in 3 pairs
  const costs = stepCosts([
    { seconds: 80, rounds: 64, pairs: 4 },
    { seconds: 50, rounds: 42, pairs: 3 },
  ]);
  it('takes the most any measurement spent outside its rounds, and the longest pair', () => {
    expect(costs).toEqual({ outside: 16, pair: 16 });
    expect(stepCosts([])).toBeUndefined();
    // a measurement ended before any pair (aborted): no pair time from it
    expect(stepCosts([{ seconds: 9, rounds: 0, pairs: 0 }])).toEqual({ outside: 9, pair: 0 });
  });
  it("gives a comparison's rounds what is left once its setup is paid", () => {
    expect(roundsBudget(100, costs)).toBe(84);
    expect(roundsBudget(100, undefined)).toBe(100);
  });
  it('starts a comparison only when its setup and the three pairs of a first look fit in what is left', () => {
    expect(measurementFits(64, costs)).toBe(true);
    expect(measurementFits(63.9, costs)).toBe(false);
    // before any measurement, anything of a second or more
    expect(measurementFits(1, undefined)).toBe(true);
    expect(measurementFits(0.5, undefined)).toBe(false);
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

describe('a step within the threshold: its deciding change', () => {
  it('is the metric whose interval came nearest the margin, not an error rate of 0 [0, 0]', () => {
    const r = {
      scenarios: [
        {
          name: 'GET /',
          metrics: [
            {
              metric: 'errorRate',
              unit: 'pts',
              better: 'lower',
              outcome: 'unchanged',
              change: 0,
              ci: [0, 0],
              margin: 0.05,
              inVerdict: true,
            },
            {
              metric: 'p50',
              unit: 'ms',
              better: 'lower',
              outcome: 'unchanged',
              change: 0.009,
              ci: [-0.064, 0.087],
              margin: 0.1,
              inVerdict: true,
            },
            {
              metric: 'cpuPerRequest',
              unit: 'µs',
              better: 'lower',
              outcome: 'not-worse',
              change: 0.01,
              ci: [-0.07, 0.03],
              margin: 0.05,
              inVerdict: true,
            },
          ],
        },
      ],
    } as unknown as Report;
    expect(decidingChange(r)).toMatchObject({ metric: 'p50', change: 0.009, ci: [-0.064, 0.087] });
  });
});

describe('a probe placed by half the step', () => {
  const step = {
    scenario: 'GET /',
    metric: 'cpuPerRequest',
    unit: 'µs',
    better: 'lower' as const,
    change: 0.15,
    ci: null,
  };

  it.each([
    [[-0.06, 0.07], 'good'], // within ±threshold not shown, but surely below 7.5 %
    [[0.09, 0.22], 'bad'],
    [[0.02, 0.12], undefined], // straddles half the step: undecided
  ] as const)('interval %j: %s', (ci, side) => {
    expect(sideOfInterval([ci[0], ci[1]], step)).toBe(side);
  });

  it('no interval, or no step: undecided', () => {
    expect(sideOfInterval(null, step)).toBeUndefined();
    expect(sideOfInterval([-0.01, 0.01], { ...step, change: -0.1 })).toBeUndefined();
  });

  it('a higher-is-better metric counts its drop as the step', () => {
    const rps = { ...step, metric: 'requestsPerSecond', better: 'higher' as const, change: -0.15 };
    expect(sideOfInterval([-0.2, -0.1], rps)).toBe('bad');
    expect(sideOfInterval([-0.03, 0.04], rps)).toBe('good');
  });
});

// The questions on simulated pairs (CPU per request and throughput with 3 % noise per round: more
// than the A/A runs at the defaults show here, ±3.5 % detectable CPU per request in 4–6 pairs),
// looked at as rounds: auto looks: the first step to show the change learns S, then probes at
// level 0 and level S.
describe('the step questions on simulated comparisons', () => {
  const run = { ...settings, metrics: ['cpuPerRequest' as const, 'requestsPerSecond' as const] };
  const questions = stepQuestions(run as unknown as Settings);
  const noise = { rps: 0.03, cpu: 0.03 };
  // the outcome report() gives the stopped rounds: judged at the deciding look's share
  const place = (r: ReturnType<typeof simulateRounds>, step?: StepChange) =>
    placeStep(
      r.results,
      outcomeSoFar(r.results, run.scenarios, questions.policy, r.lastShare).outcome,
      run.scenarios,
      questions.policy,
      r.lastShare,
      step,
    );

  it('before S is known: a +15 % step shown with its size; no step: within the threshold', () => {
    const random = seeded(11);
    let cpu = 0;
    for (let i = 0; i < 20; i++) {
      const r = simulateRounds(random, 1.15, noise, { settings: run, question: questions.sizing });
      const placed = place(r);
      expect(placed.verdict).toBe('bad');
      const c = placed.change;
      // CPU per request up or throughput down, by more than the threshold
      expect(c && (c.better === 'lower' ? c.change : -c.change)).toBeGreaterThan(0.05);
      // CPU per request whenever its interval shows the step at the look that stopped: it is
      // taken before a wall-clock metric (requests/s decides alone when CPU's does not show it yet)
      if (c?.metric === 'cpuPerRequest') cpu++;
    }
    // 16 of 20 here; 8 of 20 when the largest change per half-width alone chose, at the first look
    expect(cpu).toBeGreaterThanOrEqual(13);
    let none = 0;
    for (let i = 0; i < 20; i++) {
      const r = simulateRounds(random, 1, noise, { settings: run, question: questions.sizing });
      const placed = place(r);
      expect(placed.verdict).not.toBe('bad');
      if (placed.verdict === 'good') none++;
    }
    expect(none).toBeGreaterThanOrEqual(18);
  });

  it('probes at either level are placed on their side, 200 of 200, in fewer pairs than the verdict needs', () => {
    const random = seeded(12);
    const step: StepChange = { ...STEP, change: 0.15 };
    const pairs = { half: [] as number[], verdict: [] as number[] };
    for (let i = 0; i < 100; i++) {
      for (const [factor, side] of [
        [1, 'good'],
        [1.15, 'bad'],
      ] as const) {
        const r = simulateRounds(random, factor, noise, { settings: run, question: questions.probe(step) });
        expect(place(r, step).verdict).toBe(side);
        pairs.half.push(r.pairs);
      }
      pairs.verdict.push(simulateRounds(random, 1, noise, { settings: run }).pairs);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    expect(median(pairs.half)).toBeLessThan(median(pairs.verdict));
  });
});
