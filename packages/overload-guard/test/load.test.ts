// @hotpath-test every-cpu: the harness pins a server and its load to a CPU each (scripts/vitest-pin.mjs)
// Real servers (own processes, a route burning 10 ms of CPU) under real load (own process).
// These assert behaviour with generous margins — shedding protects the latency of the requests
// it accepts without giving up throughput — not micro-timings.
import { describe, expect, it } from 'vitest';
import { type LoadResult, measure, PINNED } from './load-harness.js';

const OVERLOAD = { connections: 100, duration: 2.5, warmup: 1 };

function describeRun(label: string, result: LoadResult): string {
  return `${label}: goodput ${result.goodput}/s, accepted p99 ${result.accepted.p99} ms, shed ${(result.shedRatio * 100).toFixed(1)}%`;
}

describe('under light load (one connection)', () => {
  it('sheds nothing with the default options', async () => {
    const result = await measure(['--framework', 'http', '--guard'], {
      connections: 1,
      duration: 2,
      warmup: 0.5,
    });
    expect(result.statusCodes['200']).toBeGreaterThan(20);
    expect(result.statusCodes['503'] ?? 0).toBe(0);
    expect(result.errors).toBe(0);
  });
});

describe.each([
  ['http', OVERLOAD],
  ['fastify', OVERLOAD],
  // The handler defers its 10 ms to a later loop turn, so the admitting turn itself is quick and
  // the guard relies on its per-request cost estimate. That estimate starts from the cheap
  // priming requests, so the very first burst is admitted whole (about 1 s of work): a longer
  // warm-up keeps that one-off out of the steady-state comparison.
  ['http, deferred work', { ...OVERLOAD, warmup: 2 }],
] as const)('%s under 10x overload (100 connections)', (name, load) => {
  const [framework = name] = name.split(',');
  const extra = name.endsWith('deferred work') ? ['--defer'] : [];
  // One server at a time, on a CPU of its own, its load generator on the other (PINNED), as the
  // bench pins them: the guarded side's load process, answered at once with 503s, sends some
  // twenty times the unguarded one's requests, and unpinned it took a share of its own server's
  // CPU (0.64–0.92x on a busy day, when both servers ran at once on two shared cores). Pinned, the
  // bench reads 0.94–0.95x (README); the bar is 0.8x, a margin for a runner's other work. A guard
  // whose shedding collapses goodput (@fastify/under-pressure: 0.34x in the bench) fails it.
  it.skipIf(!PINNED)(
    'sheds with Retry-After, halves the accepted p99 and keeps >= 0.8x the goodput, pinned as the bench',
    async () => {
      const unguarded = await measure(['--framework', framework, ...extra], load, true);
      const guarded = await measure(['--framework', framework, '--guard', ...extra], load, true);
      console.log(`${name}\n  ${describeRun('unguarded', unguarded)}\n  ${describeRun('guarded', guarded)}`);
      expect(guarded.statusCodes['503']).toBeGreaterThan(0);
      expect(guarded.retryAfterMissing).toBe(0);
      expect(guarded.accepted.count).toBeGreaterThan(20);
      expect(unguarded.statusCodes['503'] ?? 0).toBe(0);
      expect(guarded.accepted.p99).toBeLessThanOrEqual(unguarded.accepted.p99 * 0.5);
      expect(guarded.goodput, describeRun('guarded', guarded)).toBeGreaterThanOrEqual(
        unguarded.goodput * 0.8,
      );
    },
  );
});
