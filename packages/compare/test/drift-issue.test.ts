import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analyseSeries } from '../src/drift/analysis.js';
import {
  appendPoint,
  currentSeries,
  emptyHistory,
  type History,
  parseHistory,
} from '../src/drift/history.js';
import { issueAction } from '../src/drift/issue-action.js';
import { driftIssueMarker, renderDriftIssue } from '../src/render/drift-issue.js';
import { renderTrendMarkdown, renderTrendTerminal } from '../src/render/drift-trend.js';
import { point, sha, v140 } from './helpers/history.js';

const recorded = (name: string): History =>
  parseHistory(readFileSync(new URL(`./fixtures/drift/${name}`, import.meta.url), 'utf8'), name);

/** A history whose points follow `changes` (cpuPerRequest, ±3 % intervals). */
function historyOf(changes: readonly number[]): History {
  let h = emptyHistory();
  changes.forEach((c, i) => {
    h = appendPoint(h, v140, point(i + 1, c));
  });
  return h;
}

describe('the drift issue on a recorded staircase (bench/drift.mjs, 12 real drift runs)', () => {
  const history = recorded('staircase.json');
  const series = currentSeries(history);
  if (!series) throw new Error('the fixture has no series');

  it('is opened once, when a second run confirms the level beyond the threshold, and stays open (no flapping) to the end', () => {
    // Recorded on a busy 2-core machine: single-run intervals of ±4–12 %; the level after
    // commit 2 measured +5.4 % [+2.5, +8.3] (the true drift was 3 %): beyond the threshold,
    // and confirmed only by a later run.
    const actions: string[] = [];
    let open = false;
    for (let n = 1; n <= series.points.length; n++) {
      const action = issueAction(analyseSeries({ ...series, points: series.points.slice(0, n) }), open);
      actions.push(action);
      if (action === 'create' || action === 'update') open = true;
      if (action === 'close') open = false;
    }
    expect(actions.filter((a) => a === 'create')).toHaveLength(1);
    expect(actions).not.toContain('close');
    expect(actions.at(-1)).toBe('update');
    const first = actions.indexOf('create') + 1;
    const after = (n: number) => analyseSeries({ ...series, points: series.points.slice(0, n) });
    expect(after(first).confirmed).toBe(true);
    // never before the measured level passed the threshold, and not on the first run it did
    // unless surely beyond: the same metric exceeded after one of the two runs before
    const passed = Array.from({ length: first }, (_, i) => i + 1).find((n) => after(n).exceeded.length > 0);
    expect(passed).toBeDefined();
    for (let n = 1; n < first; n++) expect(after(n).confirmed).toBe(false);
    const metrics = (n: number) => after(n).exceeded.map((t) => t.metric);
    // and, when it opened, beyond the threshold with 90 % confidence
    expect(after(first).exceeded.some((t) => t.likely)).toBe(true);
    if (first === passed) expect(after(first).exceeded.some((t) => t.sure)).toBe(true);
    else
      expect(
        metrics(first).some((m) => metrics(first - 1).includes(m) || metrics(first - 2).includes(m)),
      ).toBe(true);
    // here: beyond after commits 2, 5 and 7 (the level hovered at 5 % while the method had found
    // only the first step), two of the last three at 7, but only at 8 beyond it with 90 % confidence
    expect([passed, first]).toEqual([2, 8]);
    expect(after(7).exceeded.length).toBeGreaterThan(0);
    expect(after(7).exceeded.some((t) => t.likely)).toBe(false);
  });

  it('names the steps it found as commit ranges that contain the true steps (commits 1 and 7 here)', () => {
    const cpu = analyseSeries(series).trends.find((t) => t.metric === 'cpuPerRequest');
    const shas = [series.reference.sha, ...series.points.map((p) => p.commit)];
    const ranges = (cpu?.steps ?? []).map((s) => [shas.indexOf(s.after), shas.indexOf(s.upTo)]);
    expect(ranges.some(([after = -1, upTo = -1]) => after < 1 && upTo >= 1 && upTo - after <= 3)).toBe(true);
    expect(ranges.some(([after = -1, upTo = -1]) => after < 7 && upTo >= 7 && upTo - after <= 3)).toBe(true);
    // and none that contains no true step (1, 4, 7, 10)
    for (const [after = -1, upTo = -1] of ranges)
      expect([1, 4, 7, 10].some((s) => after < s && s <= upTo)).toBe(true);
  });

  it('names how much, since when and the steps, as commit ranges', () => {
    const analysis = analyseSeries(series);
    const cpu = analysis.trends.find((t) => t.metric === 'cpuPerRequest');
    expect(cpu?.exceeded).toBe(true);
    expect(cpu?.steps.length).toBeGreaterThanOrEqual(2);
    const { title, body } = renderDriftIssue(analysis);
    // the surest drift leads (CPU per request: its interval is the narrowest), not the largest
    expect(analysis.exceeded[0]?.metric).toBe('cpuPerRequest');
    expect(title).toMatch(/^hotpath: CPU per request drifted \+\d+\.\d % since v1\.0\.0$/);
    expect(body.split('\n')[0]).toBe(driftIssueMarker());
    expect(body).toMatch(/CPU per request \| \+\d+\.\d % \[/);
    expect(body).toMatch(/in (the reference|[0-9a-f]{7})\.\.[0-9a-f]{7}/);
  });
});

describe('the drift issue on a recorded A/A history (bench/drift.mjs --aa, 12 real drift runs, 2 s windows)', () => {
  const series = currentSeries(recorded('aa.json'));
  if (!series) throw new Error('the fixture has no series');

  it('finds no step in any metric after any of the 12 runs', () => {
    for (let n = 1; n <= series.points.length; n++) {
      const analysis = analyseSeries({ ...series, points: series.points.slice(0, n) });
      expect(analysis.trends.filter((t) => t.inVerdict).flatMap((t) => t.steps)).toEqual([]);
    }
  });

  it('keeps CPU per request, requests/s and p50 within the threshold; p99 alone drifted (a recorded false alarm)', () => {
    // What this recording shows, kept as a known limitation: head's p99 of 2-s windows was
    // higher in most runs (+71, +29, … +86 %), and pooled over runs 1–9 its level passed
    // 5 % with an interval above zero (+22 % [+3, +46] after run 12). Every run measures base
    // first in each pair; an order effect on the tail is the likely cause, not the analysis.
    for (let n = 1; n <= series.points.length; n++) {
      const analysis = analyseSeries({ ...series, points: series.points.slice(0, n) });
      expect(analysis.exceeded.map((t) => t.metric).filter((m) => m !== 'p99')).toEqual([]);
    }
    const cpu = analyseSeries(series).trends.find((t) => t.metric === 'cpuPerRequest');
    expect(cpu?.within).toBe(true);
    expect(Math.abs(cpu?.current?.change ?? 1)).toBeLessThan(0.01);
  });
});

describe('the drift issue on a recorded A/A history at the defaults (12 real drift runs, 5 s windows)', () => {
  const series = currentSeries(recorded('aa-defaults.json'));
  if (!series) throw new Error('the fixture has no series');

  it('is never raised, and no step is found, after any of the 12 runs', () => {
    for (let n = 1; n <= series.points.length; n++) {
      const analysis = analyseSeries({ ...series, points: series.points.slice(0, n) });
      expect(issueAction(analysis, false)).toBe('none');
      expect(analysis.trends.flatMap((t) => t.steps)).toEqual([]);
    }
    // and an issue left open from before would be closed: every interval is within 5 %
    expect(issueAction(analyseSeries(series), true)).toBe('close');
  });

  it('says the drift is within the threshold, since every interval is', () => {
    const analysis = analyseSeries(series);
    expect(analysis.status).toBe('within');
    expect(analysis.unresolved).toEqual([]);
    expect(renderTrendMarkdown(analysis)).toContain("No drift beyond 5 %: every metric's interval");
    expect(renderTrendTerminal(analysis)).not.toMatch(/NOT RESOLVED|could be beyond/);
  });
});

describe('a recorded A/A history beside a noisy neighbour (6 real drift runs, a CPU hog on the server core switching on and off)', () => {
  const series = currentSeries(recorded('aa-neighbour.json'));
  if (!series) throw new Error('the fixture has no series');
  const analysis = analyseSeries(series);

  it('raises nothing and finds no step, but does not claim "no drift" where the runs could not tell', () => {
    expect(issueAction(analysis, false)).toBe('none');
    expect(analysis.trends.flatMap((t) => t.steps)).toEqual([]);
    // CPU per request stayed precise (±2.4 % pooled); latency and throughput, whose spoiled
    // pairs are left out, did not: their levels still reach past 5 % in the worse direction
    expect(analysis.trends.find((t) => t.metric === 'cpuPerRequest')?.within).toBe(true);
    expect(analysis.status).toBe('unresolved');
    expect(analysis.unresolved.map((t) => t.metric).sort()).toEqual(['p50', 'requestsPerSecond']);
    const markdown = renderTrendMarkdown(analysis);
    expect(markdown).not.toContain('No drift beyond');
    expect(markdown).toMatch(
      /\*\*Not resolved\*\*: no metric is shown beyond 5 %, but a drift that size is not ruled out/,
    );
    expect(markdown).toMatch(/\| Latency p50 \| [^|]+ could be beyond \|/);
    expect(markdown).not.toMatch(/\| CPU per request \| [^|]+ could be beyond/);
    expect(renderTrendTerminal(analysis)).toMatch(/^ {2}NOT RESOLVED: .*Latency p50/m);
  });
});

describe('issueAction', () => {
  const flat = analyseSeries(
    currentSeries(historyOf(new Array(12).fill(0.004))) ?? { reference: v140, points: [] },
  );
  const drifted = analyseSeries(
    currentSeries(historyOf([0.01, 0.0, 0.02, 0.09, 0.1, 0.11, 0.1, 0.1])) ?? { reference: v140, points: [] },
  );

  it('opens one issue when the drift exceeds the threshold, and updates the open one after', () => {
    expect(drifted.exceeded.map((t) => t.metric)).toEqual(['cpuPerRequest']);
    expect(drifted.status).toBe('beyond');
    expect(drifted.unresolved).toEqual([]);
    expect(issueAction(drifted, false)).toBe('create');
    expect(issueAction(drifted, true)).toBe('update');
  });

  it('closes the open issue when the drift is back within the threshold, and does nothing without one', () => {
    expect(flat.exceeded).toEqual([]);
    expect(issueAction(flat, true)).toBe('close');
    expect(issueAction(flat, false)).toBe('none');
    expect(renderDriftIssue(flat).body).toMatch(/back within 5 % of v1\.4\.0/);
  });

  it('waits for a second run when one run alone takes the level beyond the threshold', () => {
    // +7 % ± 3 % after one run: beyond 5 %, but its interval reaches below it
    const once = analyseSeries(
      currentSeries(historyOf([0.0, 0.0, 0.0, 0.0, 0.07])) ?? { reference: v140, points: [] },
    );
    expect(once.exceeded.map((t) => t.metric)).toEqual(['cpuPerRequest']);
    expect(once.exceeded[0]?.sure).toBe(false);
    expect(once.confirmed).toBe(false);
    expect(issueAction(once, false)).toBe('none');
    // an open issue is still updated with it
    expect(issueAction(once, true)).toBe('update');
    // the summary and the terminal say what it waits for
    expect(renderTrendMarkdown(once)).toMatch(/\*\*Drift beyond the threshold\*\*.*Not confirmed yet/);
    expect(renderTrendTerminal(once)).toContain(
      'the drift issue opens once the same metric is beyond it after 2 of the last 3 runs',
    );
    const twice = analyseSeries(
      currentSeries(historyOf([0.0, 0.0, 0.0, 0.0, 0.07, 0.07])) ?? { reference: v140, points: [] },
    );
    expect(twice.confirmed).toBe(true);
    expect(issueAction(twice, false)).toBe('create');
    expect(renderTrendMarkdown(twice)).not.toContain('Not confirmed yet');
  });

  it('waits while a level beyond the threshold after two runs is not beyond it with 90 % confidence', () => {
    // +5.7 % ± 3 % twice: the level's point estimate is beyond 5 %, its one-sided 90 % bound is not
    const near = (runs: number) =>
      analyseSeries(
        currentSeries(historyOf([0.0, 0.0, 0.0, 0.0, ...new Array(runs).fill(0.057)])) ?? {
          reference: v140,
          points: [],
        },
      );
    const twice = near(2);
    expect(twice.exceeded.map((t) => t.metric)).toEqual(['cpuPerRequest']);
    expect(twice.exceeded[0]?.likely).toBe(false);
    expect(twice.confirmed).toBe(false);
    expect(issueAction(twice, false)).toBe('none');
    expect(issueAction(twice, true)).toBe('update');
    expect(renderTrendTerminal(twice)).toContain(
      'Not confirmed yet (beyond it, but not with 90 % confidence)',
    );
    // more runs at that level narrow its interval until the bound is beyond the threshold too
    const later = [3, 4, 5, 6, 7, 8].map(near);
    const opens = later.findIndex((a) => a.confirmed);
    expect(opens).toBeGreaterThanOrEqual(0);
    expect(later[opens]?.exceeded[0]?.likely).toBe(true);
    expect(renderTrendMarkdown(later[opens] ?? twice)).not.toContain('Not confirmed yet');
  });

  it('opens at once when one run takes the level surely beyond the threshold', () => {
    const jump = analyseSeries(
      currentSeries(historyOf([0.0, 0.0, 0.0, 0.0, 0.2])) ?? { reference: v140, points: [] },
    );
    expect(jump.exceeded[0]?.sure).toBe(true);
    expect(jump.confirmed).toBe(true);
    expect(issueAction(jump, false)).toBe('create');
  });

  it('does not raise on an improvement, however large', () => {
    const faster = analyseSeries(
      currentSeries(historyOf(new Array(8).fill(-0.2))) ?? { reference: v140, points: [] },
    );
    expect(faster.exceeded).toEqual([]);
  });

  it.each([
    ['beyond the threshold', 0.15, 'beyond'],
    ['not resolved', 0.045, 'unresolved'],
  ])(
    'keeps hostile names from the repository inert in the issue and the summary (%s)',
    (_, change, status) => {
      let h = emptyHistory();
      const hostile = { ref: '@team <img src=x> [x](https://evil.example)', sha: sha(7) };
      for (let i = 1; i <= 6; i++) {
        const p = point(i, change);
        const scenario = p.scenarios[0];
        if (!scenario) throw new Error('no scenario');
        scenario.name = '<script>alert(1)</script> @org/team';
        scenario.functions = [
          { name: '`x` | @someone ![i](https://e.example/p.png)', file: 'src/a.js', line: 3, delta: 0.1 },
        ];
        h = appendPoint(h, hostile, p);
      }
      const analysis = analyseSeries(currentSeries(h) ?? { reference: hostile, points: [] });
      expect(analysis.status).toBe(status);
      const { title, body } = renderDriftIssue(analysis);
      const summary = renderTrendMarkdown(analysis, h);
      for (const text of [title, body, summary]) {
        // markup only ever escaped: no unescaped tag, no link
        expect(text).not.toMatch(/(^|[^\\])<(script|img)/);
        expect(text).not.toMatch(/(^|[^\\])\]\(https?:\/\/evil/);
        // no mention outside a code span (inside one, nothing is a mention)
        expect(text.replace(/``.*?``/g, '')).not.toMatch(/(^|[^\u200b])@(team|org|someone)/);
      }
      expect(title).toMatch(/^[\w .:+%/−-]+$/);
      if (status === 'beyond') expect(body).toContain('`` `x` \\| @someone ![i](https://e.example/p.png) ``');
      else expect(summary).toMatch(/\*\*Not resolved\*\*: .*alert\(1\)/);
      expect(renderTrendTerminal(analysis, h)).not.toMatch(/\u001b/);
    },
  );
});

describe('the trend', () => {
  it('draws a mermaid chart of change with its interval band over commits, and lists the steps', () => {
    const h = historyOf([0.0, 0.01, 0.0, 0.1, 0.11, 0.1, 0.1]);
    const analysis = analyseSeries(currentSeries(h) ?? { reference: v140, points: [] });
    const md = renderTrendMarkdown(analysis, h);
    expect(md).toContain('```mermaid\nxychart-beta');
    expect(md).toMatch(/x-axis \["[0-9a-f]{7}"(, "[0-9a-f]{7}"){6}\]/);
    expect(md.match(/^ {2}line \[/gm)).toHaveLength(3);
    expect(md).toMatch(
      /\| CPU per request \| \+\d+\.\d % \[.*\*\*beyond threshold\*\* \| \+\d+\.\d % .* in [0-9a-f]{7}\.\.[0-9a-f]{7} \|/,
    );
    const text = renderTrendTerminal(analysis, h);
    expect(text).toMatch(/CPU per request +[▁▂▃▄▅▆▇█]{7} +now \+/);
    expect(text).toContain('BEYOND THRESHOLD');
  });
});

describe('issueAction near the threshold', () => {
  it('keeps the open issue (updated, not closed) while the level is not clearly within the threshold', () => {
    // at about the threshold with wide intervals: neither beyond nor clearly within
    const hovering = analyseSeries(
      currentSeries(historyOf([0.045, 0.05, 0.04])) ?? { reference: v140, points: [] },
    );
    expect(hovering.exceeded).toEqual([]);
    expect(issueAction(hovering, true)).toBe('update');
    expect(issueAction(hovering, false)).toBe('none');
    expect(hovering.status).toBe('unresolved');
    expect(hovering.unresolved.map((t) => t.metric)).toEqual(['cpuPerRequest']);
    expect(renderTrendMarkdown(hovering)).toMatch(/\*\*Not resolved\*\*: .*CPU per request \+4\.\d %/);
    const { title, body } = renderDriftIssue(hovering);
    expect(title).toMatch(/^hotpath: drift near 5 % since v1\.4\.0$/);
    expect(body).toMatch(/stays open until every interval is within the threshold/);
  });
});
