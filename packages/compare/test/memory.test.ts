import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compare } from '../src/compare.js';
import { allocatedBetween } from '../src/measure/probe-memory.js';
import { probePath } from '../src/measure/probe-path.js';
import { runRound } from '../src/measure/round.js';
import type { MetricVerdict, Report, ScenarioRound } from '../src/model.js';
import { metricOutput } from '../src/run/outputs.js';
import { resolveSettings } from '../src/settings/schema.js';
import { monitorSchema } from '../src/shard/schema.js';
import { roundMetrics } from '../src/verdict/round-pairs.js';
import { defined } from './helpers/defined.js';
import { levelled } from './helpers/levelled.js';

// Memory in the verdict, with real servers: the probe's full collections at the window's edges and
// v8.GCProfiler's record in between. The changes are far larger than the noise (a plain server here
// retains tens of bytes per request over a window, from JIT and lazily built objects): an array of
// 2 048 elements (16 KiB with 8-byte slots, 8 KiB with pointer compression) or a 16 KiB Buffer
// kept or allocated per request.
const server = (change: 'none' | 'leak' | 'buffer' | 'alloc') => `const kept = [];
let served = 0;
require('node:http').createServer((req, res) => {
  served++;
  const body = { ok: true, served, items: Array.from({ length: 10 }, (_, i) => ({ i, s: 'item ' + i })) };
  ${change === 'leak' ? 'kept.push(new Array(2048).fill(served));' : ''}
  ${change === 'buffer' ? 'kept.push(Buffer.alloc(16384, served & 0xff));' : ''}
  ${change === 'alloc' ? 'body.size = new Array(2048).fill(served).reduce((a, b) => a + (b & 1), 0);' : ''}
  res.end(JSON.stringify(body));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

const metric = (report: Report, name: MetricVerdict['metric']) =>
  defined(
    defined(report.scenarios[0], 'a scenario').metrics.find((m) => m.metric === name),
    `metric ${name}`,
  );

describe('memory per request (real servers)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-memory-'));
    for (const change of ['none', 'leak', 'buffer', 'alloc'] as const)
      writeFileSync(join(dir, `${change}.cjs`), server(change));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const round = async (change: string, memory = 'on'): Promise<ScenarioRound> => {
    const settings = levelled(
      resolveSettings({
        overrides: { start: 'x', duration: '1', warmup: '0.5', connections: '4', profiler: 'none', memory },
      }),
    );
    const result = await runRound({ side: 'head', command: `node ${change}.cjs`, cwd: dir }, 1, settings, {
      probePath: probePath(),
      env: process.env,
    });
    return defined(result.scenarios[0], 'the scenario');
  };

  it('measures retained, allocated and GC per request; a leak in the heap and one in Buffers both show', async () => {
    const plain = roundMetrics(await round('none'));
    const leak = roundMetrics(await round('leak'));
    const buffer = await round('buffer');
    const alloc = roundMetrics(await round('alloc'));
    // 16 KiB kept per request (the string, or the Buffer outside the heap): at least that much
    // retained; the plain server far less.
    expect(leak.retainedBytesPerRequest).toBeGreaterThan(8_000);
    expect(roundMetrics(buffer).retainedBytesPerRequest).toBeGreaterThan(16_000);
    const edges = defined(buffer.monitors[0]?.memory, "the buffer server's memory edges");
    expect(edges.arrayBuffersEnd - edges.arrayBuffersStart).toBeGreaterThan(
      16_000 * buffer.load.requests.total,
    );
    expect(plain.retainedBytesPerRequest).toBeLessThan(4_000);
    // allocated and dropped: more allocated per request, nothing more retained
    expect(alloc.allocatedBytesPerRequest - plain.allocatedBytesPerRequest).toBeGreaterThan(8_000);
    expect(alloc.retainedBytesPerRequest).toBeLessThan(4_000);
    expect(plain.gcTimePerRequest).toBeGreaterThanOrEqual(0);
  });

  it('memory: off leaves the memory edges out: the metrics are absent, not zero', async () => {
    const off = await round('none', 'off');
    expect(off.monitors[0]?.memory).toBeUndefined();
    expect(roundMetrics(off).retainedBytesPerRequest).toBeNaN();
    expect(roundMetrics(off).allocatedBytesPerRequest).toBeNaN();
  });

  it('compare() regresses a leaking head by retained bytes and an allocating head by allocated bytes', async () => {
    const run = (head: string) =>
      compare({
        baseStart: 'node none.cjs',
        headStart: `node ${head}.cjs`,
        cwd: dir,
        url: '/',
        rounds: 3,
        duration: 1,
        warmup: 0.5,
        connections: 4,
        profiler: 'none',
        out: join(dir, `out-${head}`),
      });
    const leak = await run('leak');
    expect(metric(leak, 'retainedBytesPerRequest')).toMatchObject({ outcome: 'regressed', inVerdict: true });
    expect(leak.outcome).toBe('regressed');
    // the Action's outputs: retained-change in bytes per request, allocated-change in percent
    expect(Number(metricOutput(leak, 'retainedBytesPerRequest'))).toBeGreaterThan(4_000);
    // report.html charts both sides' retained and allocated bytes per round, head's line the higher
    const html = readFileSync(join(dir, 'out-leak', 'report.html'), 'utf8');
    const chart = /aria-label="Retained bytes per request per round">([\s\S]*?)<\/svg>/.exec(html)?.[1] ?? '';
    const line = (side: string) =>
      (new RegExp(`<polyline points="([^"]*)" class="line ${side}"`).exec(chart)?.[1] ?? '')
        .split(' ')
        .map((p) => Number(p.split(',')[1]));
    expect(line('base')).toHaveLength(3);
    // SVG y grows downwards: every head point sits above every base point
    expect(Math.max(...line('head'))).toBeLessThan(Math.min(...line('base')));
    expect(html).toContain('aria-label="Allocated bytes per request per round"');
    const alloc = await run('alloc');
    expect(metric(alloc, 'allocatedBytesPerRequest')).toMatchObject({
      outcome: 'regressed',
      inVerdict: true,
    });
    expect(metric(alloc, 'retainedBytesPerRequest').outcome).not.toBe('regressed');
    expect(alloc.outcome).toBe('regressed');
    expect(Number(metricOutput(alloc, 'allocatedBytesPerRequest'))).toBeGreaterThan(30);
  });
});

describe('allocated bytes from the collections in between', () => {
  const gc = (before: number, after: number, cost = 100) => ({
    cost,
    beforeGC: { heapStatistics: { usedHeapSize: before } },
    afterGC: { heapStatistics: { usedHeapSize: after } },
  });
  it('sums the heap growth between collections, from the start to the end', () => {
    expect(allocatedBetween(1000, [], 1500)).toBe(500);
    // 1000 → 4000 (3000 allocated), collected to 1200, → 2000 (800), collected to 900, → 1900 (1000)
    expect(allocatedBetween(1000, [gc(4000, 1200), gc(2000, 900)], 1900)).toBe(4800);
    // a heap that shrank between readings (a collection outside the record) adds nothing
    expect(allocatedBetween(1000, [gc(800, 700)], 600)).toBe(0);
  });
});

describe('memory edges in a results file', () => {
  it('accepts them and refuses negative bytes', () => {
    const memory = {
      heapStart: 1,
      heapEnd: 2,
      externalStart: 0,
      externalEnd: 0,
      arrayBuffersStart: 0,
      arrayBuffersEnd: 0,
      allocatedBytes: 10,
      gcMicros: 5,
      gcMaxMicros: 5,
      gcCount: 1,
    };
    const base = {
      pid: 1,
      durationMs: 1000,
      cpuMicros: 1,
      delayMean: 0,
      delayP99: 0,
      delayMax: 0,
      utilization: 0,
      heapStart: 0,
      heapEnd: 0,
      heapMax: 0,
      rssStart: 0,
      rssEnd: 0,
      heapSeries: [],
    };
    expect(monitorSchema.safeParse({ ...base, memory }).success).toBe(true);
    expect(monitorSchema.safeParse({ ...base, memory: { ...memory, allocatedBytes: -1 } }).success).toBe(
      false,
    );
  });
});
