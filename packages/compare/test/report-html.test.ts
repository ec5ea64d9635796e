/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// (page.evaluate callbacks run in the browser.)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Profile } from '@hotpath/tick-parser';
import { PNG } from 'pngjs';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compare } from '../src/compare.js';
import type { Measurements, Report, RoundResult } from '../src/model.js';
import { flameData } from '../src/render/flame-data.js';
import { escapeHtml, renderHtml, scriptJson } from '../src/render/html.js';
import { renderMarkdown } from '../src/render/markdown.js';
import { report as makeReport } from '../src/report/report.js';
import { writeReport } from '../src/run/report-files.js';
import { viewerAssets } from '../src/run/viewer-assets.js';
import { resolveSettings } from '../src/settings/schema.js';
import { findChromium, launchChromium, openReport } from './helpers/chromium.js';
import { shardOf } from './helpers/shards.js';

const FIXTURES = new URL('./fixtures/', import.meta.url).pathname;
const HOSTILE = `</script><img src=x onerror="document.title='pwned'"><!--`;

/** A profile of `main → handler → leaf` stacks: one stack per entry, `[leaf, samples]`. */
function profile(stacks: [string, number][], extra: { idle?: number } = {}): Profile {
  const names = ['main', 'handler', ...stacks.map(([leaf]) => leaf)];
  const functions = names.map((name) => ({
    name,
    file: name === HOSTILE ? 'app/<b>x.js' : 'app/server.js',
    line: 1,
    column: 1,
    kind: 'js' as const,
    self: 0,
    total: 0,
  }));
  const out: Profile = {
    source: 'cpuprofile',
    totalTicks: 0,
    functions,
    stacks: stacks.map(([leaf, count]) => ({ frames: [0, 1, names.indexOf(leaf)], count })),
    warnings: [],
  };
  if (extra.idle) {
    functions.push({
      name: '(idle)',
      file: '',
      line: 0,
      column: 0,
      kind: 'meta' as never,
      self: 0,
      total: 0,
    });
    out.stacks.push({ frames: [functions.length - 1], count: extra.idle });
  }
  out.totalTicks = out.stacks.reduce((a, s) => a + s.count, 0);
  return out;
}

function hostileReport(): Report {
  const base = profile(
    [
      ['parse', 500],
      [HOSTILE, 100],
      ['tiny', 1],
    ],
    { idle: 400 },
  );
  const head = profile(
    [
      ['parse', 300],
      [HOSTILE, 600],
      ['tiny', 1],
    ],
    { idle: 100 },
  );
  const round = (side: 'base' | 'head', n: number, rps: number, p: Profile): RoundResult => ({
    side,
    round: n,
    scenarios: [
      {
        scenario: 'GET /',
        load: {
          duration: 1,
          requests: { total: rps, mean: rps, perSecond: [rps] },
          latency: { mean: 10, p50: 10, p90: 12, p99: 20, max: 30 },
          statusCodes: { '200': rps },
          non2xx: 0,
          errors: 0,
          errorsByKind: {},
        },
        profile: p,
        monitors: [],
        profilers: ['node:inspector'],
      },
    ],
    pids: [1],
    warnings: [],
  });
  const measurements: Measurements = {
    base: [round('base', 1, 100, base), round('base', 2, 102, base), round('base', 3, 101, base)],
    head: [round('head', 1, 60, head), round('head', 2, 61, head), round('head', 3, 59, head)],
    order: ['base', 'head', 'base', 'head', 'base', 'head'],
    scenarios: ['GET /'],
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:00.000Z',
  };
  const settings = resolveSettings({ config: { start: 'node server.js', rounds: 3 } });
  return makeReport([
    shardOf(measurements, settings, {
      base: { command: `node ${HOSTILE}`, cwd: '/b', ref: 'main' },
      head: { command: 'node server.js', cwd: '/h', ref: HOSTILE },
    }),
  ]);
}

describe('report.html (pure)', () => {
  const report = hostileReport();
  const html = renderHtml(report, viewerAssets());

  it('escapes every text from the PR: no element, attribute or comment comes from it', () => {
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>x.js');
    expect(html).not.toContain('<!--');
    // Two script elements (the JSON block and the viewer), each closed once.
    expect(html.match(/<\/script/gi)).toHaveLength(2);
    expect(html).toContain(escapeHtml(`node ${HOSTILE}`));
  });

  it('carries the flame graphs as JSON that parses back to the same names', () => {
    const block = /<script type="application\/json" id="hotpath-data">([^<]*)<\/script>/.exec(html)?.[1];
    const data = JSON.parse(block ?? 'null');
    expect(data.flames[0].names).toContain(`${HOSTILE} app/<b>x.js:1:1`);
    expect(Object.keys(data.flames[0]).filter((k) => ['base', 'head', 'diff'].includes(k))).toHaveLength(3);
    expect(scriptJson({ a: '</script>\u2028&' })).toBe('{"a":"\\u003c/script\\u003e\\u2028\\u0026"}');
  });

  it('lets only its own script and style run (CSP hashes, no network)', () => {
    expect(html).toMatch(
      /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-[A-Za-z0-9+/=]+&#39;; style-src &#39;sha256-/,
    );
    expect(html).not.toMatch(/<(link|iframe|object|embed)\b/);
  });

  it('folds tiny frames, leaves (idle) out and gives the differential its self-sample change', () => {
    const data = flameData(report.scenarios[0]?.profiles ?? {}, 0.01);
    // Merged over 3 rounds, head has 2703 busy samples; `tiny` (3) is under 1 % and folded.
    expect(data.head?.v).toBe(2703);
    expect(data.idle).toEqual({ base: 1200, head: 300 });
    const leaves = (root: typeof data.head) => root?.c?.[0]?.c?.[0]?.c?.map((n) => data.names[n.n]) ?? [];
    expect(leaves(data.head)).toEqual([`${HOSTILE} app/<b>x.js:1:1`, 'parse app/server.js:1:1']);
    expect(data.folded).toBe(2);
    // Differential: both sides have 3003 samples, so no scaling: 1800 − 300 for the hostile leaf.
    const hot = data.diff?.c?.[0]?.c?.[0]?.c?.[0];
    expect(hot?.d).toBe(1500);
    expect(data.diff?.c?.[0]?.d).toBeUndefined();
  });

  it('writeReport writes report.html beside report.md', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-html-'));
    try {
      const files = writeReport(dir, report);
      expect(files.html).toBe(join(dir, 'report.html'));
      expect(files.notes).toEqual([]);
      expect(readFileSync(join(dir, 'report.html'), 'utf8')).toBe(renderHtml(report, viewerAssets()));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('links report.html from the comment only through an artifact URL of its own shape', () => {
    const url = 'https://github.com/o/r/actions/runs/12/artifacts/34';
    const md = (htmlArtifact: { name: string; url: string }) => renderMarkdown(report, { htmlArtifact });
    expect(md({ name: 'hotpath-report-job-1', url })).toContain(
      `\`report.html\` in the artifact [\`hotpath-report-job-1\`](${url})`,
    );
    for (const bad of [
      { name: 'x](https://evil.example)', url },
      { name: 'ok', url: 'https://evil.example/o/r/actions/runs/1/artifacts/2)[x](y' },
      { name: 'ok', url: 'javascript:alert(1)' },
    ])
      expect(md(bad)).not.toContain('report.html');
  });
});

// ── in a real browser ───────────────────────────────────────────────────────────────────────

const chromium = findChromium();
const inCi = process.env.CI === 'true';

describe('report.html in headless Chromium', () => {
  it.runIf(inCi)('CI has Chromium (.ci/run installs it), so the browser tests below never skip there', () => {
    expect(chromium, 'no chromium on the PATH: .ci/run installs Debian’s chromium package').toBeDefined();
  });

  let browser: Browser | undefined;
  let dir = '';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-html-browser-'));
    if (chromium) browser = await launchChromium(chromium);
  });
  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = (file: string) => {
    if (!browser) throw new Error('no browser');
    return openReport(browser, file);
  };

  it.skipIf(!chromium)(
    'a real run’s report.html shows three CPU and three allocation flame graphs, with no console error, not blank (needs Chromium: on the PATH or HOTPATH_CHROMIUM)',
    async () => {
      const out = join(dir, 'run');
      const report = await compare({
        baseStart: `node ${JSON.stringify(join(FIXTURES, 'hash-server.cjs'))}`,
        headStart: `HASH_MODE=sync node ${JSON.stringify(join(FIXTURES, 'hash-server.cjs'))}`,
        url: '/auth',
        rounds: 2,
        duration: 1,
        warmup: 0.3,
        connections: 4,
        out,
      });
      expect(report.scenarios[0]?.profiles.head?.totalTicks).toBeGreaterThan(0);
      const file = join(out, 'report.html');
      const { page, errors } = await open(file);
      expect(errors).toEqual([]);
      expect(report.scenarios[0]?.allocationProfiles.head?.totalTicks).toBeGreaterThan(0);
      expect(await page.evaluate(() => document.documentElement.dataset.flameGraphs)).toBe('6');
      const frames = await page.evaluate(() =>
        [...document.querySelectorAll<HTMLElement>('[data-graph]')].map((g) => ({
          graph: g.dataset.graph,
          frames: g.querySelectorAll('g.frame').length,
          labels: [...g.querySelectorAll('.d3-flame-graph-label')].map((l) => l.textContent).join('\n'),
          titles: [...g.querySelectorAll('title')].map((t) => t.textContent).join('\n'),
        })),
      );
      expect(frames.map((f) => f.graph)).toEqual(['diff', 'head', 'base', 'diff', 'head', 'base']);
      for (const f of frames.slice(0, 3)) expect(f.frames).toBeGreaterThan(5);
      expect(frames[1]?.labels).toMatch(/pbkdf2Sync/);
      // the allocation graphs: each frame's bytes per request; the differential's change in bytes
      for (const f of frames.slice(3)) expect(f.frames).toBeGreaterThan(2);
      expect(frames[4]?.titles).toMatch(/^all: [\d.]+ (B|KB) per request \(100\.00 %\)$/m);
      expect(frames[3]?.titles).toMatch(/; self vs base: [+−±][\d.]+ (B|KB) per request$/m);
      expect(frames[1]?.titles).toMatch(/ samples \(/);
      expect(
        await page.evaluate(() => [...document.querySelectorAll('h3')].map((h) => h.textContent)),
      ).toContain('Allocation flame graphs');

      const section = await page.$('.flames');
      const png = PNG.sync.read(Buffer.from((await section?.screenshot({ type: 'png' })) ?? []));
      const colours = new Set<number>();
      let inked = 0;
      for (let i = 0; i < png.data.length; i += 4) {
        const [r = 0, g = 0, b = 0] = [png.data[i], png.data[i + 1], png.data[i + 2]];
        colours.add((r << 16) | (g << 8) | b);
        if (r < 235 || g < 235 || b < 235) inked++;
      }
      writeFileSync(join(dir, 'flames.png'), PNG.sync.write(png));
      expect(png.width).toBeGreaterThan(1000);
      expect(colours.size).toBeGreaterThan(50);
      expect(inked / (png.width * png.height)).toBeGreaterThan(0.1);
      const size = readFileSync(file).length;
      expect(size).toBeLessThan(2 * 1024 * 1024);
      await page.close();
    },
  );

  it.skipIf(!chromium)(
    'a hostile function name is drawn as text and runs nothing (needs Chromium)',
    async () => {
      const file = join(dir, 'hostile.html');
      writeFileSync(file, renderHtml(hostileReport(), viewerAssets()));
      const { page, errors } = await open(file);
      expect(errors).toEqual([]);
      const seen = await page.evaluate(() => ({
        title: document.title,
        images: document.querySelectorAll('img').length,
        labels: [...document.querySelectorAll('.d3-flame-graph-label')].map((l) => l.textContent),
      }));
      expect(seen.title).not.toBe('pwned');
      expect(seen.images).toBe(0);
      expect(seen.labels).toContain(`${HOSTILE} app/<b>x.js:1:1`);
      await page.close();
    },
  );
});
