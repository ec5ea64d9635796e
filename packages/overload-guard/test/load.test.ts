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
  // One server at a time, on a CPU of its own, its load generator on the other (PINNED): the
  // guarded side's load process, answered at once with 503s, sends again at once, some twenty
  // times the unguarded one's requests (about 1 500 a second against 94), and each 503 costs the
  // server CPU: with 95 % of those shed, about 15 % of its CPU goes to answering them. So pinned,
  // guarded goodput reads about 0.85x here, not the bench's 0.94–0.95x (README; its client,
  // unpinned, shares the server's CPUs and sends fewer): fastify 0.76, 0.80, 0.82, 0.83, 0.84,
  // 0.85, 0.86, 0.86, 0.87x in nine runs (2026-12-07), node:http 0.86–0.89x in four; at 0.8x
  // fastify failed two of them. The bar is 0.7x,
  // below that storm's cost; a guard whose shedding collapses goodput (@fastify/under-pressure:
  // 0.34x in the bench) still fails it.
  it.skipIf(!PINNED)(
    'sheds with Retry-After, halves the accepted p99 and keeps >= 0.7x the goodput while answering some 20x the requests with 503s',
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
        unguarded.goodput * 0.7,
      );
    },
  );
});
