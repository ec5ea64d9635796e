import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AllocationProfile, Measurements, RoundResult, ScenarioRound } from '../src/model.js';
import { renderHtml } from '../src/render/html.js';
import { renderMarkdown } from '../src/render/markdown.js';
import { REPORT_SCHEMA, render, reportJson } from '../src/render/render.js';
import { report as makeReport } from '../src/report/report.js';
import { viewerAssets } from '../src/run/viewer-assets.js';
import { resolveSettings } from '../src/settings/schema.js';
import { readShard, writeShard } from '../src/shard/file.js';
import { diffSurvivors } from '../src/verdict/allocation-diff.js';
import { allocationProfile, thousandRequests } from './helpers/allocation-profile.js';
import { defined } from './helpers/defined.js';
import { expectSafeMarkdown, renderGfm } from './helpers/gfm.js';
import { shardOf } from './helpers/shards.js';

// What each warm-up left alive, by allocation site (recorded data): per round the survivors profile
// over the warm-up's requests, the diff base → head with a paired interval, its tables in the
// comment, the terminal and report.html, report.json and the results files.

const settings = resolveSettings({ config: { start: 'node server.js', rounds: 3 } });
const SCENARIO = defined(settings.scenarios[0], 'the default scenario').name;

/** One window of 1 000 measured requests after a warm-up of `warmupRequests` with these survivors. */
function window(survivors: AllocationProfile | undefined, warmupRequests = 2000): ScenarioRound {
  return {
    scenario: SCENARIO,
    load: thousandRequests(),
    ...(survivors ? { survivors: { warmupRequests, profile: survivors } } : {}),
    monitors: [],
    profilers: ['none'],
  };
}

function measurements(base: (n: number) => ScenarioRound, head: (n: number) => ScenarioRound): Measurements {
  const round = (side: 'base' | 'head', n: number): RoundResult => ({
    side,
    round: n,
    scenarios: [side === 'base' ? base(n) : head(n)],
    pids: [1],
    warnings: [],
  });
  return {
    base: [1, 2, 3].map((n) => round('base', n)),
    head: [1, 2, 3].map((n) => round('head', n)),
    order: ['base', 'head', 'base', 'head', 'base', 'head'],
    scenarios: [SCENARIO],
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:00.000Z',
  };
}

describe('bytes still alive after a load by function (recorded data)', () => {
  it("are each round's sampled bytes over its warm-up requests; a new leak leads, the probe left out", () => {
    // base: a cache filled once, 40 000 sampled bytes over 2 000 warm-up requests = 20 B a request.
    // head: the same cache, and recordRequest keeping ~300 B a request (600 000 + n bytes sampled).
    const base = [1, 2, 3].map((n) => window(allocationProfile({ fillCache: 40_000 + n })));
    const head = [1, 2, 3].map((n) =>
      window(allocationProfile({ fillCache: 40_000, recordRequest: 600_000 + 1000 * n })),
    );
    const withProbe = defined(head[0]?.survivors).profile;
    withProbe.functions.push({
      name: 'startWarmUp',
      file: 'hotpath:probe',
      line: 1,
      column: 1,
      selfBytes: 9_000,
    });
    withProbe.sampledBytes += 9_000;
    const diff = defined(diffSurvivors(base, head, 0.05), 'a diff');
    const top = defined(diff.rows[0]);
    expect(top).toMatchObject({
      name: 'recordRequest',
      status: 'new',
      base: 0,
      file: 'src/app.js',
      line: 11,
    });
    expect(top.head).toBeCloseTo(301, 9);
    expect(defined(top.ci, 'an interval')[0]).toBeGreaterThan(290);
    expect(diff.rows[1]).toMatchObject({ name: 'fillCache', status: 'changed' });
    expect(defined(diff.rows[1]).base).toBeCloseTo(20.001, 9);
    expect(diff.rows.map((r) => r.name)).not.toContain('startWarmUp');
    expect(diff.rows.map((r) => r.name)).not.toContain('main');
    expect(diff).toMatchObject({ pairs: 3, rounds: { base: 3, head: 3 } });
    // The totals count every function, hotpath's own included (9 000 B over 2 000 requests in one round).
    expect(diff.headTotal).toBeCloseTo(20 + 301 + 4.5 / 3, 9);
  });

  it('has no interval under two pairs, and is absent when a side has no survivors profile', () => {
    const one = defined(
      diffSurvivors(
        [window(allocationProfile({ f: 4_000 }), 1000)],
        [window(allocationProfile({ f: 8_000 }), 500)],
        0.05,
      ),
    );
    expect(one.rows[0]).toMatchObject({ name: 'f', base: 4, head: 16, change: 12, status: 'changed' });
    expect(one.rows[0]?.ci).toBeUndefined();
    expect(diffSurvivors([window(undefined)], [window(allocationProfile({ f: 1 }))], 0.05)).toBeUndefined();
    // A warm-up that sent no request has no bytes per request.
    expect(
      diffSurvivors([window(allocationProfile({ f: 1 }), 0)], [window(allocationProfile({ f: 1 }))], 0.05),
    ).toBeUndefined();
  });
});

const HOSTILE = [
  '<img src=x onerror=alert(1)>',
  '@octocat',
  '`code` ``` x ```',
  '[x](http://evil.example)',
  'www.evil.example #123 | a |',
];

describe('the survivors table', () => {
  const leakyReport = (name = 'recordRequest', file = 'src/log.js') =>
    makeReport(
      [
        shardOf(
          measurements(
            () => window(allocationProfile({ fillCache: 40_000 }, file)),
            (n) => window(allocationProfile({ fillCache: 40_000, [name]: 600_000 + 1000 * n }, file)),
          ),
          settings,
        ),
      ],
      { links: { repositoryUrl: 'https://github.com/o/r', sha: 'abc1234' } },
    );

  it('is in report.json (hotpath-report/6), the comment, the terminal and report.html', () => {
    const made = leakyReport();
    const json = JSON.parse(render(made).json);
    expect(json.schema).toBe('hotpath-report/6');
    expect(REPORT_SCHEMA).toBe('hotpath-report/6');
    expect(json.scenarios[0].survivors.rows[0]).toMatchObject({ name: 'recordRequest', status: 'new' });
    expect(reportJson(made).scenarios[0]?.allocations).toBeUndefined();
    const markdown = renderMarkdown(made);
    expect(markdown).toContain(
      'Still alive after a load, by allocation site: bytes per request that a load as long as the warm-up',
    );
    expect(markdown).toContain('| | Allocation site | Where | Alive per request base → head |');
    expect(markdown).toMatch(
      /\| 🆕 \| `recordRequest` \| \[`src\/log\.js:11`\]\(https:\/\/github\.com\/o\/r\/blob\/abc1234\/src\/log\.js#L11\) \| 0.00 B → 301 B \| \+301 B \| \[\+300 B, \+302 B\] \|/,
    );
    const { terminal } = render(made);
    expect(terminal).toContain('still alive after a load, by allocation site');
    expect(terminal).toMatch(/new\s+0.00 B → 301 B\s+\+301 B .* recordRequest {2}src\/log\.js:11/);
    const html = renderHtml(made, viewerAssets());
    expect(html).toContain('<h3>Still alive after a load, by allocation site</h3>');
    expect(html).toContain('<code>recordRequest</code>');
    // Without survivors profiles (memory: off, no warm-up) there is no table.
    const none = makeReport([
      shardOf(
        measurements(
          () => window(undefined),
          () => window(undefined),
        ),
        settings,
      ),
    ]);
    expect(none.scenarios[0]?.survivors).toBeUndefined();
    expect(renderMarkdown(none)).not.toContain('Still alive after a load');
    expect(render(none).terminal).not.toContain('still alive after a load');
  });

  it('renders hostile names as text: no markup, link or mention in the comment, escaped in report.html', () => {
    for (const text of HOSTILE) {
      const made = leakyReport(text, text);
      expect(made.scenarios[0]?.survivors?.rows[0]?.name).toBe(text);
      const markdown = renderMarkdown(made);
      expect(markdown).toContain('Allocation site');
      expectSafeMarkdown(markdown, { repositoryUrl: 'https://github.com/o/r' });
      expect(renderGfm(markdown)).toContain('<code>');
      const html = renderHtml(made, viewerAssets());
      expect(html).not.toContain('<img src=x');
    }
  });
});

describe('survivors profiles in results files', () => {
  it('are written beside the results with the warm-up requests and read back; a malformed one is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-survivors-shard-'));
    try {
      const good = allocationProfile({ recordRequest: 600_000 });
      const folder = writeShard(
        dir,
        shardOf(
          measurements(
            () => window(good, 1234),
            () => window(undefined),
          ),
          settings,
        ),
      );
      const resultsPath = join(folder, 'hotpath-results.json');
      const results = JSON.parse(readFileSync(resultsPath, 'utf8'));
      expect(results.base[0].scenarios[0]).toMatchObject({
        survivorsProfile: 'profiles/base-1-1.survivors.json',
        warmupRequests: 1234,
      });
      expect(results.head[0].scenarios[0].survivorsProfile).toBeUndefined();
      const shard = readShard(resultsPath);
      expect(shard.measurements.base[0]?.scenarios[0]?.survivors).toEqual({
        warmupRequests: 1234,
        profile: good,
      });
      expect(shard.measurements.head[0]?.scenarios[0]?.survivors).toBeUndefined();
      writeFileSync(
        join(folder, 'profiles/base-1-1.survivors.json'),
        JSON.stringify({ ...good, stacks: [{ frames: [7], bytes: 1 }] }),
      );
      expect(() => readShard(resultsPath)).toThrow(
        /allocation profile .*base-1-1\.survivors\.json.* does not have the expected shape: a stack names a function/,
      );
      results.base[0].scenarios[0].survivorsProfile = '../outside.json';
      writeFileSync(resultsPath, JSON.stringify(results));
      expect(() => readShard(resultsPath)).toThrow(
        /expected shape at base\.0\.scenarios\.0\.survivorsProfile/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
