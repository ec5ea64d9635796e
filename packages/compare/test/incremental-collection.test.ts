import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTERNAL_NUDGE, incrementalCollection } from '../src/measure/probe-collection.js';
import { probePath } from '../src/measure/probe-path.js';
import { runRound } from '../src/measure/round.js';
import { SURVIVORS_ROUND } from '../src/measure/round-windows.js';
import { resolveSettings } from '../src/settings/schema.js';
import { levelled } from './helpers/levelled.js';

// An atomic full collection (gc(), the inspector's, or the one the inspector's sampling heap
// profiler forces when it stops) throws away optimized code that embeds objects V8's own
// incremental collections keep ("weak objects"), and the code optimized again stays slower. The
// probe's edges collect incrementally; the survivors profile (whose stop forces one) runs in one
// round only. Real rounds of a real server, read through V8's own --trace-gc and --trace-deopt.
const SERVER = `let n = 0;
require('node:http').createServer((req, res) => {
  const items = Array.from({ length: 20 }, (_, i) => ({ i, s: 'item ' + i, n: n++ }));
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ ok: true, items }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** Each full collection in a --trace-gc log: whether it was forced, and the code it threw away before it. */
interface Collection {
  forced: boolean;
  incremental: boolean;
  sampler: boolean;
  weak: number;
}

function collections(log: string): Collection[] {
  const out: Collection[] = [];
  let weak = 0;
  for (const line of log.split('\n')) {
    if (line.includes('reason: weak objects')) weak++;
    if (!line.includes('Mark-Compact')) continue;
    out.push({
      forced: line.includes('testing') || line.includes('sampling profiler'),
      incremental: line.includes('since start of marking'),
      sampler: line.includes('sampling profiler'),
      weak,
    });
    weak = 0;
  }
  return out;
}

describe("the probe's full collections are V8's incremental ones", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-incremental-'));
    writeFileSync(join(dir, 'server.cjs'), SERVER);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('collects without forcing: one major collection, the nudge’s bytes freed again', async () => {
    const kinds: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) kinds.push((e as { detail?: { kind?: number } }).detail?.kind ?? -1);
    });
    observer.observe({ entryTypes: ['gc'] });
    const before = process.memoryUsage().arrayBuffers;
    const ran = await incrementalCollection();
    await new Promise((resolve) => setImmediate(resolve));
    observer.disconnect();
    expect(ran).toBe(true);
    expect(kinds.length).toBeGreaterThan(0);
    expect(process.memoryUsage().arrayBuffers).toBeLessThan(before + EXTERNAL_NUDGE / 2);
  });

  /** One round (number `round`) of the server under V8's traces; its full collections in order. */
  const traced = async (round: number): Promise<Collection[]> => {
    const log = join(dir, `trace-${round}.log`);
    const settings = resolveSettings({
      config: { scenarios: [{ name: 'GET /', requests: [{ path: '/' }] }] },
      overrides: { start: 'x', duration: '1', warmup: '2', connections: '8', profiler: 'none' },
    });
    const result = await runRound(
      { side: 'head', command: `node --trace-gc --trace-deopt server.cjs > ${log}`, cwd: dir, root: dir },
      round,
      levelled(settings),
      { probePath: probePath(), env: { ...process.env } },
    );
    expect(result.scenarios[0]?.load.requests.total).toBeGreaterThan(0);
    expect(result.scenarios[0]?.monitors.some((m) => m.memory !== undefined)).toBe(true);
    return collections(readFileSync(log, 'utf8'));
  };

  it('throws no optimized code away before the window outside the survivors round; the survivors round does', async () => {
    const later = await traced(SURVIVORS_ROUND + 1);
    // The collections after the sampler's one-time check at activation (its stop is forced, before
    // any request) up to the window's close (the window's own sampler stop, forced, after it).
    const firstSampler = later.findIndex((c) => c.sampler);
    const lastSampler = later.map((c) => c.sampler).lastIndexOf(true);
    expect(firstSampler).toBeGreaterThanOrEqual(0);
    expect(lastSampler).toBeGreaterThan(firstSampler);
    const between = later.slice(firstSampler + 1, lastSampler);
    // The opening edge's own collections (its pair): incremental, never forced; and the closing
    // edge's, after the window's sampler stopped.
    expect(between.length).toBeGreaterThanOrEqual(2);
    expect(later.slice(lastSampler + 1).every((c) => !c.forced)).toBe(true);
    expect(between.every((c) => !c.forced && c.incremental)).toBe(true);
    expect(between.reduce((sum, c) => sum + c.weak, 0)).toBe(0);
    expect(later[firstSampler]?.weak).toBe(0);

    // The survivors round: the survivors profile's stop forces a collection at the opening edge,
    // and it throws optimized code away (what the other rounds are spared).
    const first = await traced(SURVIVORS_ROUND);
    const samplers = first.filter((c) => c.sampler);
    expect(samplers.length).toBe(3);
    expect(samplers[1]?.weak).toBeGreaterThan(0);
  });
});
