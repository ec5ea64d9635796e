// report.html of a bisect search: the range drawn commit by commit, each step's interval against
// half the step, the steps' table; hostile commit subjects stay text; the page renders in
// Chromium with no script and nothing its Content-Security-Policy refuses.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BisectSearch, BisectStep } from '../src/bisect/model.js';
import { renderBisectHtml } from '../src/render/bisect-html.js';
import { findChromium, launchChromium } from './helpers/chromium.js';

const sha = (i: number) => i.toString(16).padStart(40, 'a');
const HOSTILE = '<img src=x onerror=alert(1)> "quoted" & <script>alert(2)</script>';
const change = (c: number, ci: [number, number]) => ({
  scenario: 'GET /',
  metric: 'cpuPerRequest',
  unit: 'µs',
  better: 'lower' as const,
  change: c,
  ci,
});
const step = (
  n: number,
  probe: number,
  good: number,
  verdict: BisectStep['verdict'],
  extra: Partial<BisectStep> = {},
): BisectStep => ({
  step: n,
  good: sha(good),
  probe: sha(probe),
  goodIndex: good,
  probeIndex: probe,
  outcome: verdict === 'bad' ? 'regressed' : 'unchanged',
  verdict,
  pairs: 3,
  measurements: 1,
  change: verdict === 'bad' ? change(0.15, [0.1, 0.2]) : change(0.01, [-0.02, 0.04]),
  seconds: 55,
  culpritCheck: false,
  ...extra,
});

const search: BisectSearch = {
  schema: 'hotpath-bisect/1',
  commits: Array.from({ length: 9 }, (_, i) => ({
    sha: sha(i),
    subject: i === 5 ? HOSTILE : `comment ${i}`,
  })),
  threshold: 5,
  conclusion: 'culprit',
  culprit: { sha: sha(5), subject: HOSTILE, change: change(0.15, [0.1, 0.2]), pairs: 3, scenarios: [] },
  range: { from: sha(4), to: sha(5), commits: [sha(5)] },
  why: 'regressed',
  skipped: [],
  steps: [
    step(1, 4, 0, 'good'),
    step(2, 6, 4, 'bad', { setsStep: true }),
    step(3, 5, 4, 'bad', { decidedBy: 'half-step' }),
  ],
  comparisons: 3,
  pairs: 9,
  seconds: 230,
};

describe('report.html of a bisect', () => {
  const html = renderBisectHtml(search, 'culprit/report.html');

  it('draws every commit, numbers the probes, rings the culprit, and rows every step', () => {
    expect(html.match(/<circle class="(good|bad|skip|open)" cx="[\d.]+" cy="34"/g)).toHaveLength(9);
    expect(html).toContain('stroke="#cf222e" stroke-width="2"/>');
    expect(html.match(/<tr><td class="num">\d<\/td>/g)).toHaveLength(3);
    expect(html).toContain('S/2');
    expect(html).toContain('step 2: #6 vs #4');
    expect(html).toContain('#6 comment 6 (sets the step S)');
    expect(html).toContain('<a href="culprit/report.html">');
    expect(html).toContain('bad, by half the step');
  });

  it('keeps hostile subjects as text, and allows no script', () => {
    expect(html).not.toMatch(/<img|<script|onerror=alert\(1\)>/);
    expect(html).toContain('&#60;img src=x onerror=alert(1)&#62;');
    expect(html).toMatch(
      /Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;sha256-/,
    );
    expect(html).not.toContain('script-src');
  });

  const chromium = findChromium();
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-bisect-html-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.skipIf(!chromium)(
    'renders in Chromium with its style applied and nothing refused',
    async () => {
      const file = join(dir, 'report.html');
      writeFileSync(file, html);
      const browser = await launchChromium(chromium as string);
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on('console', (m) => errors.push(`${m.type()}: ${m.text()}`));
        page.on('pageerror', (err) => errors.push(String(err)));
        await page.goto(`file://${file}`, { waitUntil: 'load' });
        const drawn = await page.evaluate(() => ({
          circles: document.querySelectorAll('svg circle').length,
          fill: getComputedStyle(document.querySelector('svg circle.bad') as Element).fill,
          alerts: document.querySelectorAll('img, script').length,
        }));
        expect(errors).toEqual([]);
        expect(drawn.circles).toBeGreaterThanOrEqual(9 + 4);
        expect(drawn.fill).toBe('rgb(207, 34, 46)');
        expect(drawn.alerts).toBe(0);
      } finally {
        await browser.close();
      }
    },
    30_000,
  );
});
