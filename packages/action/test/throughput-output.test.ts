import type { Report } from '@hotpath/compare';
import { throughputOutput } from '@hotpath/compare/internal';
import { describe, expect, it } from 'vitest';

type Shape = Pick<Report, 'scenarios'>;
const report = (changes: number[], rpsPairs: (number | undefined)[]): Shape =>
  ({
    scenarios: rpsPairs.map((pairs, i) => ({
      metrics: pairs === undefined ? [] : [{ metric: 'requestsPerSecond', pairs, change: changes[i] ?? 0 }],
    })),
  }) as unknown as Shape;

describe('the throughput-change output', () => {
  it('is the lowest change in percent when every scenario told its requests/s', () => {
    expect(throughputOutput(report([-0.1, -0.2312], [6, 4]))).toBe('-23.12');
    expect(throughputOutput(report([0], [6]))).toBe('0.00');
  });

  it('is empty when a scenario had no pair left for requests/s (all spoiled) or none measured', () => {
    expect(throughputOutput(report([0, 0], [6, 0]))).toBe('');
    expect(throughputOutput(report([], [undefined]))).toBe('');
  });
});
