import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DOWNSTREAM_LIMITS,
  type DownstreamWindow,
  DownstreamWindowSchema,
  OTHER,
} from '../src/downstream-model.js';
import { downstreamPerRequest, mergeDownstream } from '../src/downstream-summary.js';
import { relativeLocation } from '../src/measure/locations.js';
import { functionCells, waitingMarkdown } from '../src/render/downstream-rows.js';
import { metricSpec, ON_PATH_MIN } from '../src/settings/metrics.js';
import { diffDownstream } from '../src/verdict/downstream-diff.js';

// Windows the probe recorded (test/downstream-probe.test.ts, the fixture server's N+1 routes on
// PostgreSQL and Redis and its Promise.all route), read as the processes of one round.
const recorded = JSON.parse(
  readFileSync(new URL('./fixtures/downstream/round-windows.json', import.meta.url), 'utf8'),
) as { windows: unknown[] };
const [pgPerItem, redisPerItem, pgTogether] = recorded.windows.map((w) =>
  DownstreamWindowSchema.parse(w),
) as [DownstreamWindow, DownstreamWindow, DownstreamWindow];

describe('mergeDownstream', () => {
  it('sums the processes of a round: requests, endpoints by name, functions by name + file + line', () => {
    const merged = mergeDownstream([pgPerItem, redisPerItem, pgTogether], (file) =>
      relativeLocation(file, '/srv/app'),
    );
    expect(merged).toBeDefined();
    const m = merged as DownstreamWindow;
    expect(DownstreamWindowSchema.parse(m)).toEqual(m);
    expect(m.processes).toBe(3);
    expect(m.requests).toBe(120);
    expect(m.requestsWithCalls).toEqual({
      withCalls: 120,
      calls: 400 + 400 + 120,
      unionMicros: 256_484 + 100_013 + 270_710,
      sumMicros: 256_484 + 100_013 + 649_363,
    });
    // PostgreSQL in two processes: one row; sorted by waiting
    expect(m.endpoints.map((e) => [e.endpoint, e.protocol, e.calls, e.waitingMicros])).toEqual([
      ['127.0.0.1:43443', 'postgres', 520, 256_484 + 649_363],
      ['127.0.0.1:40685', 'redis', 400, 100_013],
    ]);
    // files relative to the checkout; the request handler (in every process) is one function
    expect(m.functions.map((f) => [f.name, f.file, f.line, f.calls])).toEqual([
      ['loadThreeTogether', 'downstream-server.cjs', 30, 120],
      ['loadItemsOneByOne', 'downstream-server.cjs', 19, 400],
      ['readCachedItems', 'downstream-server.cjs', 49, 400],
      ['(anonymous)', 'downstream-server.cjs', 93, 0],
      ['(anonymous)', 'downstream-server.cjs', 31, 0],
    ]);
  });

  it('keeps each stack pointing at its own functions and endpoint after the renumbering', () => {
    const m = mergeDownstream([pgPerItem, redisPerItem], (file) =>
      relativeLocation(file, '/srv/app'),
    ) as DownstreamWindow;
    const named = m.stacks.map((s) => [
      s.frames.map((f) => m.functions[f]?.name).join(' > '),
      m.endpoints[s.endpoint]?.protocol,
      s.calls,
    ]);
    expect(named).toEqual([
      ['loadItemsOneByOne', 'postgres', 360],
      ['readCachedItems', 'redis', 360],
      ['(anonymous) > loadItemsOneByOne', 'postgres', 40],
      ['(anonymous) > readCachedItems', 'redis', 40],
    ]);
    // the stacks' waiting adds up to the endpoints' (each rounded to the µs by the probe)
    const stacks = m.stacks.reduce((n, s) => n + s.waitingMicros, 0);
    const endpoints = m.endpoints.reduce((n, e) => n + e.waitingMicros, 0);
    expect(Math.abs(stacks - endpoints)).toBeLessThanOrEqual(m.stacks.length);
  });

  it('one window is itself (files made relative); none is undefined', () => {
    const one = mergeDownstream([pgPerItem], (file) =>
      relativeLocation(file, '/srv/app'),
    ) as DownstreamWindow;
    expect(one.endpoints).toEqual(pgPerItem.endpoints);
    expect(one.functions[0]?.file).toBe('downstream-server.cjs');
    expect(mergeDownstream([undefined])).toBeUndefined();
    expect(mergeDownstream([])).toBeUndefined();
  });

  it('past the bound of endpoints, the rest is one row named OTHER', () => {
    const many: DownstreamWindow = {
      ...pgPerItem,
      endpoints: Array.from({ length: DOWNSTREAM_LIMITS.endpoints }, (_, i) => ({
        ...(pgPerItem.endpoints[0] as DownstreamWindow['endpoints'][number]),
        endpoint: `10.0.0.1:${1000 + i}`,
      })),
      stacks: [],
    };
    const more: DownstreamWindow = { ...redisPerItem, stacks: [] };
    const m = mergeDownstream([many, more]) as DownstreamWindow;
    expect(m.endpoints).toHaveLength(DOWNSTREAM_LIMITS.endpoints + 1);
    expect(m.endpoints.find((e) => e.endpoint === OTHER)?.calls).toBe(400);
  });
});

/** The verdict's waiting per request of a window, as the metric reads it. */
const waitingPerRequest = (downstream: ReturnType<typeof downstreamPerRequest>) =>
  (metricSpec('waitingPerRequest')?.value ?? (() => Number.NaN))({ downstream } as never);

describe('downstreamPerRequest', () => {
  it('N+1: 10 calls per request; in series the waiting is the calls’ sum', () => {
    const n1 = downstreamPerRequest(pgPerItem);
    expect(n1?.calls).toBe(10);
    expect(n1?.seriality).toBe(1);
    expect(n1?.endpoints[0]).toMatchObject({ protocol: 'postgres', calls: 10, connections: 0 });
    expect(n1?.endpoints[0]?.waitingPerCallMicros).toBeCloseTo(256_484 / 400, 6);
  });

  it('awaited together: the waiting per request is well below the calls’ sum', () => {
    const together = downstreamPerRequest(pgTogether);
    expect(together?.calls).toBe(3);
    expect(together?.waitingMicros).toBeCloseTo(270_710 / 40, 6);
    expect(together?.callMicros).toBeCloseTo(649_363 / 40, 6);
    expect(together?.seriality).toBeLessThan(0.5);
  });

  it("every call on a request's path: waiting per request is a metric", () => {
    const n1 = downstreamPerRequest(pgPerItem);
    expect(n1?.onPath).toBe(1);
    expect(waitingPerRequest(n1)).toBeCloseTo(256_484 / 40, 6);
  });

  it("calls run outside the requests' contexts (bluebird under knex 0.19): waiting per request is not measured", () => {
    // Seen on a Koa + knex 0.19 application: 2 calls of 3.6 ms per request, 278 µs "waiting per
    // request" from the few calls whose context survived.
    const lost: DownstreamWindow = {
      ...pgPerItem,
      requestsWithCalls: { withCalls: 4, calls: 4, unionMicros: 2_600, sumMicros: 2_600 },
    };
    const d = downstreamPerRequest(lost);
    expect(d?.calls).toBe(10);
    expect(d?.onPath).toBeCloseTo(4 / 400, 6);
    expect(waitingPerRequest(d)).toBeNaN();
    // half on the path is enough
    const half = downstreamPerRequest({
      ...pgPerItem,
      requestsWithCalls: { ...pgPerItem.requestsWithCalls, calls: 200 },
    });
    expect(half?.onPath).toBe(ON_PATH_MIN);
    expect(waitingPerRequest(half)).toBeGreaterThan(0);
  });

  it('no requests: nothing per request', () => {
    expect(downstreamPerRequest({ ...pgPerItem, requests: 0 })).toBeUndefined();
    expect(downstreamPerRequest(undefined)).toBeUndefined();
  });
});

describe('background work (calls made outside any request)', () => {
  // A timer's job beside the requests' N+1 (kutt's cron batchRemove showed as one of the
  // requests' functions, 2026-12-06): its row is marked, the requests' rows are not.
  const withJob = (outside: number): DownstreamWindow => ({
    ...pgPerItem,
    functions: [
      ...pgPerItem.functions,
      {
        name: 'sweepExpired',
        file: 'jobs/sweep.js',
        line: 4,
        column: 1,
        calls: 12,
        waitingMicros: 9_000,
        outsideCalls: outside,
      },
    ],
  });
  const rounds = (window: DownstreamWindow) =>
    [1, 2, 3].map((round) => ({ round, monitors: [{ downstream: window }] })) as never;

  it('marks a function background when 90 % of its calls were outside requests, and says so', () => {
    const diff = diffDownstream(rounds(withJob(12)), rounds(withJob(11)), 0.05);
    const job = diff?.functions.find((f) => f.name === 'sweepExpired');
    expect(job?.background).toBe(true);
    expect(diff?.functions.find((f) => f.name === 'loadItemsOneByOne')?.background).toBeUndefined();
    const row = functionCells(job as NonNullable<typeof job>);
    expect(row.background).toBe('background: outside requests');
    const markdown = waitingMarkdown(
      { links: undefined } as never,
      { downstream: diff } as never,
      '###',
    ).join('\n');
    expect(markdown).toMatch(/`sweepExpired` \(background: outside requests\)/);
    expect(markdown).not.toMatch(/`loadItemsOneByOne` \(background/);
  });

  it('says nothing of background where a library lost the requests’ contexts (most calls outside)', () => {
    const lost = (w: DownstreamWindow): DownstreamWindow => ({
      ...w,
      requestsWithCalls: { withCalls: 4, calls: 4, unionMicros: 2_600, sumMicros: 2_600 },
    });
    const diff = diffDownstream(rounds(lost(withJob(12))), rounds(lost(withJob(12))), 0.05);
    expect(diff?.functions.find((f) => f.name === 'sweepExpired')).toBeDefined();
    expect(diff?.functions.some((f) => f.background)).toBe(false);
  });

  it('a function mostly called from requests is not background', () => {
    const diff = diffDownstream(rounds(withJob(6)), rounds(withJob(6)), 0.05);
    expect(diff?.functions.find((f) => f.name === 'sweepExpired')?.background).toBeUndefined();
  });
});
