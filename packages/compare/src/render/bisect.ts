// The terminal text of a bisect: one line per step as it is decided (with what is left), and the
// conclusion. Commit subjects come from the repository: printable already (bisect/range.ts).
import type { BisectSearch, BisectStep, StepChange } from '../bisect/model.js';
import type { RangeCommit } from '../bisect/range.js';
import type { MetricName } from '../settings/metrics.js';
import { formatChange, formatInterval } from './format.js';

const short = (sha: string) => sha.slice(0, 12);

/** `cpu per request +212.0 % [+190.2, +233.1] %` (in scenario S when there are several). */
export function changeText(change: StepChange | null): string {
  if (!change) return 'no verdict metric';
  const m = { metric: change.metric as MetricName, unit: change.unit };
  return `${change.metric} ${formatChange(m, change.change)} ${formatInterval(m, change.ci)} (${change.scenario})`;
}

const duration = (seconds: number) =>
  seconds >= 90 ? `${Math.round(seconds / 60)} min` : `${Math.round(seconds)} s`;

/** What the search took from a measured step, beside the comparison's own outcome. */
function verdictWords(step: BisectStep): string {
  if (step.verdict === 'undecided') return ' (undecided)';
  if (step.setsStep) return ' (the step S the rest are placed by)';
  if (step.decidedBy) return ` (${step.verdict} side of half the step)`;
  return step.verdict === 'good' ? ' (within the threshold)' : '';
}

/** One decided step, and the estimate of the comparisons left. */
export function renderBisectStep(
  step: BisectStep,
  commits: readonly RangeCommit[],
  left: number,
  mean: number,
): string {
  const probe = commits[step.probeIndex];
  const what = step.culpritCheck ? "culprit's own comparison" : `step ${step.step}`;
  const head = `${what}: ${short(step.probe)} (#${step.probeIndex}/${commits.length - 1} "${probe?.subject ?? ''}") against ${short(step.good)}`;
  const result =
    step.outcome === 'unbuildable'
      ? `unbuildable, skipped: ${step.reason ?? ''}`
      : `${step.outcome}${verdictWords(step)}, ${changeText(step.change)}, ${step.pairs} pairs${step.measurements > 1 ? ` in ${step.measurements} measurements` : ''}, ${duration(step.seconds)}`;
  const eta = left > 0 ? `; at most ${left} left (~${duration(left * Math.max(mean, 1))})` : '';
  return `${head}: ${result}${eta}`;
}

/** The search's end: culprit, no culprit, or the smallest range and why; the steps in brief. */
export function renderBisectConclusion(search: BisectSearch): string {
  const lines: string[] = [];
  const subject = (sha: string) => search.commits.find((c) => c.sha === sha)?.subject ?? '';
  if (search.conclusion === 'culprit' && search.culprit)
    lines.push(
      `culprit: ${short(search.culprit.sha)} "${search.culprit.subject}"`,
      `  step: ${changeText(search.culprit.change)} against its parent, ${search.culprit.pairs} pairs`,
    );
  else if (search.conclusion === 'no-culprit') lines.push(`no culprit: ${search.why}`);
  else {
    lines.push(
      `no single culprit: the change is in ${search.range.commits.length} commit(s) after ${short(search.range.from)} up to ${short(search.range.to)}`,
      ...search.range.commits.map((sha) => `  ${short(sha)} "${subject(sha)}"`),
      `  why: ${search.why}`,
    );
  }
  for (const s of search.skipped)
    lines.push(`skipped (unbuildable): ${short(s.sha)} "${s.subject}": ${s.reason}`);
  for (const scenario of search.culprit?.scenarios ?? [])
    for (const f of scenario.functions.slice(0, 5))
      lines.push(
        `  hotter in ${scenario.name}: ${f.name} ${f.file}:${f.line} (+${(f.delta * 100).toFixed(1)} pts of CPU)`,
      );
  lines.push(
    `${search.comparisons} comparisons, ${search.pairs} pairs, ${duration(search.seconds)} (threshold ${search.threshold} %)`,
  );
  return `${lines.join('\n')}\n`;
}
