// The waiting block of a scenario (terminal, markdown, report.html): what the requests waited for —
// downstream calls per request by endpoint, the functions of the user's code that made them, and
// whether head awaits in series what base awaited together. The verdict's metrics (calls and
// waiting per request over every endpoint) are in the metrics table; these rows are shown only.
// Endpoints, names and files come from the pull request's server: each rendering escapes them.

import type {
  DownstreamDiff,
  DownstreamEndpointRow,
  Report,
  ScenarioReport,
  WaitingFunctionRow,
} from '../model.js';
import { ON_PATH_MIN } from '../settings/metrics.js';
import { formatBytes, shortLocation } from './format.js';
import { codeSpan, details, sourceLink } from './markdown-text.js';

const signed = (x: number, digits = 2) => `${x < 0 ? '−' : x > 0 ? '+' : '±'}${Math.abs(x).toFixed(digits)}`;
const calls = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));

/** µs as people read them: `850 µs`, `3.2 ms`, `1.25 s`. */
export function formatMicros(micros: number): string {
  const x = Math.abs(micros);
  if (x < 1000) return `${x >= 100 ? x.toFixed(0) : x.toFixed(1)} µs`;
  if (x < 1_000_000) return `${(x / 1000).toFixed(x >= 100_000 ? 0 : x >= 10_000 ? 1 : 2)} ms`;
  return `${(x / 1_000_000).toFixed(2)} s`;
}

const signedMicros = (x: number) => `${x < 0 ? '−' : x > 0 ? '+' : '±'}${formatMicros(x)}`;

/** The numbers of an endpoint row as text (hotpath's own, no escaping needed). */
export function endpointCells(row: DownstreamEndpointRow) {
  return {
    mark: row.status === 'new' ? 'new' : row.status === 'vanished' ? 'gone' : '',
    calls: `${calls(row.base.calls)} → ${calls(row.head.calls)}`,
    change: signed(row.callsChange),
    interval: row.callsCi ? `[${signed(row.callsCi[0])}, ${signed(row.callsCi[1])}]` : 'too few pairs',
    perCall: `${formatMicros(row.base.waitingPerCall)} → ${formatMicros(row.head.waitingPerCall)}`,
    connections: `${calls(row.base.connections)} → ${calls(row.head.connections)}`,
    bytes: `${formatBytes(row.base.bytes)} → ${formatBytes(row.head.bytes)}`,
  };
}

/** Said of a function whose calls were made outside requests (a timer's job, a consumer). */
export const BACKGROUND_WORDS = 'background: outside requests';

/** The numbers of a function row as text. */
export function functionCells(row: WaitingFunctionRow) {
  return {
    mark: row.status === 'new' ? 'new' : row.status === 'vanished' ? 'gone' : '',
    background: row.background ? BACKGROUND_WORDS : '',
    calls: `${calls(row.base.calls)} → ${calls(row.head.calls)}`,
    waiting: `${formatMicros(row.base.waiting)} → ${formatMicros(row.head.waiting)}`,
    change: signedMicros(row.change),
    interval: row.ci ? `[${signedMicros(row.ci[0])}, ${signedMicros(row.ci[1])}]` : 'too few pairs',
  };
}

/** Where a function is, as the tables show it. */
export const waitingWhere = (row: { file: string; line: number }): string =>
  shortLocation(row.file, row.line);

/** An endpoint with its protocol: `127.0.0.1:5432 (postgres)`. */
export const endpointName = (row: Pick<DownstreamEndpointRow, 'endpoint' | 'protocol'>): string =>
  row.protocol ? `${row.endpoint} (${row.protocol})` : row.endpoint;

/**
 * The sentence when head awaits in series what base awaited together (`name` already escaped
 * or stripped by the caller), or undefined.
 */
export function inSeriesText(
  diff: DownstreamDiff,
  name: (fn: { name: string; file: string; line: number }) => string,
): string | undefined {
  const { inSeries, seriality } = diff;
  if (!inSeries || seriality.base === undefined || seriality.head === undefined) return undefined;
  return `head awaits its downstream calls in series: a request's calls overlap less than in base (time with a call in flight over the calls' summed time ${seriality.base.toFixed(2)} → ${seriality.head.toFixed(2)}; 1 is one after another), in ${name(inSeries)}`;
}

/**
 * The sentence when under half of a side's calls were made in a request's async context, so that
 * waiting per request is not measured; undefined otherwise.
 */
export function offPathText(diff: DownstreamDiff): string | undefined {
  const { onPath } = diff;
  if (!onPath || (onPath.base >= ON_PATH_MIN && onPath.head >= ON_PATH_MIN)) return undefined;
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  return `waiting per request is not measured: ${pct(onPath.base)} of base's and ${pct(onPath.head)} of head's calls were made in an incoming request's async context (a promise library or pool that runs them outside it, such as bluebird under knex before 0.95, or calls on timers); calls per request and waiting per call count every call`;
}

/** Headings (terminal, report.html) and column titles. */
export const DOWNSTREAM_WORDS = {
  endpoints: 'downstream calls per request by endpoint (base → head; shown only)',
  functions: 'waiting per request by the function that made the calls (base → head; shown only)',
  heading: 'Waiting: downstream calls',
} as const;

/** The waiting block: in series, the top endpoints and functions open, the rest folded. */
export function waitingMarkdown(report: Report, s: ScenarioReport, h: string): string[] {
  const diff = s.downstream;
  if (!diff || (diff.endpoints.length === 0 && diff.functions.length === 0)) return [];
  const out = [`${h} ${DOWNSTREAM_WORDS.heading} (per request, base → head)`, ''];
  const series = inSeriesText(diff, (f) => {
    const where = waitingWhere(f);
    return `${codeSpan(f.name, 120)}${where ? ` (${codeSpan(where)})` : ''}`;
  });
  if (series) out.push(`⚠️ ${series}`, '');
  const offPath = offPathText(diff);
  if (offPath) out.push(`ℹ️ ${offPath[0]?.toUpperCase()}${offPath.slice(1)}.`, '');
  const endpointRows = (rows: readonly DownstreamEndpointRow[]) => [
    '| | Endpoint | Calls base → head | Change | Interval | Waiting per call | New connections |',
    '|---|---|---:|---:|---|---:|---:|',
    ...rows.map((row) => {
      const c = endpointCells(row);
      return `| ${c.mark === 'new' ? '🆕' : ''} | ${codeSpan(endpointName(row), 200)} | ${c.calls} | ${c.change} | ${c.interval} | ${c.perCall} | ${c.connections} |`;
    }),
  ];
  const functionRows = (rows: readonly WaitingFunctionRow[]) => [
    '| | Function | Where | Calls base → head | Waiting base → head | Change | Interval |',
    '|---|---|---|---:|---:|---:|---|',
    ...rows.map((row) => {
      const c = functionCells(row);
      const where = waitingWhere(row);
      const link = where ? sourceLink(row, report.links) : undefined;
      const whereCell = where ? (link ? `[${codeSpan(where)}](${link})` : codeSpan(where)) : '';
      const name = `${codeSpan(row.name)}${c.background ? ` (${c.background})` : ''}`;
      return `| ${c.mark === 'new' ? '🆕' : ''} | ${name} | ${whereCell} | ${c.calls} | ${c.waiting} | ${c.change} | ${c.interval} |`;
    }),
  ];
  const OPEN = 3;
  if (diff.endpoints.length > 0) out.push(...endpointRows(diff.endpoints.slice(0, OPEN)), '');
  if (diff.functions.length > 0) out.push(...functionRows(diff.functions.slice(0, OPEN)), '');
  const rest = [
    ...(diff.endpoints.length > OPEN ? [...endpointRows(diff.endpoints.slice(OPEN)), ''] : []),
    ...(diff.functions.length > OPEN ? functionRows(diff.functions.slice(OPEN)) : []),
  ];
  out.push(...details('More endpoints and functions', rest));
  return out;
}
