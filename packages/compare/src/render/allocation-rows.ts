// The allocation table under a scenario's memory block (markdown, terminal, report.html): the
// functions whose bytes allocated per request changed most, base → head, with the paired interval.
// Shown only: the verdict's allocated bytes per request is the metric in the table above. Names
// and files come from the pull request: each rendering escapes them its own way.
import type { AllocationDiff, AllocationRow, ScenarioReport, SourceLinks } from '../model.js';
import { formatBytes, shortLocation } from './format.js';
import { codeSpan, sourceLink } from './markdown-text.js';

const signed = (bytes: number) => `${bytes < 0 ? '−' : bytes > 0 ? '+' : '±'}${formatBytes(bytes)}`;

/** The numbers of one row as text (hotpath's own, no escaping needed): base → head, change, interval. */
export interface AllocationCells {
  mark: '' | 'new' | 'gone';
  bytes: string;
  change: string;
  interval: string;
}

export function allocationCells(row: AllocationRow): AllocationCells {
  return {
    mark: row.status === 'new' ? 'new' : row.status === 'vanished' ? 'gone' : '',
    bytes: `${formatBytes(row.base)} → ${formatBytes(row.head)}`,
    change: signed(row.change),
    interval: row.ci ? `[${signed(row.ci[0])}, ${signed(row.ci[1])}]` : 'too few pairs',
  };
}

/** The sentence over the table: what the bytes are, over how many rounds, that it is shown only. */
export function allocationCaption(diff: AllocationDiff): string {
  return `Bytes allocated per request by function (V8's sampling heap profiler over the measured windows, ${diff.rounds.base} base / ${diff.rounds.head} head rounds, scaled to each round's allocated bytes per request; all functions ${formatBytes(diff.baseTotal)} → ${formatBytes(diff.headTotal)}); the interval is over ${diff.pairs} round pairs. Shown only, not in the verdict.`;
}

/** Where a row's function is, as the tables show it (empty when the profile gives no file). */
export const allocationWhere = (row: AllocationRow): string => shortLocation(row.file, row.line);

/** The markdown lines of the table (none without allocation profiles on both sides). */
export function allocationMarkdown(s: Pick<ScenarioReport, 'allocations'>, links?: SourceLinks): string[] {
  const diff = s.allocations;
  if (!diff || diff.rows.length === 0) return [];
  const lines = [
    allocationCaption(diff),
    '',
    '| | Allocating function | Where | Bytes per request base → head | Change | Interval |',
    '|---|---|---|---:|---:|---|',
  ];
  for (const row of diff.rows) {
    const cells = allocationCells(row);
    const where = allocationWhere(row);
    const link = where ? sourceLink(row, links) : undefined;
    const whereCell = where ? (link ? `[${codeSpan(where)}](${link})` : codeSpan(where)) : '';
    const mark = cells.mark === 'new' ? '🆕' : '';
    lines.push(
      `| ${mark} | ${codeSpan(row.name)} | ${whereCell} | ${cells.bytes} | ${cells.change} | ${cells.interval} |`,
    );
  }
  return [...lines, ''];
}
