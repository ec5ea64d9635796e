// A bisect search as Markdown: the job summary and the comment on the drift issue that names the
// commit. Commit subjects, scenario names and the reason come from the repository (hostile):
// escaped as text or in code spans; the pull request is named as "PR #N" from the API's number.
import type { BisectSummary } from '../bisect/read.js';
import { changeText } from './bisect.js';
import { codeSpan, escapeText } from './markdown-text.js';

const short = (sha: string) => codeSpan(sha.slice(0, 12));

/** The hidden first line of hotpath's bisect comment on a drift issue (`key` separates several). */
export function bisectCommentMarker(key = ''): string {
  const safe = key.replace(/[^\w.-]/g, '_').slice(0, 100);
  return safe ? `<!-- hotpath-bisect:${safe} -->` : '<!-- hotpath-bisect -->';
}

const minutes = (s: number) => (s >= 90 ? `${Math.round(s / 60)} min` : `${Math.round(s)} s`);

/** What the search ended with, for the summary and the drift issue. */
export function renderBisectMarkdown(
  search: BisectSummary,
  options: { pull?: number; key?: string; marker?: boolean } = {},
): string {
  const searched = `${search.commits.length - 1} commits after ${short(search.range.from)} up to ${short(search.commits.at(-1)?.sha ?? search.range.to)}`;
  const lines = options.marker ? [bisectCommentMarker(options.key)] : [];
  const c = search.culprit;
  if (search.conclusion === 'culprit' && c) {
    const pull = options.pull !== undefined ? ` (PR #${options.pull})` : '';
    lines.push(
      `**hotpath bisect: the step is ${short(c.sha)}**${pull} ${escapeText(c.subject, 120)}`,
      '',
      `- its own comparison against its parent: ${escapeText(changeText(c.change), 300)}, ${c.pairs} pairs`,
    );
  } else if (search.conclusion === 'no-culprit') {
    lines.push('**hotpath bisect: no culprit**', '', `- ${escapeText(search.why, 600)}`);
  } else {
    lines.push(
      `**hotpath bisect: no single culprit**: the change is in ${search.range.commits.length} commit(s) after ${short(search.range.from)} up to ${short(search.range.to)}`,
      '',
      ...search.range.commits
        .slice(0, 20)
        .map(
          (sha) =>
            `- ${short(sha)} ${escapeText(search.commits.find((x) => x.sha === sha)?.subject ?? '', 120)}`,
        ),
      `- why: ${escapeText(search.why, 600)}`,
    );
  }
  lines.push(
    `- searched: ${searched}, ${search.comparisons} comparisons, ${search.pairs} pairs, ${minutes(search.seconds)} (threshold ${search.threshold} %)`,
    '',
  );
  return lines.join('\n');
}
