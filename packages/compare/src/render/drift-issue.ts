// The drift issue: one issue per repository and key, found by a hidden marker on its first line
// (like the sticky comment), saying how far the branch drifted from the reference, since when,
// the steps found, and which functions grew in the latest drift run. Pure: what to
// write; whether to open it is drift/issue-action.ts, the GitHub calls the Action's.

import { type DriftAnalysis, grownFunctions } from '../drift/analysis.js';
import { levelText, short, stepText } from './drift-trend.js';
import { formatChange, points } from './format.js';
import { codeSpan, escapeText } from './markdown-text.js';
import { metricFormat, metricLabel } from './metric-labels.js';

/** The hidden first line that identifies hotpath's drift issue (`key` separates several). */
export function driftIssueMarker(key = ''): string {
  const safe = key.replace(/[^\w.-]/g, '_').slice(0, 100);
  return safe ? `<!-- hotpath-drift:${safe} -->` : '<!-- hotpath-drift -->';
}

/** A reference name in an issue title: plain characters only (titles are not escaped by GitHub). */
const titleSafe = (text: string) => text.replace(/[^\w.+/-]/g, '_').slice(0, 60);

/** Title and body of the drift issue for this analysis. */
export function renderDriftIssue(
  analysis: DriftAnalysis,
  options: { key?: string; runUrl?: string } = {},
): { title: string; body: string } {
  const ref = analysis.reference;
  const worst = analysis.exceeded[0];
  const marker = driftIssueMarker(options.key);
  const runLink =
    options.runUrl && /^https:\/\/[\w.-]+(:\d+)?\/[\w./-]+$/.test(options.runUrl)
      ? ` ([drift run](${options.runUrl}))`
      : '';
  // the metrics not resolved, in the order of the trends
  const unsure = analysis.trends.filter((t) => analysis.unresolved.includes(t));
  if (!worst?.current && unsure.length > 0) {
    return {
      title: `hotpath: drift near ${analysis.threshold} % since ${titleSafe(ref.ref)}`,
      body: [
        marker,
        `The drift since ${escapeText(ref.ref, 100)} (\`${short(ref.sha)}\`) is no longer clearly beyond ${analysis.threshold} %, but not clearly within it either${analysis.latest ? ` as of \`${short(analysis.latest.commit)}\`` : ''}${runLink}; this issue stays open until every interval is within the threshold.`,
        '',
        ...unsure.map((t) => `- ${escapeText(t.scenario, 100)} ${metricLabel(t.metric)}: ${levelText(t)}`),
        '',
      ].join('\n'),
    };
  }
  if (!worst?.current) {
    return {
      title: `hotpath: no drift beyond ${analysis.threshold} % since ${titleSafe(ref.ref)}`,
      body: [
        marker,
        `The branch is back within ${analysis.threshold} % of ${escapeText(ref.ref, 100)} (\`${short(ref.sha)}\`) on every metric${analysis.latest ? ` as of \`${short(analysis.latest.commit)}\`` : ''}${runLink}. Closing.`,
        '',
      ].join('\n'),
    };
  }
  const title = `hotpath: ${metricLabel(worst.metric)} drifted ${formatChange(metricFormat(worst.metric), worst.current.change)} since ${titleSafe(ref.ref)}`;
  const lines = [
    marker,
    `Since ${escapeText(ref.ref, 100)} (\`${short(ref.sha)}\`) the branch drifted beyond the ${analysis.threshold} % threshold${analysis.latest ? `, as of \`${short(analysis.latest.commit)}\`` : ''}${runLink}. Every point of the series is the branch head against that same reference, paired on one runner.`,
    '',
    '| scenario | metric | now vs reference | beyond the threshold since | steps found (first commit at the new level in A..B) |',
    '|---|---|---|---|---|',
  ];
  for (const t of analysis.exceeded) {
    if (!t.current) continue;
    lines.push(
      `| ${escapeText(t.scenario, 100)} | ${metricLabel(t.metric)} | ${levelText(t)} | \`${short(t.current.since)}\` | ${t.steps.map((s) => stepText(t, s, ref.sha)).join('; ') || 'none'} |`,
    );
  }
  const scenarios = [...new Set(analysis.exceeded.map((t) => t.scenario))];
  for (const scenario of scenarios) {
    const grown = grownFunctions(analysis, scenario);
    if (grown.length === 0) continue;
    lines.push(
      '',
      `Functions that grew most in the latest drift run (${escapeText(scenario, 100)}, self-time share vs the reference):`,
      '',
      '| function | where | share grew by |',
      '|---|---|---|',
      ...grown.map(
        (f) =>
          `| ${codeSpan(f.name || '(anonymous)')} | ${codeSpan(f.line ? `${f.file}:${f.line}` : f.file || '(native)')} | ${points(f.delta)}${f.significant ? ' (significant)' : ''} |`,
      ),
    );
  }
  lines.push(
    '',
    'hotpath keeps this issue up to date on every drift run and closes it when the drift falls back within the threshold. A new release tag starts a new series.',
    '',
  );
  return { title, body: lines.join('\n') };
}
