import { describe, expect, it } from 'vitest';
import { callsToNextStack } from '../src/measure/probe-downstream-code.js';

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
});
