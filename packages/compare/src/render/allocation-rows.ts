// The two allocation tables under a scenario's memory block (markdown, terminal, report.html): the
// functions whose bytes allocated per request changed most, base → head, with the paired interval;
// then the functions whose bytes still alive after a load (per request of it) changed most.
// Shown only: the verdict's allocated and retained bytes per request are the metrics in the table
// above. Names and files come from the pull request: each rendering escapes them its own way.
import type { AllocationDiff, AllocationRow, ScenarioReport, SourceLinks } from '../model.js';
import { formatBytes, shortLocation } from './format.js';
import { codeSpan, sourceLink } from './markdown-text.js';

const signed = (bytes: number) => `${bytes < 0 ? '−' : bytes > 0 ? '+' : '±'}${formatBytes(bytes)}`;

/** Which table: bytes allocated in the measured window, or still alive after a load (survivorsPass). */
export type AllocationTable = 'allocations' | 'survivors';

/** The tables in the order they are shown. */
export const ALLOCATION_TABLES: readonly AllocationTable[] = ['allocations', 'survivors'];

/** Each table's heading (report.html, terminal) and column titles. */
export const ALLOCATION_WORDS: Record<
  AllocationTable,
  { heading: string; terminal: string; function: string; bytes: string }
> = {
  allocations: {
    heading: 'Allocating functions',
    terminal: 'allocating functions (bytes per request, base → head; shown only)',
    function: 'Allocating function',
    bytes: 'Bytes per request base → head',
  },
  survivors: {
    heading: 'Still alive after a load, by allocation site',
    terminal:
      'still alive after a load, by allocation site (bytes per request of it, base → head; shown only)',
    function: 'Allocation site',
    bytes: 'Alive per request base → head',
  },
};

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
export function allocationCaption(diff: AllocationDiff, table: AllocationTable = 'allocations'): string {
  const all = `${formatBytes(diff.baseTotal)} → ${formatBytes(diff.headTotal)}`;
  const rounds = `${diff.rounds.base} base / ${diff.rounds.head} head rounds`;
  if (table === 'survivors')
    return `Still alive after a load, by allocation site: bytes per request that a load as long as the warm-up, after each server's first measured window, allocated and a full collection at its end did not free, by the function that allocated them (V8's sampling heap profiler over that load, ${rounds}; all functions ${all}) — a leak shows here at the function that makes what is kept, as does a cache filled once; the interval is over ${diff.pairs} round pairs. Shown only, not in the verdict.`;
  return `Bytes allocated per request by function (V8's sampling heap profiler over the measured windows, ${rounds}, scaled to each round's allocated bytes per request; all functions ${all}); the interval is over ${diff.pairs} round pairs. Shown only, not in the verdict.`;
}

/** Where a row's function is, as the tables show it (empty when the profile gives no file). */
export const allocationWhere = (row: AllocationRow): string => shortLocation(row.file, row.line);

/** The markdown lines of one table (none without its profiles on both sides). */
function tableMarkdown(
  diff: AllocationDiff | undefined,
  table: AllocationTable,
  links?: SourceLinks,
): string[] {
  if (!diff || diff.rows.length === 0) return [];
  const words = ALLOCATION_WORDS[table];
  const lines = [
    allocationCaption(diff, table),
    '',
    `| | ${words.function} | Where | ${words.bytes} | Change | Interval |`,
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

/** The markdown lines of both tables (each left out without its profiles on both sides). */
export function allocationMarkdown(
  s: Pick<ScenarioReport, 'allocations' | 'survivors'>,
  links?: SourceLinks,
): string[] {
  return ALLOCATION_TABLES.flatMap((table) => tableMarkdown(s[table], table, links));
}
