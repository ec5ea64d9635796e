import { describe, expect, it } from 'vitest';
import {
  callsToNextStack,
  STACK_BUDGET,
  STACK_COST_CAP_MS,
  STACK_INTERVAL_MS,
  stackInterval,
} from '../src/measure/probe-downstream-code.js';

describe('which call gets the next stack (drawn by count)', () => {
  it('is the next call when fewer than one call comes in a stack interval', () => {
    for (const mean of [0, 0.5, 1, Number.NaN]) expect(callsToNextStack(mean, 0.99)).toBe(1);
  });

  it('is a geometric draw with the mean asked: every call as likely as any other', () => {
    // the inverse of the distribution at evenly spaced points: the draws' mean is the mean asked
    const points = 20_000;
    for (const mean of [2, 7.5, 130]) {
      let sum = 0;
      let least = Number.POSITIVE_INFINITY;
      for (let i = 0; i < points; i++) {
        const draw = callsToNextStack(mean, (i + 0.5) / points);
        expect(Number.isInteger(draw)).toBe(true);
        least = Math.min(least, draw);
        sum += draw;
      }
      expect(least).toBe(1);
      expect(sum / points).toBeGreaterThan(mean * 0.98);
      expect(sum / points).toBeLessThan(mean * 1.02);
    }
  });

  it('spaces stacks by their smoothed cost; one slow stack (its process off the CPU) counts for little', () => {
    // 40 µs a stack: 13 ms to the next
    let { cost, interval } = stackInterval(0, 0.04);
    expect(interval).toBeCloseTo(0.04 / STACK_BUDGET, 6);
    // a stack that read 5 ms on the clock: capped, then a fifth of the way: not 1.7 s to the next
    ({ cost, interval } = stackInterval(cost, 5));
    expect(cost).toBeCloseTo(0.04 + 0.2 * (STACK_COST_CAP_MS - 0.04), 6);
    expect(interval).toBeLessThan(50);
    // and back towards 40 µs with the stacks after it
    for (let i = 0; i < 30; i++) ({ cost, interval } = stackInterval(cost, 0.04));
    expect(interval).toBeLessThan(14);
    // never closer than STACK_INTERVAL_MS
    expect(stackInterval(0, 0.001).interval).toBe(STACK_INTERVAL_MS);
  });
});
