import { describe, expect, it } from 'vitest';
import { compareSamples, pairedDifference, tCdf, tQuantile, tQuantile975 } from '../src/report/statistics.js';

describe('tQuantile975', () => {
  it.each([
    [1, 12.706],
    [4, 2.776],
    [10, 2.228],
    [30, 2.042],
    [120, 1.98],
  ])('df=%d gives %f', (df, expected) => {
    expect(tQuantile975(df)).toBeCloseTo(expected, 2);
  });
});

describe('compareSamples', () => {
  it('flags a clear 25 % throughput drop as significant', () => {
    const result = compareSamples([1000, 1010, 990, 1005], [750, 760, 745, 755]);
    expect(result.change).toBeCloseTo(-0.25, 2);
    expect(result.significant).toBe(true);
    expect(result.ci[1]).toBeLessThan(0);
  });

  it('does not flag noise around the same mean', () => {
    const result = compareSamples([1000, 1040, 960, 1010], [990, 1030, 970, 1000]);
    expect(result.significant).toBe(false);
    expect(result.ci[0]).toBeLessThan(0);
    expect(result.ci[1]).toBeGreaterThan(0);
  });

  it('finds a 40x change over two noisy rounds significant (log scale)', () => {
    const result = compareSamples([420, 450], [22_486, 13_499]);
    expect(result.significant).toBe(true);
    expect(result.ci[0]).toBeGreaterThan(0.5);
    expect(result.change).toBeCloseTo(Math.sqrt(22_486 * 13_499) / Math.sqrt(420 * 450) - 1, 6);
  });

  it('falls back to the difference of means when a sample is zero', () => {
    const result = compareSamples([0, 2], [4, 6]);
    expect(result.base).toBe(1);
    expect(result.change).toBe(4);
  });

  it('rejects an empty side', () => {
    expect(() => compareSamples([], [1])).toThrow(/base=0 head=1/);
  });
});

describe('tQuantile and tCdf (Student t, any level)', () => {
  it.each([
    [0.975, 1, 12.706],
    [0.975, 2, 4.303],
    [0.975, 5, 2.571],
    [0.995, 5, 4.032],
    [0.9975, 5, 4.773],
    [0.975, 30, 2.042],
    [0.95, 10, 1.812],
  ])('quantile %d with df=%d is %d (tables)', (p, df, q) => {
    expect(tQuantile(p, df)).toBeCloseTo(q, 3);
    expect(tCdf(q, df)).toBeCloseTo(p, 4);
  });

  it('paired interval: mean of the differences ± t·sd/√n, and a p-value', () => {
    const d = pairedDifference([0.1, 0.12, 0.08, 0.1], 0.05);
    expect(d.mean).toBeCloseTo(0.1, 10);
    const sd = Math.sqrt((0 + 0.0004 + 0.0004 + 0) / 3);
    expect(d.ci[1] - d.mean).toBeCloseTo((tQuantile(0.975, 3) * sd) / 2, 10);
    expect(d.p).toBeCloseTo(2 * (1 - tCdf(0.1 / (sd / 2), 3)), 12);
    expect(d.p).toBeLessThan(0.01);
    expect(pairedDifference([0.1]).ci).toEqual([Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]);
  });
});
