// Real servers (own processes, a route burning 10 ms of CPU) under real load (own process).
// These assert behaviour with generous margins — shedding protects the latency of the requests
// it accepts without giving up throughput — not micro-timings.
import { describe, expect, it } from 'vitest';
import { type LoadResult, measure } from './load-harness.js';

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
  ['http', 2, [], OVERLOAD],
  ['fastify', 1, [], OVERLOAD],
  // The handler defers its 10 ms to a later loop turn, so the admitting turn itself is quick and
  // the guard relies on its per-request cost estimate. That estimate starts from the cheap
  // priming requests, so the very first burst is admitted whole (about 1 s of work): a longer
  // warm-up keeps that one-off out of the steady-state comparison.
  ['http, deferred work', 1, ['--defer'], { ...OVERLOAD, warmup: 2 }],
] as const)('%s under 10x overload (100 connections)', (name, pairs, extra, load) => {
  const [framework = name] = name.split(',');
  // Two retries: other work on this shared machine can only make the guarded side look worse
  // (its queue is empty after each turn, so it idles whenever the load process is descheduled).
  // The goodput bar is 0.6x, not the 0.94-0.95x of the pinned bench (README): here four processes
  // share two cores, and the guarded side's load process, answered at once with 503s, sends some
  // twenty times the requests of the unguarded one and takes a larger share of the cores from its
  // server (fastify measured 0.64-0.92x across CI rehearsals on a busy day). A guard whose
  // shedding collapses goodput (@fastify/under-pressure: 0.34x in the bench) still fails it.
  it("sheds with Retry-After, halves the accepted p99 and keeps >= 0.6x the goodput (tolerates: 0.6x, not the pinned bench's 0.95x, as four processes share two cores; two retries, as a busy machine only makes the guarded side look worse)", {
    retry: 2,
  }, async () => {
    const unguarded: LoadResult[] = [];
    const guarded: LoadResult[] = [];
    // Both servers run AT THE SAME TIME, each with its own load process: load from other work
    // on this shared machine then falls on both sides alike, which back-to-back runs cannot
    // promise. The goodput ratio is about the same as with one server at a time on a quiet box.
    for (let i = 0; i < pairs; i++) {
      const [plain, protectedRun] = await Promise.all([
        measure(['--framework', framework, ...extra], load),
        measure(['--framework', framework, '--guard', ...extra], load),
      ]);
      unguarded.push(plain);
      guarded.push(protectedRun);
    }
    const log = [
      ...unguarded.map((r) => describeRun('unguarded', r)),
      ...guarded.map((r) => describeRun('guarded', r)),
    ];
    console.log(`${name}\n  ${log.join('\n  ')}`);

    for (const result of guarded) {
      expect(result.statusCodes['503']).toBeGreaterThan(0);
      expect(result.retryAfterMissing).toBe(0);
      expect(result.accepted.count).toBeGreaterThan(20);
    }
    for (const result of unguarded) expect(result.statusCodes['503'] ?? 0).toBe(0);

    const sum = (runs: LoadResult[], pick: (r: LoadResult) => number) =>
      runs.reduce((a, r) => a + pick(r), 0);
    const p99Guarded = sum(guarded, (r) => r.accepted.p99) / guarded.length;
    const p99Unguarded = sum(unguarded, (r) => r.accepted.p99) / unguarded.length;
    expect(p99Guarded).toBeLessThanOrEqual(p99Unguarded * 0.5);
    expect(sum(guarded, (r) => r.goodput)).toBeGreaterThanOrEqual(sum(unguarded, (r) => r.goodput) * 0.6);
  });
});
