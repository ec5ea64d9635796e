import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shareWithin } from '../src/result.js';
import { seriesStats } from '../src/series-stats.js';
import { cli } from './cli-runner.js';
import { httpServer, type Running } from './servers.js';

describe('seriesStats', () => {
  it.each([
    [[], { samples: 0, mean: 0, stdev: 0, min: 0, max: 0, p1: 0, p50: 0, p97_5: 0, p99: 0 }],
    [[7], { samples: 1, mean: 7, stdev: 0, min: 7, max: 7, p1: 7, p50: 7, p97_5: 7, p99: 7 }],
    [[2, 4, 4, 4, 5, 5, 7, 9], { samples: 8, mean: 5, stdev: 2, min: 2, max: 9, p1: 2, p50: 4, p97_5: 9 }],
    [
      [10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
      { samples: 10, mean: 55, stdev: 28.72, min: 10, max: 100, p1: 10, p2_5: 10, p10: 10, p50: 50, p90: 90 },
    ],
  ])('%j', (series, expected) => {
    expect(seriesStats(series)).toMatchObject(expected);
  });

  it('takes nearest-rank percentiles: the 97.5th of 1..40 is 39, the 50th of 1..41 is 21', () => {
    const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
    expect(seriesStats(range(40)).p97_5).toBe(39);
    expect(seriesStats(range(41)).p50).toBe(21);
    expect(seriesStats(range(41).reverse()).p1).toBe(1);
  });
});

/** (value, count) of every recorded bucket: the bucket's highest equivalent value, as percentiles report. */
function buckets(encoded: string): [number, number][] {
  // biome-ignore lint/suspicious/noExplicitAny: the bucket walk uses JsHistogram's index methods
  const h = hdr.decodeFromCompressedBase64(encoded, 32, false) as any;
  const out: [number, number][] = [];
  for (let i = 0; i < h.countsArrayLength; i++) {
    const count = h.getCountAtIndex(i);
    if (count > 0) out.push([h.highestEquivalentValue(h.valueFromIndex(i)), count]);
  }
  return out;
}

/** Nearest-rank percentile (µs) over the union of the buckets of several histograms. */
function unionPercentile(all: [number, number][], p: number): number {
  const sorted = [...all].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((sum, [, count]) => sum + count, 0);
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const [value, count] of sorted) {
    seen += count;
    if (seen >= rank) return value;
  }
  throw new Error('empty');
}

describe('hotpath-load merge', () => {
  let server: Running;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-load-merge-'));
    // Latencies spread over 0..4 ms so the two runs' histograms differ.
    let n = 0;
    server = await httpServer((_req, res) => {
      n++;
      setTimeout(() => res.end(n % 7 === 0 ? 'a longer body' : 'x'), n % 5);
    });
  });
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('merges two real runs exactly: counts add, per-second series add by second, latency from the union', async () => {
    const [a, b] = await Promise.all([
      cli(['-c', '3', '-R', '400', '-d', '2.2', '--json', `${server.url}/`]),
      cli(['-c', '2', '-R', '250', '-d', '2.2', '--json', `${server.url}/b`]),
    ]);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    writeFileSync(join(dir, 'a.json'), a.stdout);
    writeFileSync(join(dir, 'b.json'), b.stdout);
    const ra = JSON.parse(a.stdout);
    const rb = JSON.parse(b.stdout);
    expect(ra.requests.perSecondStats.samples).toBe(ra.requests.perSecond.length);

    const ran = await cli(['merge', join(dir, 'a.json'), join(dir, 'b.json')]);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const merged = JSON.parse(ran.stdout);

    expect(merged.requests.total).toBe(ra.requests.total + rb.requests.total);
    expect(merged.throughput.total).toBe(ra.throughput.total + rb.throughput.total);
    expect(merged.statusCodes).toEqual({ '200': ra.requests.total + rb.requests.total });
    expect(merged.connections).toBe(5);
    expect(merged.rate).toBe(650);
    expect(merged.duration).toBe(Math.max(ra.duration, rb.duration));
    expect(merged.url).toBe(`${server.url}/ ${server.url}/b`);
    const seconds = Math.max(ra.requests.perSecond.length, rb.requests.perSecond.length);
    expect(merged.requests.perSecond).toEqual(
      Array.from(
        { length: seconds },
        (_, i) => (ra.requests.perSecond[i] ?? 0) + (rb.requests.perSecond[i] ?? 0),
      ),
    );
    expect(merged.requests.perSecondStats).toEqual(seriesStats(merged.requests.perSecond));
    expect(merged.throughput.perSecondStats).toEqual(seriesStats(merged.throughput.perSecond));

    // Latency: the exact percentiles of the union of both runs' recorded values, computed here
    // from the buckets of the two serialised histograms (not with hdr-histogram-js's add).
    const union = [...buckets(ra.histogram), ...buckets(rb.histogram)];
    const total = union.reduce((sum, [, count]) => sum + count, 0);
    expect(total).toBe(ra.requests.total + rb.requests.total);
    const ms = (us: number) => Math.round(us) / 1000;
    for (const [key, p] of [
      ['p50', 50],
      ['p75', 75],
      ['p90', 90],
      ['p97_5', 97.5],
      ['p99', 99],
      ['p99_9', 99.9],
      ['max', 100],
    ] as const) {
      expect([key, merged.latency[key]]).toEqual([key, ms(unionPercentile(union, p))]);
    }
    // The merged serialised histogram holds exactly the union's buckets.
    const mergedBuckets = new Map(buckets(merged.histogram));
    const expected = new Map<number, number>();
    for (const [value, count] of union) expected.set(value, (expected.get(value) ?? 0) + count);
    expect(mergedBuckets).toEqual(expected);

    // Merging is associative with the shape it prints: merging the merge with nothing changes nothing.
    writeFileSync(join(dir, 'merged.json'), ran.stdout);
    const again = await cli(['merge', join(dir, 'merged.json')]);
    expect(JSON.parse(again.stdout)).toEqual(merged);
  });

  it('prints the merged result as text with --text, per-second table included', async () => {
    const ran = await cli(['-c', '2', '-R', '200', '-d', '2.1', '--json', `${server.url}/`]);
    writeFileSync(join(dir, 'c.json'), ran.stdout);
    const text = await cli(['merge', '--text', join(dir, 'c.json'), join(dir, 'c.json')]);
    expect(text.code).toBe(0);
    const one = JSON.parse(ran.stdout);
    expect(text.stdout).toMatch(new RegExp(`Complete requests:\\s+${2 * one.requests.total}\\n`));
    expect(text.stdout).toMatch(
      /Per second, over the 2 whole seconds\n\s+mean\s+stdev\s+min\s+1%\s+2\.5%\s+50%\s+97\.5%\s+max\n\s+Req\/Sec/,
    );
  });

  it('refuses a file that is not a result, in one line, exit 2', async () => {
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ url: 'http://x/', requests: {} }));
    writeFileSync(join(dir, 'text.json'), 'Complete requests: 5');
    const bad = await cli(['merge', join(dir, 'bad.json')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /^hotpath-load: .*bad\.json is not a hotpath-load --json result: "histogramUnit" is undefined, expected "us"\n$/,
    );
    const text = await cli(['merge', join(dir, 'text.json')]);
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/^hotpath-load: .*text\.json is not JSON: /);
    const none = await cli(['merge']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/missing result files/);
  });
});

describe('shareWithin: the share of latencies at or below a limit', () => {
  // A histogram built as the recorder builds one (µs), encoded as results carry it.
  const encoded = (micros: number[]) => {
    const h = hdr.build({
      lowestDiscernibleValue: 1,
      highestTrackableValue: 3_600_000_000,
      numberOfSignificantValueDigits: 3,
    });
    for (const v of micros) h.recordValue(v);
    return hdr.encodeIntoCompressedBase64(h);
  };

  it('counts the answers within the limit, to the histogram precision', () => {
    // 900 fast answers (2 ms), 100 slow ones (80 ms): within 50 ms, 90 %
    const latencies = [...Array(900).fill(2000), ...Array(100).fill(80_000)];
    expect(shareWithin(encoded(latencies), 50)).toBeCloseTo(0.9, 3);
    expect(shareWithin(encoded(latencies), 100)).toBe(1);
    expect(shareWithin(encoded(latencies), 1)).toBe(0);
    expect(shareWithin(encoded([]), 50)).toBe(0);
  });
});
