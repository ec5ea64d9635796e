import { describe, expect, it } from 'vitest';
import type { DriftAnalysis, MetricTrend } from '../src/drift/analysis.js';
import { driftStepOutputs } from '../src/run/outputs.js';

// drift-step-good/drift-step-bad: the range a bisect-measure job searches, from the analysis.

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const D = 'd'.repeat(40);

const trend = (better: 'higher' | 'lower', steps: MetricTrend['steps']): MetricTrend =>
  ({
    scenario: 's',
    metric: 'cpuPerRequest',
    better,
    inVerdict: true,
    points: [],
    steps,
  }) as unknown as MetricTrend;

const analysis = (confirmed: boolean, exceeded: MetricTrend[]) =>
  ({ confirmed, exceeded, trends: exceeded, unresolved: [], status: 'beyond' }) as unknown as DriftAnalysis;

describe('driftStepOutputs', () => {
  it("is the surest metric's latest step in the worse direction", () => {
    const cpu = trend('lower', [
      { after: A, upTo: B, change: 0.12, ci: [0.08, 0.16] },
      { after: B, upTo: C, change: -0.03, ci: [-0.05, -0.01] }, // better: not the one to bisect
    ]);
    expect(driftStepOutputs(analysis(true, [cpu]))).toEqual({ 'drift-step-good': A, 'drift-step-bad': B });
    const rps = trend('higher', [
      { after: A, upTo: B, change: -0.1, ci: [-0.14, -0.06] },
      { after: C, upTo: D, change: -0.08, ci: [-0.12, -0.04] },
    ]);
    expect(driftStepOutputs(analysis(true, [rps, cpu]))).toEqual({
      'drift-step-good': C,
      'drift-step-bad': D,
    });
  });

  it('is empty unless the drift is confirmed and a worse step was located', () => {
    const cpu = trend('lower', [{ after: A, upTo: B, change: 0.12, ci: [0.08, 0.16] }]);
    const empty = { 'drift-step-good': '', 'drift-step-bad': '' };
    expect(driftStepOutputs(analysis(false, [cpu]))).toEqual(empty);
    expect(driftStepOutputs(analysis(true, []))).toEqual(empty);
    expect(driftStepOutputs(analysis(true, [trend('lower', [])]))).toEqual(empty);
  });
});
