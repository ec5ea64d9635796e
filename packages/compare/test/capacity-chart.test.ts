import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CapacitySearch, Measurements, RoundResult, Side } from '../src/model.js';
import { renderHtml } from '../src/render/html.js';
import { capacityChart, latencyCurve } from '../src/render/html-capacity.js';
import { renderJson } from '../src/render/render.js';
import { report } from '../src/report/report.js';
import { viewerAssets } from '../src/run/viewer-assets.js';
import { resolveSettings } from '../src/settings/schema.js';
import { RESULTS_FILE, readShard, writeShard } from '../src/shard/file.js';
import { shardOf } from './helpers/shards.js';

/** A search that met the SLO (p99 ≤ 50 ms) up to `capacity`: steps at 500, 625, 781 and 700 req/s. */
function search(capacity: number, p99At: (rate: number) => number): CapacitySearch {
  const steps = [500, 625, 781, 700].map((rate) => {
    const p99 = p99At(rate);
    return {
      rate,
      requestsPerSecond: rate,
      p50: p99 / 4,
      p90: p99 / 2,
      p99,
      errorRate: 0,
      met: rate <= capacity,
    };
  });
  return {
    slo: 'p99<=50ms,errors<=1%',
    capacity,
    steps,
    overload: { rate: 1400, goodput: 300, requestsPerSecond: 800, p99: 900, errorRate: 0.2 },
  };
}

function measurements(): Measurements {
  const round = (side: Side, n: number): RoundResult => ({
    side,
    round: n,
    scenarios: [
      {
        scenario: 'GET /',
        load: {
          duration: 1,
          requests: { total: 900, mean: 900, perSecond: [900] },
          latency: { mean: 5, p50: 4, p90: 6, p99: 9, max: 12 },
          statusCodes: { '200': 900 },
          non2xx: 0,
          errors: 0,
          errorsByKind: {},
        },
        monitors: [],
        profilers: [],
        capacity: side === 'base' ? search(700, (r) => r / 20) : search(625, (r) => r / 12),
      },
    ],
    pids: [1],
    warnings: [],
  });
  return {
    base: [round('base', 1), round('base', 2)],
    head: [round('head', 1), round('head', 2)],
    order: ['base', 'head', 'head', 'base'],
    scenarios: ['GET /'],
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:00.000Z',
  };
}

const settings = resolveSettings({ config: { start: 'node server.js', rounds: 2, slo: 'p99<=50ms' } });
const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

describe("report.html's latency-vs-rate chart", () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-capacity-chart-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('merges steps whose rates lie within 5 % of each other into one point of the curve', () => {
    expect(
      latencyCurve([
        { rate: 100, ms: 4 },
        { rate: 300, ms: 40 },
        { rate: 104, ms: 6 },
        { rate: 200, ms: 10 },
        { rate: 102, ms: 5 },
      ]),
    ).toEqual([
      { rate: 102, ms: 5 },
      { rate: 200, ms: 10 },
      { rate: 300, ms: 40 },
    ]);
    expect(latencyCurve([])).toEqual([]);
  });

  it('reaches report.json and report.html from a shard on disk: every step a dot, the SLO, both capacities', () => {
    const folder = writeShard(dir, shardOf(measurements(), settings));
    const built = report([readShard(join(folder, RESULTS_FILE))]);
    const rows = built.scenarios[0]?.rounds ?? [];
    expect(rows.map((r) => r.capacitySearch?.steps.length)).toEqual([4, 4, 4, 4]);
    const json = JSON.parse(renderJson(built));
    expect(json.scenarios[0].rounds[0].capacitySearch.steps[2]).toMatchObject({ rate: 781, met: false });
    const html = renderHtml(built, viewerAssets());
    const chart = capacityChart(rows);
    expect(html).toContain(chart);
    expect(chart).toContain('<h3>Latency against rate</h3>');
    expect(chart).toContain('Latency p99 (ms, log scale)');
    // 16 steps; base met 3 of 4 per round (781 missed), head 2 (700 and 781 missed)
    expect(count(chart, /<circle [^>]*class="dot (base|head)( met)?"/g)).toBe(16);
    expect(count(chart, /class="dot base met"/g)).toBe(6);
    expect(count(chart, /class="dot head met"/g)).toBe(4);
    expect(count(chart, /class="over (base|head)"/g)).toBe(4);
    expect(count(chart, /class="cap (base|head)"/g)).toBe(2);
    expect(chart).toContain('SLO: p99 ≤ 50 ms, errors ≤ 1 %');
    // one curve per side, through the four distinct rates
    for (const side of ['base', 'head'])
      expect(new RegExp(`<polyline points="(\\S+ ){3}\\S+" class="line ${side}"/>`).test(chart)).toBe(true);
  });

  it('draws nothing for a scenario without an SLO, and plots p90 when the SLO targets p90', () => {
    expect(capacityChart([])).toBe('');
    const rows = report([shardOf(measurements(), settings)]).scenarios[0]?.rounds ?? [];
    const p90 = rows.map((r) => ({
      ...r,
      capacitySearch: r.capacitySearch && { ...r.capacitySearch, slo: 'p90<=25ms,errors<=1%' },
    }));
    const chart = capacityChart(p90);
    expect(chart).toContain('Latency p90');
    // the steps at twice base's capacity record only their p99: not drawn on a p90 axis
    expect(count(chart, /class="over /g)).toBe(0);
  });

  it('refuses a results file whose capacity search names no SLO, naming the value', () => {
    const folder = writeShard(join(dir, 'hostile'), shardOf(measurements(), settings));
    const path = join(folder, RESULTS_FILE);
    const data = JSON.parse(readFileSync(path, 'utf8'));
    data.base[0].scenarios[0].capacity.slo = '<img src=x onerror=alert(1)>';
    writeFileSync(path, JSON.stringify(data));
    expect(() => readShard(path)).toThrow(/expected an SLO such as p99<=50ms/);
  });
});
