import { describe, expect, it } from 'vitest';
import {
  applyVerdict,
  nextProbe,
  type SearchState,
  startSearch,
  stepsLeft,
  suspects,
} from '../src/bisect/search.js';

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
