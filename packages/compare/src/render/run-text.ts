// The words a front door prints around a run: the files it wrote, what it replaced, why the run
// failed, the comment's first lines and a drift run's job summary. Pure; the doors write them.
import type { DriftAnalysis } from '../drift/analysis.js';
import type { History } from '../drift/history.js';
import type { Report } from '../model.js';
import { printable } from '../printable.js';
import type { FailDecision, WrittenFiles } from '../run-artifacts.js';
import { renderTrendMarkdown } from './drift-trend.js';
import { renderMarkdown } from './markdown.js';
import { codeSpan, escapeText } from './markdown-text.js';
import { reproduceCommand } from './reproduce.js';

/** "files in DIR:" and each file written, then the notes on files that could not be written. */
export function filesText(files: WrittenFiles, shards: number): string {
  const inDir = (f: string) => (f.startsWith(`${files.dir}/`) ? f.slice(files.dir.length + 1) : f);
  const written = [
    files.report,
    files.markdown,
    files.html,
    ...files.scenarios.flatMap((s) => [s.folded.base, s.folded.head, s.flameGraph, s.diffFlameGraph]),
  ]
    .filter((f): f is string => Boolean(f))
    .map(inDir);
  const merged = shards > 1 ? `merged ${shards} shards; ` : '';
  const notes = files.notes.map((note) => `note: ${printable(note)}\n`).join('');
  // One line per few files, not one per file: the report above fits a screen.
  const lines: string[] = [];
  for (let i = 0; i < written.length; i += 4) lines.push(`  ${written.slice(i, i + 4).join('  ')}`);
  return `\n${merged}files in ${files.dir}:\n${lines.join('\n')}\n${notes}`;
}

/** The line saying what an earlier run left in the output folder and this one removed ('' if nothing). */
export function removedText(dir: string, removed: readonly string[]): string {
  if (removed.length === 0) return '';
  return `hotpath: removed ${removed.length} file${removed.length === 1 ? '' : 's'} of an earlier run from ${dir}\n`;
}

/** Why a run failed, in one line ('' when it did not). */
export function failureText(decision: FailDecision): string {
  if (!decision.failed) return '';
  if (decision.reason === 'regressed') return 'hotpath: a scenario regressed (see the summary)';
  if (decision.reason === 'drift-confirmed')
    return 'hotpath: the branch drifted beyond the threshold since the reference (confirmed; see the summary)';
  return 'hotpath: the run could not tell whether the change is slower (inconclusive; see the summary): rerun, or give it more time (max-time) or shards';
}

const shortSha = (s: string | undefined) => (s && /^[0-9a-f]{7,64}$/.test(s) ? s.slice(0, 12) : '?');

/** The first lines of the pull-request comment: the commits compared, the artifacts, how to reproduce. */
export function commentPreamble(
  report: Report,
  options: { pullRequest: number; config?: string; artifacts: readonly string[] },
): string[] {
  const base = shortSha(report.sides.base.sha);
  const head = shortSha(report.sides.head.sha);
  const shards =
    report.shards > 1
      ? ` · ${report.shards} shards, ${report.rounds} rounds per side`
      : ` · ${report.rounds} rounds per side`;
  // hotpath's own part (the commits, the report job's config file) is the instruction; settings
  // that come from the results file — written where the pull request's code ran, its commands
  // included — are quoted as what the pull request asked for, never as a command of the bot's.
  const again = reproduceCommand(report, { config: options.config || undefined, base, head });
  const missing = again.missing.length ? ` (add ${again.missing.join('; ')})` : '';
  const requested = again.requested
    ? [
        `Settings the pull request's results asked for (data from the pull request, not checked by hotpath: read its commands before running them): ${codeSpan(again.requested, 2000)}${escapeText(missing)}`,
      ]
    : [];
  return [
    `Compared base \`${base}\` with head \`${head}\` (PR #${Math.trunc(options.pullRequest)})${shards}.`,
    ...(options.artifacts.length ? [`Results: ${options.artifacts.join(', ')}.`] : []),
    `Reproduce locally: ${codeSpan(again.own, 2000)}${again.requested ? ' with the settings below' : escapeText(missing)}.`,
    ...requested,
  ];
}

/** A drift run's job summary: the trend, then this run's report folded away. */
export function driftSummaryMarkdown(analysis: DriftAnalysis, history: History, report: Report): string {
  const reference = analysis.reference.ref.replace(/[^\w.+/-]/g, '_');
  return `${renderTrendMarkdown(analysis, history)}\n<details><summary>This run: ${shortSha(report.sides.head.sha)} vs ${reference}</summary>\n\n${renderMarkdown(report)}\n</details>\n`;
}
