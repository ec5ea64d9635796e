// report.html's waiting block of a scenario: the sentence when head awaits in series what base
// awaited together, downstream calls per request by endpoint, the functions that made them, and
// the waiting flame graphs (base, head, differential). Endpoints, function names and files come
// from the pull request's server: every one is escaped here.
import type { DownstreamEndpointRow, Report, ScenarioReport, WaitingFunctionRow } from '../model.js';
import {
  DOWNSTREAM_WORDS,
  endpointCells,
  endpointName,
  functionCells,
  inSeriesText,
  offPathText,
  waitingWhere,
} from './downstream-rows.js';
import type { FlameData } from './flame-data.js';
import { flameSection } from './html-flames.js';
import { type Column, escapeHtml as e, table } from './html-text.js';
import { sourceLink } from './markdown-text.js';

const ENDPOINT_COLUMNS: readonly Column<DownstreamEndpointRow>[] = [
  { title: '', cell: (row) => e(endpointCells(row).mark) },
  { title: 'Endpoint', cell: (row) => `<code>${e(endpointName(row))}</code>` },
  { title: 'Calls base → head', numeric: true, cell: (row) => e(endpointCells(row).calls) },
  { title: 'Change', numeric: true, cell: (row) => e(endpointCells(row).change) },
  { title: 'Interval', numeric: true, cell: (row) => e(endpointCells(row).interval) },
  { title: 'Waiting per call', numeric: true, cell: (row) => e(endpointCells(row).perCall) },
  { title: 'New connections', numeric: true, cell: (row) => e(endpointCells(row).connections) },
  { title: 'Bytes', numeric: true, cell: (row) => e(endpointCells(row).bytes) },
];

function functionColumns(report: Report): Column<WaitingFunctionRow>[] {
  const where = (row: WaitingFunctionRow) => {
    const text = waitingWhere(row);
    if (!text) return '';
    const link = sourceLink(row, report.links);
    return link
      ? `<a href="${e(link)}" rel="noopener noreferrer"><code>${e(text)}</code></a>`
      : `<code>${e(text)}</code>`;
  };
  return [
    { title: '', cell: (row) => e(functionCells(row).mark) },
    {
      title: 'Function',
      cell: (row) => {
        const background = functionCells(row).background;
        return `<code>${e(row.name)}</code>${background ? ` <span class="dim">(${e(background)})</span>` : ''}`;
      },
    },
    { title: 'Where', cell: where },
    { title: 'Calls base → head', numeric: true, cell: (row) => e(functionCells(row).calls) },
    { title: 'Waiting base → head', numeric: true, cell: (row) => e(functionCells(row).waiting) },
    { title: 'Change', numeric: true, cell: (row) => e(functionCells(row).change) },
    { title: 'Interval', numeric: true, cell: (row) => e(functionCells(row).interval) },
  ];
}

/** The waiting block; empty when neither side recorded a downstream call. */
export function waitingSection(
  report: Report,
  s: ScenarioReport,
  flames: { data: FlameData; at: number },
): string {
  const diff = s.downstream;
  const hasRows = diff && (diff.endpoints.length > 0 || diff.functions.length > 0);
  if (!hasRows && !flames.data.base && !flames.data.head) return '';
  const parts = [`<h3>${e(DOWNSTREAM_WORDS.heading)} (per request, base → head)</h3>`];
  if (diff) {
    const series = inSeriesText(diff, (f) => {
      const where = waitingWhere(f);
      return `${f.name}${where ? ` (${where})` : ''}`;
    });
    if (series) parts.push(`<p class="bad">${e(series)}</p>`);
    const offPath = offPathText(diff);
    if (offPath) parts.push(`<p class="dim">${e(`${offPath}.`)}</p>`);
    if (diff.endpoints.length > 0)
      parts.push(
        `<p class="dim">${e(DOWNSTREAM_WORDS.endpoints)}</p>`,
        table(ENDPOINT_COLUMNS, diff.endpoints),
      );
    if (diff.functions.length > 0)
      parts.push(
        `<p class="dim">${e(DOWNSTREAM_WORDS.functions)}; calls are estimates (a stack, held to 0.3 % of the main thread, stands for the calls since the last)</p>`,
        table(functionColumns(report), diff.functions),
      );
  }
  parts.push('<h4>Waiting flame graphs</h4>', flameSection(flames.at, flames.data));
  return parts.join('\n');
}
