// @hotpath-test every-cpu: it tests the placement itself (scripts/vitest-pin.mjs)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CompareOptions, compare } from '../src/compare.js';
import { plateauLevel } from '../src/measure/load-level.js';
import {
  allowedCpus,
  formatCpuList,
  hasTaskset,
  PARALLEL_SHARE,
  parallelShare,
  parseCpuList,
  planPlacement,
  roundWindows,
  widening,
} from '../src/measure/placement.js';
import type { MonitorSummary, RoundResult, Side } from '../src/model.js';
import { renderMarkdown } from '../src/render/markdown.js';
import { placementText } from '../src/render/words.js';
import { defined } from './helpers/defined.js';

describe('CPU lists and the plan', () => {
  it('reads and writes Linux CPU lists, and refuses what is not one', () => {
    expect(parseCpuList('0-3,6,8-9')).toEqual([0, 1, 2, 3, 6, 8, 9]);
    expect(parseCpuList(' 1 ')).toEqual([1]);
    for (const bad of ['', 'a', '3-1', '0-99999', '1,,2']) expect(parseCpuList(bad), bad).toBeUndefined();
    expect(formatCpuList([9, 0, 1, 2, 6, 8, 3, 3])).toBe('0-3,6,8-9');
  });

  it('puts the load generator on the last CPU and the servers on the others; nothing with one', () => {
    expect(planPlacement([1, 0])).toEqual({ server: [0], load: [1] });
    expect(planPlacement([0, 1, 2, 3])).toEqual({ server: [0, 1, 2], load: [3] });
    expect(planPlacement([5])).toBeUndefined();
    expect(planPlacement(undefined)).toBeUndefined();
  });
});

const monitor = (cpuMicros: number, mainThreadCpuMicros: number, runtimeCpuMicros?: number): MonitorSummary =>
  ({
    cpuMicros,
    mainThreadCpuMicros,
    ...(runtimeCpuMicros === undefined ? {} : { runtimeCpuMicros }),
  }) as MonitorSummary;
const round = (side: Side, ...scenarios: MonitorSummary[][]): RoundResult => ({
  side,
  round: 1,
  scenarios: scenarios.map((monitors, i) => ({
    scenario: `s${i}`,
    load: {} as RoundResult['scenarios'][number]['load'],
    monitors,
    profilers: [],
  })),
  pids: [],
  warnings: [],
});

/**
 * compare() on the hash fixture: base pbkdf2Sync, head pbkdf2 on libuv's pool; returns the report
 * and the progress notes.
 */
async function hashCompare(settings: Partial<CompareOptions>) {
  const notes: string[] = [];
  const out = mkdtempSync(join(tmpdir(), 'hotpath-placement-'));
  const report = await compare({
    baseStart: 'HASH_MODE=sync HASH_ITERATIONS=20000 node hash-server.cjs',
    headStart: 'HASH_MODE=async HASH_ITERATIONS=20000 node hash-server.cjs',
    cwd: new URL('./fixtures/', import.meta.url).pathname,
    url: '/auth',
    rounds: 2,
    profiler: 'none',
    memory: 'off',
    out,
    ...settings,
    onProgress: (e) => {
      if (e.phase === 'note') notes.push(e.message);
    },
  }).finally(() => rmSync(out, { recursive: true, force: true }));
  return { report, notes };
}

describe("a server's parallel work widens the servers' CPUs after round 1", () => {
  it('measures the CPU done beyond the busiest event loop, over every scenario and process', () => {
    // async pbkdf2: the pool does 90 %
    expect(parallelShare([[monitor(1_000_000, 100_000)]])).toBeCloseTo(0.9);
    // a cluster of two workers and an idle primary: one worker's loop is the busiest
    expect(
      parallelShare([[monitor(10_000, 9_000), monitor(500_000, 480_000), monitor(500_000, 490_000)]]),
    ).toBeCloseTo((1_010_000 - 490_000) / 1_010_000);
    // two scenarios: summed
    expect(
      parallelShare(roundWindows(round('base', [monitor(100, 90)], [monitor(300, 10)])).windows),
    ).toBeCloseTo(0.75);
    // the runtime's own threads (V8 compiling and collecting, the profiler's thread) are not the
    // server's: a plain server's 40 % off its loop right after a warm-up is none
    expect(parallelShare([[monitor(1_000, 600, 400)]])).toBe(0);
    expect(parallelShare([[monitor(1_000_000, 60_000, 40_000)]])).toBeCloseTo(0.9);
    // no per-thread time, or no CPU: no answer
    expect(parallelShare([[monitor(100, Number.NaN)]])).toBeUndefined();
    expect(parallelShare([[monitor(0, 0)]])).toBeUndefined();
  });

  it('widens a single server CPU when either side passes the share, and names the larger', () => {
    const one = { server: [0], load: [1] };
    const sync = round('base', [monitor(1_000, 950)]);
    const gc = round('base', [monitor(1_000, 880)]);
    const pool = round('head', [monitor(1_000, 100)]);
    expect(widening(one, [sync, pool].map(roundWindows))).toEqual({ side: 'head', share: 0.9 });
    expect(widening(one, [gc, sync].map(roundWindows))).toBeUndefined();
    const edge = round('base', [monitor(1_000, 1_000 * (1 - PARALLEL_SHARE))]);
    expect(widening(one, [roundWindows(edge)])?.side).toBe('base');
    // three server CPUs already run the pool in parallel; nothing placed, or already widened
    expect(widening({ server: [0, 1, 2], load: [3] }, [roundWindows(pool)])).toBeUndefined();
    expect(widening(undefined, [roundWindows(pool)])).toBeUndefined();
    expect(
      widening({ ...one, widened: { side: 'head', share: 0.9, from: [0] } }, [roundWindows(pool)]),
    ).toBeUndefined();
  });

  it('the report says where the servers ran and why they were widened', () => {
    expect(placementText({ server: [0], load: [1] })).toBe(
      'servers on CPU 0, the load generator (hotpath) on CPU 1',
    );
    expect(
      placementText({ server: [0, 1], load: [1], widened: { side: 'head', share: 0.904, from: [0] } }),
    ).toBe(
      "servers on CPUs 0, 1, the load generator (hotpath) on CPU 1 (widened from CPU 0: head's threads and processes beyond its event loop did 90 % of its CPU in round 1, which one CPU would serialise; round 1 was measured again)",
    );
    expect(
      placementText({
        server: [0, 1],
        load: [1],
        widened: { side: 'base', share: 0.5, from: [0], at: 'load-level' },
      }),
    ).toMatch(/did 50 % of its CPU in the load-level search, .*; the search ran again\)$/);
    expect(placementText(undefined)).toMatch(/^none/);
  });

  // Real servers: pbkdf2Sync (base) against pbkdf2 on libuv's pool (head). Where hotpath can place
  // the servers on one CPU (Linux, taskset, exactly two CPUs: the GitHub runner of a private
  // repository), head's pool threads make the run widen after round 1 and measure it again.
  const cpus = allowedCpus();
  const placeable = cpus?.length === 2 && hasTaskset();
  it.runIf(placeable)('a pool-heavy head gets every CPU, and round 1 is measured again', async () => {
    const { report, notes } = await hashCompare({ duration: 1, warmup: 0.5, connections: 8 });
    const placement = defined(report.environment.placement, 'the placement');
    expect(placement.server).toEqual(cpus);
    expect(placement.widened).toMatchObject({ side: 'head', from: [defined(cpus)[0]] });
    expect(defined(placement.widened).share).toBeGreaterThanOrEqual(PARALLEL_SHARE);
    expect(notes.filter((n) => n.includes('round 1 is measured again'))).toHaveLength(1);
    // the discarded pair is not in the report: two pairs, as asked
    expect(report.order).toEqual(['base', 'head', 'base', 'head']);
    expect(report.scenarios[0]?.metrics[0]?.pairs).toBe(2);
  });

  // Short windows right after a short warm-up: V8's threads compile optimised code and the CPU
  // profiler's thread samples, 35–45 % of a plain single-threaded server's CPU off its loop. Not
  // parallel work: the servers stay on one CPU (they were widened, and round 1 measured again,
  // before the probe told the runtime's threads apart).
  it.runIf(placeable)('a single-threaded server in short windows stays on one CPU', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-placement-plain-'));
    try {
      writeFileSync(
        join(dir, 'plain.cjs'),
        `require('node:http').createServer((req, res) => {
  let x = 0;
  for (let i = 0; i < 20000; i++) x += i % 7;
  res.end(String(x));
}).listen(Number(process.env.PORT), '127.0.0.1');`,
      );
      const notes: string[] = [];
      const report = await compare({
        baseStart: 'node plain.cjs',
        headStart: 'node plain.cjs',
        cwd: dir,
        rounds: 2,
        duration: 0.7,
        warmup: 0.2,
        connections: 2,
        out: join(dir, 'out'),
        onProgress: (e) => {
          if (e.phase === 'note') notes.push(e.message);
        },
      });
      const placement = defined(report.environment.placement, 'the placement');
      expect(placement.server).toEqual([defined(cpus)[0]]);
      expect(placement.widened, notes.join('\n')).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// connections: auto with real servers: base's search and head's, the larger plateau held for both;
// where the servers sit on one CPU, head's pool widens them from the search and it runs again.
describe('connections: auto searches both sides', () => {
  const cpus = allowedCpus();
  const placeable = cpus?.length === 2 && hasTaskset();
  it('holds the larger plateau of the two, and head’s pool widens the servers before round 1', async () => {
    // one server at a time: the search's steps are then 1 s of load each, without slices' pauses
    const { report, notes } = await hashCompare({
      duration: 0.5,
      warmup: 0.3,
      slice: 0,
      connections: 'auto',
    });
    const level = defined(report.environment.loadLevels?.[0], 'the load level');
    const headSteps = defined(level.headSteps, "head's steps");
    expect(level.steps.length).toBeGreaterThanOrEqual(3);
    expect(headSteps.length).toBeGreaterThanOrEqual(3);
    expect(level.connections).toBe(Math.max(plateauLevel(level.steps), plateauLevel(headSteps)));
    expect(report.settings.scenarios[0]?.connections).toBe(level.connections);
    expect(renderMarkdown(report)).toContain(
      'the smallest count at which both sides reached their throughput plateau',
    );
    if (!placeable) return;
    expect(report.environment.placement?.widened).toMatchObject({ side: 'head', at: 'load-level' });
    expect(notes.filter((n) => n.includes('the search runs again'))).toHaveLength(1);
    // widened before the rounds: round 1 is not measured again
    expect(notes.filter((n) => n.includes('round 1 is measured again'))).toEqual([]);
    expect(report.order).toEqual(['base', 'head', 'base', 'head']);
  });
});
