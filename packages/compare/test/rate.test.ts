import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compare } from '../src/compare.js';
import {
  capacityOf,
  nextOpenRate,
  openCapacityOf,
  rateOfShare,
  rateShare,
} from '../src/measure/load-level.js';
import type { MetricVerdict, Report } from '../src/model.js';
import { renderMarkdown } from '../src/render/markdown.js';
import { reproduceCommand } from '../src/render/reproduce.js';
import { rateNotHeld } from '../src/report/report.js';
import { configJsonSchema } from '../src/settings/json-schema.js';
import { DEFAULT_METRICS } from '../src/settings/metrics.js';
import { resolveSettings } from '../src/settings/schema.js';
import { scenarioMetrics, verdictPolicy } from '../src/verdict/policy.js';
import { defined } from './helpers/defined.js';

describe('rate: a number or a share of base capacity', () => {
  const rateOf = (rate: unknown) =>
    resolveSettings({ config: { start: 'x', rate } as Record<string, unknown> }).scenarios[0]?.rate;

  it('takes req/s, or "N%" of base capacity (spaces allowed), and names the value it refuses', () => {
    expect(rateOf(2684)).toBe(2684);
    expect(rateOf('2684')).toBe(2684);
    expect(rateOf('70%')).toBe('70%');
    expect(rateOf(' 62.5 % ')).toBe('62.5%');
    expect(rateOf(undefined)).toBeUndefined();
    for (const bad of ['0%', '1001%', 'fast', -3, 0, '70%%'])
      expect(() => rateOf(bad), String(bad)).toThrow(
        /invalid "rate": expected requests per second \(a number > 0\) or a share of base's measured capacity such as "70%"/,
      );
    const flag = () => resolveSettings({ overrides: { start: 'x', rate: 'half' } });
    expect(flag).toThrow(/^invalid --rate: expected .* got "half"$/);
  });

  it('is a number or a percentage in the config schema', () => {
    const schema = configJsonSchema() as { properties: Record<string, { anyOf?: { pattern?: string }[] }> };
    const pattern = new RegExp(defined(schema.properties.rate?.anyOf?.[1]?.pattern, 'the share pattern'));
    expect(pattern.test('70%')).toBe(true);
    expect(pattern.test('70')).toBe(false);
  });

  it('a share makes a rate of the capacity, at least 1 req/s', () => {
    expect(rateShare('70%')).toBe(70);
    expect(rateShare(70)).toBeUndefined();
    expect(rateOfShare(70, 3834.4)).toBe(2684);
    expect(rateOfShare(50, 0.4)).toBe(1);
  });
});

describe('a scenario at a fixed rate is judged by its latency tail', () => {
  it('requests/s gives way to p90 and p99; other metrics stay; a closed model keeps the setting', () => {
    expect(scenarioMetrics(DEFAULT_METRICS, {})).toEqual(DEFAULT_METRICS);
    const atRate = scenarioMetrics(DEFAULT_METRICS, { rate: 100 });
    expect(atRate).not.toContain('requestsPerSecond');
    expect(atRate).toEqual(expect.arrayContaining(['p50', 'p90', 'p99', 'cpuPerRequest', 'errorRate']));
    // a list without requests/s is the user's choice, kept as written
    expect(scenarioMetrics(['cpuPerRequest'], { rate: 100 })).toEqual(['cpuPerRequest']);
    expect(scenarioMetrics(['requestsPerSecond', 'p99'], { rate: '70%' })).toEqual(['p90', 'p99']);
  });

  it('the family counts each scenario with its own metrics', () => {
    const settings = resolveSettings({
      config: {
        start: 'x',
        scenarios: [
          { name: 'closed', url: '/' },
          { name: 'open', url: '/', rate: '70%' },
        ],
      },
    });
    const policy = verdictPolicy(settings);
    expect(policy.scenarioMetrics.closed).toEqual(DEFAULT_METRICS);
    expect(policy.scenarioMetrics.open).toHaveLength(DEFAULT_METRICS.length + 1);
    expect(policy.tests).toBe(2 * DEFAULT_METRICS.length + 1);
  });
});

// A head that holds its event loop 150 ms every 500 ms without spending CPU (Atomics.wait: a
// synchronous wait, as a sync file read or a lock would): at 15 % of base's capacity, far from
// saturation, 30 % of the requests arrive in a stall and wait up to 150 ms, so p90 goes from a few
// milliseconds to about 115 and p99 to about 150. Base's tail is the noise: a busy host lifts it
// (p99 17 ms with a CPU hog switching on and off on each core), and the stall must stay far above
// what a disturbed base round reaches. (A 60 ms stall every 200 ms passed every local run, hogs
// included, but failed once at CI with neither tail metric regressed: its p99 interval's lower
// end came as close as +11 % here.) The connections must hold what queues in a stall, or the
// rate is not kept: 0.15 s at some 2 000 req/s is 300 requests, hence 400 connections.
const server = (stall: boolean) => `const http = require('node:http');
${stall ? 'const cell = new Int32Array(new SharedArrayBuffer(4));\nsetInterval(() => Atomics.wait(cell, 0, 0, 150), 500);' : ''}
http.createServer((req, res) => {
  let x = 0;
  for (let i = 0; i < 20000; i++) x += i % 7;
  res.end(String(x));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

describe('latency at a rate (real servers)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-rate-'));
    writeFileSync(join(dir, 'plain.cjs'), server(false));
    writeFileSync(join(dir, 'stall.cjs'), server(true));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const metric = (report: Report, name: MetricVerdict['metric']) =>
    defined(
      defined(report.scenarios[0], 'a scenario').metrics.find((m) => m.metric === name),
      `metric ${name}`,
    );

  it('rate "15%" is measured on base, held for both sides, and a stalling head regresses by its tail', async () => {
    const notes: string[] = [];
    const report = await compare({
      baseStart: 'node plain.cjs',
      headStart: 'node stall.cjs',
      cwd: dir,
      url: '/',
      rate: '15%',
      rounds: 5,
      duration: 1,
      warmup: 1,
      connections: 400,
      profiler: 'none',
      memory: 'off',
      out: join(dir, 'out'),
      onProgress: (e) => {
        if (e.phase === 'note') notes.push(e.message);
      },
    });
    const level = defined(report.environment.rateLevels?.[0], 'the rate level');
    expect(level).toMatchObject({ scenario: 'GET /', share: 15 });
    expect(level.capacity).toBeGreaterThan(100);
    expect(level.rate).toBe(rateOfShare(15, level.capacity));
    expect(report.settings.scenarios[0]?.rate).toBe(level.rate);
    expect(
      notes.some((n) =>
        n.startsWith(`rate 15 % of base's capacity ${Math.round(level.capacity)} req/s at a fixed rate`),
      ),
    ).toBe(true);
    // the open model's capacity: the highest rate held, from half the closed model's
    const open = defined(level.openSteps, 'the open-model steps');
    expect(open[0]?.rate).toBe(Math.max(1, Math.round(capacityOf(level.steps) / 2)));
    expect(level.capacity).toBe(openCapacityOf(open));
    // both sides were loaded at the rate and kept up with it. A window ends at its last answer
    // (drain), and head stalls 150 ms every 500 ms: a 1 s window of head's can run up to 1.15 s,
    // so its requests per second can read up to 13 % under the rate (it read 10.1 % once in CI)
    for (const [side, bound] of [
      ['base', 0.1],
      ['head', 0.15],
    ] as const)
      expect(
        Math.abs(metric(report, 'requestsPerSecond')[side] / level.rate - 1),
        JSON.stringify({ side, rate: level.rate, rps: metric(report, 'requestsPerSecond') }),
      ).toBeLessThan(bound);
    expect(report.warnings.filter((w) => w.includes('req/s asked'))).toEqual([]);
    expect(metric(report, 'requestsPerSecond').inVerdict).toBe(false);
    // the tail decides: p90 and p99 are verdict metrics, p99 at least doubled, and one of them is
    // regressed (five pairs on a noisy machine: one spoiled pair can widen one interval; on a busy
    // host base's p90 was 4–10 ms against head's 60–95)
    expect(metric(report, 'p99').inVerdict).toBe(true);
    expect(metric(report, 'p90').inVerdict).toBe(true);
    expect(metric(report, 'p99').change).toBeGreaterThan(1);
    const tails = ['p90', 'p99'].map((m) => metric(report, m as 'p99'));
    const seen = JSON.stringify(
      tails.map(({ metric, base, head, ci, pairs, excluded, outcome }) => ({
        metric,
        base,
        head,
        ci,
        pairs,
        excluded,
        outcome,
      })),
    );
    expect(
      tails.filter((m) => m.outcome === 'regressed'),
      seen,
    ).not.toEqual([]);
    expect(report.outcome, seen).toBe('regressed');
    // the comment says the rate and where it came from; a rerun repeats the share
    const markdown = renderMarkdown(report);
    expect(markdown).toContain(
      `at ${level.rate.toLocaleString('en-US')} req/s fixed rate (15 % of base's capacity at a fixed rate, ${Math.round(level.capacity).toLocaleString('en-US')} req/s)`,
    );
    expect(reproduceCommand(report).command).toContain('--rate 15%');
  });
});

describe('capacity and a rate not held', () => {
  it('takes the median of the three best steps (one lucky second does not set it)', () => {
    const steps = [4122, 8184, 8800, 11670, 9518, 9074].map((requestsPerSecond, i) => ({
      connections: 2 ** i,
      requestsPerSecond,
    }));
    expect(capacityOf(steps)).toBe(9518);
    expect(capacityOf(steps.slice(0, 2))).toBe((4122 + 8184) / 2);
    expect(capacityOf([])).toBe(0);
  });

  it('warns when base served under 95 % of the rate in its median round', () => {
    const rounds = (rates: number[]) =>
      rates.map((requestsPerSecond) => ({ side: 'base' as const, requestsPerSecond }));
    expect(rateNotHeld(1000, rounds([990, 1001, 960]))).toBeUndefined();
    expect(rateNotHeld(undefined, rounds([10]))).toBeUndefined();
    expect(rateNotHeld(1000, rounds([700, 920, 1000]))).toMatch(
      /^base served 920 of the 1000 req\/s asked \(the median of its rounds\)/,
    );
  });
});

describe('the open-model capacity search', () => {
  const step = (rate: number, requestsPerSecond: number) => ({ rate, requestsPerSecond });
  it('goes up by 25 % while each rate is held, then bisects to within 5 %', () => {
    expect(nextOpenRate([step(1000, 1000)])).toBe(1250);
    expect(nextOpenRate([step(1000, 1000), step(1250, 1249)])).toBe(1563);
    // 1563 not held: between 1250 and 1563
    const steps = [step(1000, 1000), step(1250, 1249), step(1563, 1400)];
    expect(nextOpenRate(steps)).toBe(Math.round(Math.sqrt(1250 * 1563)));
    expect(nextOpenRate([...steps, step(1398, 1396), step(1478, 1400)])).toBe(
      Math.round(Math.sqrt(1398 * 1478)),
    );
    expect(nextOpenRate([...steps, step(1398, 1396), step(1478, 1400), step(1437, 1436)])).toBeUndefined();
    expect(openCapacityOf([...steps, step(1398, 1396), step(1478, 1400), step(1437, 1436)])).toBe(1437);
  });

  it('halves from a first rate not held, and is bounded', () => {
    expect(nextOpenRate([step(1000, 500)])).toBe(500);
    expect(nextOpenRate([step(1, 0)])).toBeUndefined();
    const many = Array.from({ length: 10 }, (_, i) => step(100 + i, 100 + i));
    expect(nextOpenRate(many)).toBeUndefined();
    // nothing held: the capacity is the most served
    expect(openCapacityOf([step(1000, 500), step(500, 420)])).toBe(500);
  });
});
