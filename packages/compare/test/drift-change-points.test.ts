import { describe, expect, it } from 'vitest';
import { findChangePoints, type SeriesValue, varianceInflation } from '../src/drift/change-points.js';

/** A seeded normal generator, so every series here is fixed. */
function noise(seed: number) {
  let s = seed;
  const u = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  return () => {
    let a = 0;
    while (a === 0) a = u();
    return Math.sqrt(-2 * Math.log(a)) * Math.cos(2 * Math.PI * u());
  };
}

function series(levels: readonly number[], se: number, seed: number): SeriesValue[] {
  const n = noise(seed);
  return levels.map((level) => ({ value: level + n() * se, se }));
}

describe('findChangePoints', () => {
  it('finds nothing in a flat series whose points vary as their standard errors say', () => {
    let found = 0;
    for (let seed = 1; seed <= 40; seed++)
      found += findChangePoints(series(new Array(13).fill(0), 0.01, seed), { simulations: 400 }).changePoints
        .length;
    // alpha 0.05 per test: a few false steps in 40 series at most
    expect(found).toBeLessThanOrEqual(6);
  });

  it('finds a single clear step at its index, with the step size and an interval around it', () => {
    const levels = [0, 0, 0, 0, 0, 0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1];
    const result = findChangePoints(series(levels, 0.01, 3));
    expect(result.changePoints.map((c) => c.index)).toEqual([6]);
    const step = result.changePoints[0];
    expect(step?.first).toBe(6);
    expect(step?.last).toBe(6);
    expect(step?.step).toBeGreaterThan(0.08);
    expect(step?.step).toBeLessThan(0.12);
    expect(step?.ci[0]).toBeLessThan(step?.step ?? 0);
    expect(step?.ci[1]).toBeGreaterThan(step?.step ?? 0);
    expect(result.segments.map((s) => [s.start, s.end])).toEqual([
      [0, 6],
      [6, 12],
    ]);
  });

  it('finds the four steps of a staircase of 3 % steps with precise points', () => {
    const levels = [0, ...Array.from({ length: 12 }, (_, i) => Math.log1p(0.03 * Math.floor(i / 3 + 1)))];
    const result = findChangePoints(series(levels, 0.004, 5));
    expect(result.changePoints.map((c) => c.index)).toEqual([1, 4, 7, 10]);
  });

  it('places each step where it fits best between its neighbours, with a range that holds it', () => {
    // A staircase with noise where the step at 7, found inside a segment that also holds the
    // step at 10, fit best at 5 there (Z² of that segment); between its neighbours it fits at 7.
    const levels = [0, ...Array.from({ length: 12 }, (_, i) => Math.log1p(0.03 * Math.floor(i / 3 + 1)))];
    const result = findChangePoints(series(levels, 0.01, 10));
    expect(result.changePoints.map((c) => c.index)).toEqual([4, 7, 10]);
    for (const [c, step] of result.changePoints.map((c, i) => [c, [4, 7, 10][i] ?? 0] as const)) {
      expect(c.first).toBeLessThanOrEqual(step);
      expect(c.last).toBeGreaterThanOrEqual(step);
      expect(c.last - c.first).toBeLessThanOrEqual(2);
    }
  });

  it('weighs points by their standard errors: a wild point with a wide interval makes no step', () => {
    const points = series(new Array(12).fill(0), 0.01, 9);
    points[7] = { value: 0.2, se: 0.2 };
    expect(findChangePoints(points).changePoints).toEqual([]);
    // the same value with a narrow interval is a real outlier the method must not ignore
    points[7] = { value: 0.2, se: 0.01 };
    expect(findChangePoints(points).changePoints.length).toBeGreaterThan(0);
  });

  it('widens every variance when the points vary more than their intervals say', () => {
    const wide = series(new Array(20).fill(0), 0.03, 11).map((p) => ({ value: p.value, se: 0.01 }));
    expect(varianceInflation(wide)).toBeGreaterThan(3);
    expect(findChangePoints(wide).inflation).toBeGreaterThan(3);
    expect(varianceInflation(series(new Array(20).fill(0), 0.01, 11))).toBeLessThan(3);
  });

  it('is deterministic for a given seed', () => {
    const points = series([0, 0, 0, 0.02, 0.02, 0.02, 0.02], 0.008, 4);
    expect(findChangePoints(points)).toEqual(findChangePoints(points));
  });

  it('handles empty, single and zero-error series', () => {
    expect(findChangePoints([]).changePoints).toEqual([]);
    expect(findChangePoints([{ value: 1, se: 0 }]).segments).toHaveLength(1);
    const zeros = findChangePoints([
      { value: 0, se: 0 },
      { value: 0, se: 0 },
      { value: 0, se: 0 },
    ]);
    expect(zeros.changePoints).toEqual([]);
  });
});
