// The report for a terminal: one screen at the defaults (the verdict, the metrics that decide or
// could not decide, the hot functions and allocation rows that changed most, where the rest is),
// within the terminal's width; `verbose` adds every row and the method's details. Explanations of
// method live in the README and in report.html, not in table headers.
import type { MetricVerdict, Outcome, Report, ScenarioReport } from '../model.js';
import {
  ALLOCATION_TABLES,
  ALLOCATION_WORDS,
  type AllocationTable,
  allocationCells,
  allocationWhere,
} from './allocation-rows.js';
import {
  DOWNSTREAM_WORDS,
  endpointCells,
  endpointName,
  functionCells,
  inSeriesText,
  offPathText,
  waitingWhere,
} from './downstream-rows.js';
import {
  costText,
  displayName,
  formatChange,
  formatDetectable,
  formatInterval,
  formatValue,
  outcomeText,
  points,
  share,
  shortLocation,
} from './format.js';
import { memoryRows } from './memory-rows.js';
import { metricLabel } from './metric-labels.js';
import { cut, length, pad, plain, wrap } from './terminal-text.js';
import {
  interleaveText,
  loadLevelText,
  placementText,
  roundsWords,
  runSummary,
  scenarioSummary,
} from './words.js';

const codes = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;
type Paint = (code: keyof typeof codes, text: string) => string;

/** How the terminal report is drawn. */
export interface TerminalOptions {
  /** ANSI colours. */
  color?: boolean;
  /** Columns to fit (a terminal's width; 120 when not given). Tables drop columns, text wraps. */
  width?: number;
  /** Every metric, function and allocation row, and the method's details. */
  verbose?: boolean;
}

/** Rows of the hot-function and allocation tables at the defaults (all with verbose). */
const TOP_ROWS = 5;
const TOP_ALLOCATION_ROWS = 3;

/** The report for a terminal: plain text, coloured when `color` is set. Pure. */
export function renderTerminal(report: Report, options: TerminalOptions = {}): string {
  const width = Math.max(60, Math.min(options.width ?? 120, 200));
  const verbose = options.verbose === true;
  const paint: Paint = (code, text) => (options.color ? `\u001b[${codes[code]}m${text}\u001b[0m` : text);
  const mark = (x: { outcome: Outcome }) =>
    x.outcome === 'regressed'
      ? paint('red', '✗')
      : x.outcome === 'inconclusive'
        ? paint('yellow', '?')
        : x.outcome === 'improved'
          ? paint('green', '✓')
          : '✓';
  const lines: string[] = [];
  const [first, ...rest] = wrap(plain(runSummary(report)), width - 2, '  ');
  lines.push(
    `${mark(report)} ${paint('bold', first ?? '')}`,
    ...rest.map((l) => paint('bold', `  ${l}`)),
    '',
  );
  const many = report.scenarios.length > 1;
  if (many) {
    // as wide as the longest name (within 8–26 columns): the rest of the line is the hotter functions'
    const longest = Math.max(...report.scenarios.map((s) => length(plain(s.name))));
    const nameWidth = Math.max(8, Math.min(26, longest, width - 40));
    lines.push(
      paint(
        'dim',
        `  ${pad('scenario', nameWidth)} ${pad('req/s', 10, true)} ${pad('p99', 10, true)}  hotter`,
      ),
    );
    for (const s of report.scenarios) {
      const change = (name: string) => {
        const m = s.metrics.find((x) => x.metric === name);
        return m ? formatChange(m, m.change) : '—';
      };
      const hot = (s.hotFunctions?.flagged ?? []).slice(0, 2).map((f) => plain(displayName(f)));
      const row = `${mark(s)} ${pad(cut(plain(s.name), nameWidth), nameWidth)} ${pad(change('requestsPerSecond'), 10, true)} ${pad(change('p99'), 10, true)}  `;
      lines.push(row + cut(hot.join(', ') || '—', Math.max(8, width - length(row))));
    }
    lines.push('');
  }
  const context: Context = { width, verbose, paint, threshold: report.settings.threshold };
  for (const s of report.scenarios) lines.push(...scenarioLines(s, many, context));
  lines.push(...footer(report, context));
  return `${lines.join('\n')}\n`;
}

interface Context {
  width: number;
  verbose: boolean;
  paint: Paint;
  threshold: number;
}

/** The lines under the scenarios: how the run was made, briefly (in full with verbose), and warnings. */
function footer(report: Report, { width, verbose, paint }: Context): string[] {
  const env = report.environment;
  const many = report.scenarios.length > 1;
  const dim = (text: string) => wrap(text, width, '  ').map((l) => paint('dim', l));
  const lines: string[] = [];
  const machines = env.machines
    .map((m) => `${m.name ? `${plain(m.name)}: ` : ''}Node ${plain(m.node)}, ${m.cpus} CPUs`)
    .join('; ');
  const rounds = `${report.rounds} rounds × ${report.settings.duration} s per side (${roundsWords(report)})`;
  if (verbose) {
    lines.push(
      ...dim(
        `profiler: base ${plain(env.profilers.base.join(', ')) || 'none'}, head ${plain(env.profilers.head.join(', ')) || 'none'} · ${rounds}${report.shards > 1 ? ` from ${report.shards} shards` : ''} · paired intervals, simultaneous 95 % over ${report.statistics.tests} tests`,
      ),
    );
    for (const m of env.machines)
      lines.push(
        ...dim(
          `measured on ${m.name ? `${plain(m.name)}: ` : ''}Node ${plain(m.node)}, ${plain(m.platform)}, ${m.cpus} CPUs (${plain(m.cpuModel)})`,
        ),
      );
    const load = report.settings.scenarios
      .map(
        (x) =>
          `${many ? `${plain(x.name)}: ` : ''}${plain(loadLevelText(x, env.loadLevels, env.rateLevels))}`,
      )
      .join('; ');
    lines.push(
      ...dim(
        `load: ${load} · ${interleaveText(report.settings.slice, report.order)} · CPU placement: ${plain(placementText(env.placement))}`,
      ),
    );
  } else {
    const connections = [...new Set(report.settings.scenarios.map((x) => String(x.connections)))].join('/');
    const http2 = report.settings.scenarios.some((x) => x.grpc)
      ? ' gRPC'
      : report.settings.scenarios.some((x) => x.http2)
        ? ' HTTP/2'
        : '';
    lines.push(
      ...dim(
        `${rounds} · ${connections}${http2} connections${report.shards > 1 ? ` · ${report.shards} shards` : ''} · ${machines}`,
      ),
      ...dim('every row, the method and the flame graphs: report.html; every row here: --verbose'),
    );
  }
  for (const w of report.warnings)
    lines.push(...wrap(`warning: ${plain(w)}`, width, '  ').map((l) => paint('yellow', l)));
  return lines;
}

/** A metric's outcome in a word or two (the table's column; verbose gives the full words). */
function outcomeWord(m: MetricVerdict): string {
  if (m.outcome === 'not-worse') return 'not worse';
  if (m.outcome !== 'inconclusive') return m.outcome;
  return m.reason === 'spoiled'
    ? 'inconclusive (load)'
    : m.reason === 'too-few-pairs'
      ? 'inconclusive (pairs)'
      : 'inconclusive';
}

function scenarioLines(s: ScenarioReport, many: boolean, context: Context): string[] {
  const { width, verbose, paint, threshold } = context;
  const lines: string[] = [];
  if (many)
    lines.push(
      ...wrap(
        `── ${plain(s.name)} (${plain(s.target)}): ${plain(scenarioSummary(s, threshold))}`,
        width,
        '   ',
      ).map((l) => paint('bold', l)),
    );
  lines.push(...metricLines(s, context), '');
  lines.push(...hotLines(s, context));
  for (const f of s.diagnosis.findings) {
    const [head, ...more] = wrap(
      `${f.side}${f.newInHead ? ' (new in head)' : ''}: ${plain(f.message)}`,
      width - 2,
      '  ',
    );
    lines.push(`${paint('yellow', '!')} ${head ?? ''}`, ...more.map((l) => `  ${l}`));
  }
  if (s.diagnosis.findings.length) lines.push('');
  const memory = verbose ? memoryRows(s.diagnosis) : [];
  if (memory.length > 0) {
    const label = Math.max(20, Math.min(50, width - 42));
    lines.push(paint('dim', `  ${pad('memory', label)} ${pad('base', 18, true)} ${pad('head', 18, true)}`));
    for (const [name, b, h] of memory)
      lines.push(`  ${pad(cut(name, label), label)} ${pad(b, 18, true)} ${pad(h, 18, true)}`);
    lines.push('');
  }
  return [
    ...lines,
    ...waitingLines(s, context),
    ...ALLOCATION_TABLES.flatMap((table) => allocationLines(s, table, context)),
  ];
}

/**
 * What the requests waited for: the endpoints whose calls per request changed, the functions that
 * made them, and "awaited in series" when head overlaps its calls less than base. None without a
 * downstream record on both sides.
 */
function waitingLines(s: ScenarioReport, { width, verbose, paint }: Context): string[] {
  const diff = s.downstream;
  if (!diff || (diff.endpoints.length === 0 && diff.functions.length === 0)) return [];
  const lines: string[] = [];
  const series = inSeriesText(diff, (f) => `${plain(f.name)} ${plain(waitingWhere(f))}`.trim());
  if (series) {
    const [first, ...more] = wrap(series, width - 2, '  ');
    lines.push(`${paint('yellow', '!')} ${first ?? ''}`, ...more.map((l) => `  ${l}`), '');
  }
  const offPath = offPathText(diff);
  if (offPath) lines.push(...wrap(`${offPath}.`, width - 2, '  ').map((l) => `  ${l}`), '');
  const top = verbose ? Number.POSITIVE_INFINITY : TOP_ALLOCATION_ROWS;
  if (diff.endpoints.length > 0) {
    lines.push(...wrap(DOWNSTREAM_WORDS.endpoints, width, '  ').map((l) => paint('bold', l)));
    const wide = verbose || width >= 110;
    for (const row of diff.endpoints.slice(0, top)) {
      const c = endpointCells(row);
      const extra = wide
        ? `  ${pad(c.perCall, 22, true)} per call  ${pad(c.connections, 12, true)} conn`
        : '';
      const prefix = `  ${pad(c.mark, 4)} ${pad(c.calls, 14, true)} ${pad(c.change, 7, true)}${extra}  `;
      lines.push(prefix + cut(plain(endpointName(row)), Math.max(10, width - length(prefix))));
    }
    if (diff.endpoints.length > top)
      lines.push(paint('dim', `  … ${diff.endpoints.length - top} more: --verbose`));
    lines.push('');
  }
  if (diff.functions.length > 0) {
    lines.push(...wrap(DOWNSTREAM_WORDS.functions, width, '  ').map((l) => paint('bold', l)));
    for (const row of diff.functions.slice(0, top)) {
      const c = functionCells(row);
      const interval = verbose || width >= 110 ? `  ${pad(c.interval, 24)}` : '';
      const prefix = `  ${pad(c.mark, 4)} ${pad(c.calls, 14, true)} calls ${pad(c.waiting, 20, true)} ${pad(c.change, 10, true)}${interval}  `;
      const room = Math.max(10, width - length(prefix));
      const name = cut(plain(row.name), room);
      const where = [plain(waitingWhere(row)), c.background].filter(Boolean).join(' · ');
      const place = where && length(name) + 2 + length(where) <= room ? `  ${where}` : '';
      lines.push(`${prefix}${name}${place ? paint('dim', place) : ''}`);
    }
    if (diff.functions.length > top)
      lines.push(paint('dim', `  … ${diff.functions.length - top} more: --verbose`));
    lines.push('');
  }
  return lines;
}

/**
 * The metrics table: at the defaults the verdict's metrics and any shown-only one that moved
 * (regressed or improved); every one with verbose. Columns are dropped from the right of the
 * least needed (detectable, then the interval, then base and head) until the table fits.
 */
function metricLines(s: ScenarioReport, { width, verbose, paint, threshold }: Context): string[] {
  const shown = verbose
    ? s.metrics
    : s.metrics.filter(
        (m) =>
          (m.inVerdict && !(m.base === 0 && m.head === 0)) ||
          m.outcome === 'regressed' ||
          m.outcome === 'improved',
      );
  const hidden = s.metrics.length - shown.length;
  const outcome = (m: MetricVerdict) => {
    const words = verbose ? outcomeText(m, threshold) : outcomeWord(m);
    return m.inVerdict ? words : `${words} (shown only)`;
  };
  const columns = [
    { title: 'metric', cell: (m: MetricVerdict) => metricLabel(m.metric), right: false, drop: 9 },
    { title: 'base', cell: (m: MetricVerdict) => formatValue(m, m.base), right: true, drop: 3 },
    { title: 'head', cell: (m: MetricVerdict) => formatValue(m, m.head), right: true, drop: 3 },
    { title: 'change', cell: (m: MetricVerdict) => formatChange(m, m.change), right: true, drop: 9 },
    { title: 'interval', cell: (m: MetricVerdict) => formatInterval(m, m.ci), right: false, drop: 2 },
    {
      title: 'detectable',
      cell: (m: MetricVerdict) => formatDetectable(m),
      right: true,
      drop: verbose ? 1 : 0,
    },
    { title: 'outcome', cell: outcome, right: false, drop: 9 },
  ].filter((c) => c.drop > 0);
  const measure = (list: typeof columns) =>
    list.map((c) => Math.max(length(c.title), ...shown.map((m) => length(c.cell(m)))));
  let used = columns;
  // the outcome column may wrap onto its own width; the others must fit
  const fits = (list: typeof columns) => {
    const widths = measure(list);
    return widths.reduce((sum, w) => sum + w + 2, 0) - 2 <= width;
  };
  for (const level of [1, 2, 3]) if (!fits(used)) used = used.filter((c) => c.drop > level);
  const widths = measure(used);
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => pad(cell, widths[i] ?? 0, used[i]?.right))
      .join('  ')
      .trimEnd();
  const lines = [paint('dim', line(used.map((c) => c.title)))];
  for (const m of shown) {
    const text = line(used.map((c) => c.cell(m)));
    const coloured =
      m.outcome === 'regressed'
        ? paint('red', text)
        : m.outcome === 'improved'
          ? paint('green', text)
          : m.outcome === 'inconclusive'
            ? paint('yellow', text)
            : text;
    lines.push(coloured);
  }
  const excluded = Math.max(0, ...s.metrics.map((m) => m.excluded));
  const notes: string[] = [];
  if (excluded > 0)
    notes.push(
      `${excluded} of ${s.pairs} pairs left out of the wall-clock metrics (other processes loaded one round of the pair)`,
    );
  if (hidden > 0)
    notes.push(`${hidden} more metrics that did not move (shown only, or 0 on both sides): --verbose`);
  for (const note of notes) lines.push(...wrap(note, width, '  ').map((l) => paint('dim', l)));
  return lines;
}

/** The hot functions: flagged first, then by change; the top rows at the defaults. */
function hotLines(s: ScenarioReport, { width, verbose, paint }: Context): string[] {
  const hot = s.hotFunctions;
  if (!hot || hot.rows.length === 0)
    return [paint('dim', 'no hot-function diff (a side has no CPU profile)'), ''];
  const rows = verbose
    ? hot.rows
    : [...hot.rows].sort((a, b) => Number(b.flagged) - Number(a.flagged)).slice(0, TOP_ROWS);
  const lines = [paint('bold', 'hot functions (self time base → head, change, event-loop µs per request)')];
  for (const f of rows) {
    const flag = f.flagged ? paint('red', f.reason === 'new-in-top-10' ? 'new' : '  ▲') : '   ';
    const at = f.file ? f : f.caller;
    const where = at ? plain(shortLocation(at.file, at.line)) : '';
    const numbers = `${pad(`${share(f.baseShare)} → ${share(f.headShare)}`, 17, true)} ${pad(points(f.delta), 10, true)} ${pad(costText(f), 18, true)}`;
    // the flag is 3 columns wide, painted or not: two spaces, it, a space, the numbers, two spaces
    const room = Math.max(10, width - (2 + 3 + 1 + length(numbers) + 2));
    const name = cut(plain(displayName(f)), room);
    const place = where && length(name) + 2 + length(where) <= room ? `  ${where}` : '';
    lines.push(`  ${flag} ${numbers}  ${name}${place ? paint('dim', place) : ''}`);
  }
  if (rows.length < hot.rows.length)
    lines.push(paint('dim', `  … ${hot.rows.length - rows.length} more: report.html, --verbose`));
  return [...lines, ''];
}

/**
 * The functions whose bytes allocated per request (or still alive after a load) changed most;
 * none without the table's profiles. Shown only: the verdict's memory metrics are in the table above.
 */
function allocationLines(
  s: ScenarioReport,
  table: AllocationTable,
  { width, verbose, paint }: Context,
): string[] {
  const diff = s[table];
  if (!diff || diff.rows.length === 0) return [];
  const rows = verbose ? diff.rows : diff.rows.slice(0, TOP_ALLOCATION_ROWS);
  const lines = wrap(ALLOCATION_WORDS[table].terminal, width, '  ').map((l) => paint('bold', l));
  for (const row of rows) {
    const cells = allocationCells(row);
    const where = plain(allocationWhere(row));
    const interval = verbose || width >= 110 ? `  ${pad(cells.interval, 26)}` : '';
    const prefix = `  ${pad(cells.mark, 4)} ${pad(cells.bytes, 22, true)} ${pad(cells.change, 10, true)}${interval}  `;
    const room = Math.max(10, width - length(prefix));
    const name = cut(plain(row.name), room);
    const place = where && length(name) + 2 + length(where) <= room ? `  ${where}` : '';
    lines.push(`${prefix}${name}${place ? paint('dim', place) : ''}`);
  }
  if (rows.length < diff.rows.length)
    lines.push(paint('dim', `  … ${diff.rows.length - rows.length} more: report.html, --verbose`));
  return [...lines, ''];
}
