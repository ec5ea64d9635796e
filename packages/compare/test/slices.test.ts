import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compare } from '../src/compare.js';
import { runLoad } from '../src/measure/load.js';
import { summariseReadings } from '../src/measure/monitor-summary.js';
import {
  mergeSlices,
  SLICE_LATENCIES,
  sliceCount,
  sliceLength,
  sliceOrder,
} from '../src/measure/round-slices.js';
import type { LoadResult } from '../src/model.js';
import { renderMarkdown } from '../src/render/markdown.js';
import { defined } from './helpers/defined.js';

// A comparison round with both servers up, the load alternating between them in slices (B H, H B,
// …): each side's window is the sum of its slices. Real servers, real load.

describe('a slice is long enough for the requests it measures', () => {
  it('keeps `slice` for fast requests and lengthens it to 10x the longest mean latency, at most the duration', () => {
    expect(SLICE_LATENCIES).toBe(10);
    expect(sliceLength(0.5, 5, [2.1, 3.4])).toBe(0.5);
    expect(sliceLength(0.5, 5, [130, 250])).toBe(2.5);
    expect(sliceLength(0.5, 5, [900])).toBe(5);
    // no warm-up, or no latency read: the setting
    expect(sliceLength(0.5, 5, [])).toBe(0.5);
    expect(sliceLength(0.5, 5, [Number.NaN])).toBe(0.5);
  });
});

describe('slices of a round: the plan', () => {
  it('cuts the window into duration / slice slices, at least one; 0 means one whole window', () => {
    expect(sliceCount(5, 0.5)).toBe(10);
    expect(sliceCount(5, 2)).toBe(3);
    expect(sliceCount(0.4, 0.5)).toBe(1);
    expect(sliceCount(5, 0)).toBe(1);
  });

  it('alternates which side goes first: A B, B A, A B, … (each side first in half the slices)', () => {
    const orders = Array.from({ length: 4 }, (_, k) => sliceOrder(['base', 'head'], k).join(' '));
    expect(orders).toEqual(['base head', 'head base', 'base head', 'head base']);
  });
});

describe("slices of a round: a side's event loop over its own slices", () => {
  const reading = (ms: number, utilization: number, delay: number, idle?: true) => ({
    eventLoopDelay: { mean: delay, p99: delay * 2, max: delay * 3 },
    eventLoopUtilization: utilization,
    heapUsedBytes: 1000 + ms,
    rssBytes: 5000,
    ms,
    ...(idle ? { idle } : {}),
  });

  it('leaves out the intervals the load spent on the other server, and weighs the rest by their length', () => {
    const summary = summariseReadings(1, 2000, [
      reading(500, 1, 30),
      reading(500, 0.01, 10, true),
      reading(250, 0.6, 20),
      reading(750, 0.02, 11, true),
    ]);
    expect(summary.utilization).toBeCloseTo((500 * 1 + 250 * 0.6) / 750, 9);
    expect(summary.delayMean).toBeCloseTo((500 * 30 + 250 * 20) / 750, 9);
    expect(summary.delayP99).toBe(60);
    expect(summary.delayMax).toBe(90);
    // memory readings keep every interval
    expect(summary.heapSeries).toHaveLength(4);
    expect(summary.heapEnd).toBe(1750);
  });

  it('reads a probe without marks (one server at a time, or an older probe) as before', () => {
    const plain = summariseReadings(1, 2000, [reading(1000, 0.5, 10), reading(1000, 0.7, 20)]);
    expect(plain.utilization).toBeCloseTo(0.6, 9);
    const old = summariseReadings(1, 2000, [
      {
        eventLoopDelay: { mean: 10, p99: 1, max: 1 },
        eventLoopUtilization: 0.2,
        heapUsedBytes: 1,
        rssBytes: 1,
      },
      {
        eventLoopDelay: { mean: 20, p99: 1, max: 1 },
        eventLoopUtilization: 0.4,
        heapUsedBytes: 1,
        rssBytes: 1,
      },
    ]);
    expect(old.delayMean).toBeCloseTo(15, 9);
  });
});

describe('slices of a round: one load result per side', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    let n = 0;
    server = createServer((_req, res) => {
      n++;
      // every fifth answer is a 404 and slower, so the slices differ in codes and latencies
      if (n % 5 === 0) setTimeout(() => res.writeHead(404).end('no'), 2);
      else res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sums requests, seconds, codes and errors, and reads the latencies from one merged histogram', async () => {
    const slices: LoadResult[] = [];
    for (const connections of [1, 4, 2])
      slices.push(
        await runLoad({ url, connections, duration: 0.3, pipelining: 1, method: 'GET', headers: {} }),
      );
    const merged = mergeSlices(slices);
    const total = slices.reduce((s, r) => s + r.requests.total, 0);
    const seconds = slices.reduce((s, r) => s + r.duration, 0);
    expect(merged.requests.total).toBe(total);
    expect(merged.duration).toBeCloseTo(seconds, 9);
    expect(merged.requests.mean).toBeCloseTo(total / seconds, 6);
    expect(merged.non2xx).toBe(slices.reduce((s, r) => s + r.non2xx, 0));
    expect(merged.non2xx).toBeGreaterThan(0);
    expect(merged.statusCodes['404']).toBe(merged.non2xx);
    expect((merged.statusCodes['200'] ?? 0) + merged.non2xx).toBe(total);
    // a quantile of a mixture lies between the parts' quantiles
    for (const q of ['p50', 'p90', 'p99'] as const) {
      expect(merged.latency[q]).toBeGreaterThanOrEqual(Math.min(...slices.map((r) => r.latency[q])));
      expect(merged.latency[q]).toBeLessThanOrEqual(Math.max(...slices.map((r) => r.latency[q])));
    }
    expect(merged.latency.max).toBe(Math.max(...slices.map((r) => r.latency.max)));
    expect(mergeSlices([defined(slices[0], 'a slice')])).toBe(slices[0]);
  });
});

describe('slices of a round: both servers up, the load alternating (real servers)', () => {
  let dir: string;
  // Each server notes in which 20 ms step it answered, and writes the steps when it is stopped.
  const SERVER = `const steps = new Set();
require('node:http').createServer((req, res) => { steps.add(Math.floor(Date.now() / 20)); res.end('ok'); })
  .listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  require('node:fs').writeFileSync(process.env.STEPS_FILE + '-' + process.pid, JSON.stringify([...steps]));
  process.exit(0);
});
`;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-slices-'));
    writeFileSync(join(dir, 'server.cjs'), SERVER);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The sides in the order the 20 ms steps saw them answer, runs of one side folded into one. */
  const timeline = (tag: string) => {
    const steps: [number, string][] = [];
    for (const side of ['base', 'head'])
      for (const name of readdirSync(dir).filter((f) => f.startsWith(`${tag}-${side}-`)))
        for (const step of JSON.parse(readFileSync(join(dir, name), 'utf8')) as number[])
          steps.push([step, side]);
    steps.sort((a, b) => a[0] - b[0]);
    return steps.map(([, side]) => side).filter((side, i, all) => side !== all[i - 1]);
  };

  const run = (tag: string, slice: number) =>
    compare({
      baseStart: `STEPS_FILE=${join(dir, `${tag}-base`)} node server.cjs`,
      headStart: `STEPS_FILE=${join(dir, `${tag}-head`)} node server.cjs`,
      cwd: dir,
      url: '/',
      rounds: 1,
      duration: 1.2,
      warmup: 0,
      slice,
      connections: 2,
      profiler: 'none',
      memory: 'off',
      out: join(dir, `out-${tag}`),
    });

  it('slice 0.2: both servers answer in turn, six slices each, and the report says so', async () => {
    const report = await run('sliced', 0.2);
    // B H | H B | B H | … : 12 slices, adjacent ones of the same side merge: 7 runs of one side
    const sides = timeline('sliced');
    expect(sides.length).toBeGreaterThanOrEqual(6);
    expect(sides[0]).toBe('base');
    const scenario = defined(report.scenarios[0], 'the scenario');
    const rows = scenario.rounds;
    expect(rows.map((r) => r.side)).toEqual(['base', 'head']);
    for (const r of rows) expect(r.requests).toBeGreaterThan(0);
    // each round's slice length is in report.json's rows and on report.html's load line
    expect(rows.map((r) => r.sliceSeconds)).toEqual([0.2, 0.2]);
    expect(readFileSync(join(dir, 'out-sliced', 'report.html'), 'utf8')).toContain(
      `${scenario.pairs} round pairs · measured in slices of 0.2 s`,
    );
    expect(renderMarkdown(report)).toContain(
      "both servers up in each round, the load alternating between them every 0.2 s, or 10× a scenario's mean latency where that is longer (B H, H B, …)",
    );
  });

  it('slice 0: one server at a time, base then head', async () => {
    const report = await run('whole', 0);
    expect(timeline('whole')).toEqual(['base', 'head']);
    expect(report.scenarios[0]?.rounds.map((r) => r.sliceSeconds)).toEqual([undefined, undefined]);
    expect(renderMarkdown(report)).toContain('one server at a time, interleaved (B H)');
  });
});
