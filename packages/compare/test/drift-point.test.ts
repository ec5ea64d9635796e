import { describe, expect, it } from 'vitest';
import { pointFromReport } from '../src/drift/point.js';
import type { Measurements, RoundResult } from '../src/model.js';
import { report } from '../src/report/report.js';
import { resolveSettings } from '../src/settings/schema.js';
import { shardOf } from './helpers/shards.js';

function round(side: 'base' | 'head', n: number, rps: number): RoundResult {
  return {
    side,
    round: n,
    scenarios: [
      {
        scenario: 'GET /',
        load: {
          duration: 1,
          requests: { total: rps, mean: rps, perSecond: [rps] },
          latency: { mean: 10, p50: 10, p90: 12, p99: 20, max: 30 },
          statusCodes: { '200': rps },
          non2xx: 0,
          errors: 0,
          errorsByKind: {},
        },
        monitors: [],
        profilers: [],
      },
    ],
    pids: [n],
    warnings: [],
  };
}

const base = [1000, 1010, 990, 1005, 995, 1000];
const head = [950, 965, 930, 960, 940, 948];
const measurements: Measurements = {
  base: base.map((r, i) => round('base', i + 1, r)),
  head: head.map((r, i) => round('head', i + 1, r)),
  order: base.flatMap(() => ['base', 'head'] as const),
  scenarios: ['GET /'],
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:01:00.000Z',
};

describe('pointFromReport', () => {
  const settings = resolveSettings({ config: { start: 'node server.js', rounds: 6, profiler: 'none' } });
  const made = report([
    shardOf(measurements, settings, {
      base: { command: 'node server.js', cwd: '/b', ref: 'v1.0.0', sha: 'a'.repeat(40) },
      head: { command: 'node server.js', cwd: '/h', ref: 'HEAD', sha: 'b'.repeat(40) },
    }),
  ]);

  it('keeps the change and interval of each metric, and recovers the standard error of the paired log-ratios', () => {
    const point = pointFromReport(made, { id: 'run-1', date: new Date('2026-01-02T00:00:00Z') });
    expect(point).toMatchObject({
      id: 'run-1',
      commit: 'b'.repeat(40),
      date: '2026-01-02T00:00:00.000Z',
      threshold: 5,
    });
    const rps = point.scenarios[0]?.metrics.find((m) => m.metric === 'requestsPerSecond');
    const verdict = made.scenarios[0]?.metrics.find((m) => m.metric === 'requestsPerSecond');
    expect(rps?.change).toBe(verdict?.change);
    expect(rps?.ci).toEqual(verdict?.ci);
    expect(rps?.better).toBe('higher');
    expect(rps?.pairs).toBe(6);
    const d = base.map((b, i) => Math.log((head[i] ?? 0) / b));
    const mean = d.reduce((s, x) => s + x, 0) / d.length;
    const sd = Math.sqrt(d.reduce((s, x) => s + (x - mean) ** 2, 0) / (d.length - 1));
    expect(rps?.se).toBeCloseTo(sd / Math.sqrt(d.length), 6);
  });

  it('needs the head commit', () => {
    const noSha = { ...made, sides: { ...made.sides, head: { command: 'x', cwd: '/h' } } };
    expect(() => pointFromReport(noSha)).toThrow(/needs the head commit/);
  });
});
