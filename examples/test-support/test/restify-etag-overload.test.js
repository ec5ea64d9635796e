import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compareBriefly, sideMean } from '../compare.js';

const cwd = fileURLToPath(new URL('../../restify-etag/', import.meta.url));

describe('restify-etag story: overload at twice the capacity, without (base) and with overload-guard (head)', () => {
  it('the guarded server sheds with 503s and keeps its goodput; the unguarded one queues and loses it (tolerates: one more measurement when a slow spell of the machine left twice base’s capacity within what base serves)', async () => {
    const measure = () =>
      compareBriefly({
        cwd,
        // a quarter of the document: each request a quarter of the CPU, so a capacity step
        // (400 requests, within 1–3 s) lasts 1 s instead of 3 s
        baseStart: 'ETAG_MODE=slow SEED_RECORDS=1000 node server.js',
        headStart: 'ETAG_MODE=slow SEED_RECORDS=1000 GUARD=1 node server.js',
        // the verdict is not what this story reads: one round, one test (and capacity) in the family
        args: [
          '--rounds',
          '1',
          '--duration',
          '1',
          '--url',
          '/seed/v1',
          '--slo',
          'p99<=250ms',
          '--metrics',
          'requestsPerSecond',
          '--profiler',
          'none',
          '--memory',
          'off',
        ],
        // both sides' capacity searches: some 12 steps of about 1 s each
        timeout: 240_000,
      });
    // The story needs an overload: twice base's capacity must be more than base can serve. One
    // round's steps on a busy 2-core host can meet a slow spell on either side: a search that
    // finds base's capacity low, so base serves "twice" it within the SLO (a CI rehearsal,
    // 2026-12-03: 129 of 136 req/s, p99 226 ms against 250), or an overload step where the guarded
    // server keeps less (the next rehearsal: 61 req/s within the SLO against base's 34, at 138).
    // When the round does not tell the story, it is measured once more, and that one must.
    const overloadOf = (r, side) =>
      r.rounds.filter((row) => row.side === side).map((row) => row.capacitySearch?.overload);
    const tells = (r) =>
      overloadOf(r, 'base').every((o) => !(o?.goodput > 0.5 * o?.rate)) &&
      sideMean(r, 'head', 'goodput') > 2 * sideMean(r, 'base', 'goodput');
    let report = await measure();
    if (!tells(report)) {
      // said, so that a rehearsal's log shows how often the second measurement is needed
      console.log(
        `restify overload: measured once more; the first read ${JSON.stringify({ base: overloadOf(report, 'base'), head: overloadOf(report, 'head') })}`,
      );
      report = await measure();
    }
    const overload = (side) => overloadOf(report, side);
    const seen = JSON.stringify({ base: overload('base'), head: overload('head') });
    for (const side of ['base', 'head']) {
      expect(overload(side).length, seen).toBe(1);
      expect(overload(side).every(Boolean), seen).toBe(true);
    }
    // both sides got the same rate: twice base's capacity in that round
    expect(
      overload('head').map((o) => o.rate),
      seen,
    ).toEqual(overload('base').map((o) => o.rate));
    // the guard sheds a good part of it with 503s; without it nothing is refused
    for (const o of overload('head')) expect(o.errorRate, seen).toBeGreaterThan(0.1);
    for (const o of overload('base')) expect(o.errorRate, seen).toBe(0);
    expect(sideMean(report, 'head', 'goodput'), seen).toBeGreaterThan(
      2 * sideMean(report, 'base', 'goodput'),
    );
  }, 500_000);
});
