// The trend of a drift history as text: markdown for the job summary (a mermaid xychart per
// scenario — change vs the reference with its interval band over commits — and a table of the
// steps found), and plain text for the terminal (a sparkline per metric). Pure. Names that come
// from the repository (scenario, reference, functions) are escaped; commits are hex only.

import { type DriftAnalysis, type DriftStep, type MetricTrend, OPEN_CONFIDENCE } from '../drift/analysis.js';
import type { History } from '../drift/history.js';
import { changesByAmount, changesInPoints, metricSpec } from '../settings/metrics.js';
import { formatChange, formatInterval } from './format.js';
import { escapeText } from './markdown-text.js';
import { metricFormat, metricLabel } from './metric-labels.js';

/** Points a chart shows (the newest). */
const CHART_POINTS = 60;

export const short = (sha: string) => (/^[0-9a-f]{7,64}$/.test(sha) ? sha.slice(0, 7) : '???????');
/** A name for mermaid's quoted strings and the terminal: no quotes, markup or control characters. */
const plain = (text: string, max = 80) =>
  text
    .replace(/[^\w .,:/+()%-]/g, '_')
    .slice(0, max)
    .trim();
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g;
const terminalSafe = (text: string, max = 120) => text.replace(CONTROL, ' ').slice(0, max);

/** A change of a metric with its interval ("+4.0 % [+1.4, +6.7] %"). */
const changeText = (metric: string, change: number, ci: [number, number]) =>
  `${formatChange(metricFormat(metric), change)} ${formatInterval(metricFormat(metric), ci)}`;

/** A trend's level now with its interval; '—' before it has one. */
export function levelText(t: Pick<MetricTrend, 'metric' | 'current'>): string {
  return t.current ? changeText(t.metric, t.current.change, t.current.ci) : '—';
}

export function stepText(t: Pick<MetricTrend, 'metric'>, s: DriftStep, referenceSha: string): string {
  const after = s.after === referenceSha ? 'the reference' : short(s.after);
  return `${changeText(t.metric, s.change, s.ci)} in ${after}..${short(s.upTo)}`;
}

/** The trend the chart shows for a scenario: the worst exceeded one, else CPU per request, else the first. */
export function leadTrend(analysis: DriftAnalysis, scenario: string): MetricTrend | undefined {
  const ofScenario = analysis.trends.filter((t) => t.scenario === scenario && t.inVerdict);
  return (
    analysis.exceeded.find((t) => t.scenario === scenario) ??
    ofScenario.find((t) => t.metric === 'cpuPerRequest') ??
    ofScenario[0]
  );
}

function chart(analysis: DriftAnalysis, t: MetricTrend): string[] {
  const points = t.points.slice(-CHART_POINTS);
  // percent (errorRate: percentage points; retained bytes: bytes); an interval without bounds is
  // drawn at zero
  const bytes = changesByAmount(t.metric);
  const finite = (x: number) => (Number.isFinite(x) ? Number((bytes ? x : x * 100).toFixed(2)) : 0);
  const lows = points.map((p) => finite(p.ci[0]));
  const highs = points.map((p) => finite(p.ci[1]));
  const changes = points.map((p) => finite(p.change));
  const min = Math.floor(Math.min(0, ...lows, -analysis.threshold) - 1);
  const max = Math.ceil(Math.max(0, ...highs, analysis.threshold) + 1);
  return [
    '```mermaid',
    'xychart-beta',
    `  title "${plain(t.scenario)}: ${plain(metricLabel(t.metric))} vs ${plain(analysis.reference.ref, 40)}"`,
    `  x-axis [${points.map((p) => `"${short(p.commit)}"`).join(', ')}]`,
    `  y-axis "change ${bytes ? `(${metricSpec(t.metric)?.unit === 'B' ? 'bytes' : metricSpec(t.metric)?.unit} per request)` : changesInPoints(t.metric) ? '(points)' : '(%)'}" ${min} --> ${max}`,
    `  line [${highs.join(', ')}]`,
    `  line [${changes.join(', ')}]`,
    `  line [${lows.join(', ')}]`,
    '```',
  ];
}

/** Markdown of a series' analysis: the job summary of a drift run and `hotpath history --markdown`. */
export function renderTrendMarkdown(analysis: DriftAnalysis, history?: History): string {
  const ref = analysis.reference;
  const lines = [
    `### hotpath drift vs ${escapeText(ref.ref, 100)} (\`${short(ref.sha)}\`)`,
    '',
    `${analysis.latest ? `${countPoints(analysis)} runs, latest on \`${short(analysis.latest.commit)}\`. ` : ''}Every point is head vs the same reference, paired on one runner; the band is each run's interval. Threshold ${analysis.threshold} %.`,
    '',
  ];
  const worst = analysis.exceeded[0];
  if (worst?.current)
    lines.push(
      `**Drift beyond the threshold**: ${escapeText(worst.scenario, 100)} ${metricLabel(worst.metric)} ${levelText(worst)} since \`${short(worst.current.since)}\`.${analysis.confirmed ? '' : ` ${unconfirmed(analysis)}`}`,
      '',
    );
  else
    lines.push(
      notBeyond(
        analysis,
        (t) => escapeText(t, 100),
        (t) => `**${t}**`,
      ),
      '',
    );
  const scenarios = [...new Set(analysis.trends.map((t) => t.scenario))];
  for (const scenario of scenarios) {
    lines.push(`#### ${escapeText(scenario, 100)}`, '');
    const lead = leadTrend(analysis, scenario);
    if (lead && lead.points.length > 0) lines.push(...chart(analysis, lead), '');
    lines.push(
      '| metric | now vs reference | steps found (first commit at the new level in A..B) |',
      '|---|---|---|',
    );
    for (const t of analysis.trends.filter((x) => x.scenario === scenario && x.inVerdict)) {
      const now = t.current
        ? `${levelText(t)}${t.exceeded ? ' **beyond threshold**' : t.within ? '' : ' could be beyond'}`
        : '—';
      const steps = t.steps.map((s) => stepText(t, s, ref.sha)).join('; ') || 'none';
      lines.push(`| ${metricLabel(t.metric)} | ${now} | ${steps} |`);
    }
    lines.push('');
  }
  const earlier = (history?.series ?? []).filter((s) => s.reference.sha !== ref.sha);
  if (earlier.length > 0)
    lines.push(
      `Earlier references (their series stay readable with \`hotpath history FILE --reference REF\`): ${earlier
        .map((s) => `${escapeText(s.reference.ref, 60)} (${s.points.length} runs)`)
        .join(', ')}.`,
      '',
    );
  return `${lines.join('\n')}\n`;
}

function countPoints(analysis: DriftAnalysis): number {
  return Math.max(0, ...analysis.trends.map((t) => t.points.length));
}

const BARS = '▁▂▃▄▅▆▇█';

/** A sparkline of values (one character each). */
export function sparkline(values: readonly number[]): string {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return '';
  const lo = Math.min(...finite);
  const hi = Math.max(...finite);
  return values
    .map((v) => {
      if (!Number.isFinite(v)) return ' ';
      const i = hi === lo ? 3 : Math.round(((v - lo) / (hi - lo)) * (BARS.length - 1));
      return BARS[i] ?? ' ';
    })
    .join('');
}

/**
 * The headline when no metric is shown beyond the threshold: within it, or not resolved — never
 * "no drift" when the runs could not tell.
 */
function notBeyond(
  analysis: DriftAnalysis,
  safe: (text: string) => string,
  strong: (text: string) => string,
): string {
  const t = analysis.threshold;
  if (!analysis.latest) return 'No runs in this series yet.';
  if (analysis.status === 'within')
    return `No drift beyond ${t} %: every metric's interval stays short of it in the worse direction.`;
  const shown = analysis.unresolved
    .slice(0, 3)
    .map((u) => `${safe(u.scenario)} ${metricLabel(u.metric)} ${levelText(u)}`)
    .join('; ');
  const more = analysis.unresolved.length > 3 ? ` and ${analysis.unresolved.length - 3} more` : '';
  return `${strong('Not resolved')}: no metric is shown beyond ${t} %, but a drift that size is not ruled out either (${shown}${more}): the runs were too noisy or too few to tell, and each further run narrows the level.`;
}

/** What a drift beyond the threshold that is not confirmed yet waits for. */
function unconfirmed(analysis: DriftAnalysis): string {
  const sure = `${Math.round(OPEN_CONFIDENCE * 100)} % confidence`;
  const why = analysis.exceeded.some((t) => t.likely)
    ? 'beyond it after this run only, of the last three'
    : `beyond it, but not with ${sure}`;
  return `Not confirmed yet (${why}): the drift issue opens once the same metric is beyond it after 2 of the last 3 runs and, that run, with ${sure}.`;
}

/** Plain text of a series' analysis: `hotpath drift` and `hotpath history`. */
export function renderTrendTerminal(analysis: DriftAnalysis, history?: History): string {
  const ref = analysis.reference;
  const lines = [
    `hotpath drift vs ${terminalSafe(ref.ref, 60)} (${short(ref.sha)}), threshold ${analysis.threshold} %`,
  ];
  if (analysis.exceeded.length === 0)
    lines.push(
      `  ${notBeyond(
        analysis,
        (t) => terminalSafe(t, 80),
        (t) => t.toUpperCase(),
      )}`,
    );
  for (const scenario of [...new Set(analysis.trends.map((t) => t.scenario))]) {
    lines.push('', `  ${terminalSafe(scenario, 80)}`);
    for (const t of analysis.trends.filter((x) => x.scenario === scenario && x.inVerdict)) {
      const now = levelText(t);
      lines.push(
        `    ${metricLabel(t.metric).padEnd(16)} ${sparkline(t.points.map((p) => p.change)).padEnd(Math.min(40, t.points.length))}  now ${now}${t.exceeded ? '  BEYOND THRESHOLD' : t.within ? '' : '  could be beyond'}`,
      );
      for (const s of t.steps) lines.push(`      step ${stepText(t, s, ref.sha)}`);
    }
  }
  if (analysis.exceeded.length > 0 && !analysis.confirmed) lines.push('', `  ${unconfirmed(analysis)}`);
  if (analysis.latest) {
    lines.push('', `  runs (latest last):`);
    const lead = analysis.trends.find((t) => t.metric === 'cpuPerRequest') ?? analysis.trends[0];
    for (const p of (lead?.points ?? []).slice(-15))
      lines.push(
        `    ${short(p.commit)}  ${p.date.slice(0, 16).replace('T', ' ')}  ${lead ? `${metricLabel(lead.metric)} ${changeText(lead.metric, p.change, p.ci)}` : ''}`,
      );
  }
  const earlier = (history?.series ?? []).filter((s) => s.reference.sha !== ref.sha);
  if (earlier.length > 0)
    lines.push(
      '',
      `  earlier references: ${earlier.map((s) => `${terminalSafe(s.reference.ref, 40)} (${s.points.length} runs)`).join(', ')}`,
    );
  return `${lines.join('\n')}\n`;
}
