import type { Outcome, Report, ScenarioReport } from '../model.js';
import { inert } from '../printable.js';
import {
  ALLOCATION_TABLES,
  ALLOCATION_WORDS,
  type AllocationTable,
  allocationCaption,
  allocationCells,
  allocationWhere,
} from './allocation-rows.js';
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
import {
  interleaveText,
  loadLevelText,
  placementText,
  roundsWords,
  runSummary,
  scenarioSummary,
} from './words.js';

const codes = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;

function pad(text: string, width: number, right = false): string {
  const n = [...text].length;
  if (n >= width) return text;
  return right ? ' '.repeat(width - n) + text : text + ' '.repeat(width - n);
}

/**
 * Text from the pull request without control characters or bidi controls (no escape sequence
 * reaches the terminal, nothing reorders a line): see printable.ts.
 */
const plain = inert;

/** The report for a terminal: plain text, coloured when `color` is set. Pure. */
export function renderTerminal(report: Report, options: { color?: boolean } = {}): string {
  const paint = (code: keyof typeof codes, text: string) =>
    options.color ? `\u001b[${codes[code]}m${text}\u001b[0m` : text;
  const mark = (x: { outcome: Outcome }) =>
    x.outcome === 'regressed'
      ? paint('red', '✗')
      : x.outcome === 'inconclusive'
        ? paint('yellow', '?')
        : x.outcome === 'improved'
          ? paint('green', '✓')
          : '✓';
  const lines: string[] = [];
  lines.push(`${mark(report)} ${paint('bold', plain(runSummary(report)))}`, '');
  const many = report.scenarios.length > 1;
  if (many) {
    lines.push(
      paint('dim', `${pad('scenario', 28)} ${pad('req/s', 10, true)} ${pad('p99', 10, true)}  hotter`),
    );
    for (const s of report.scenarios) {
      const change = (name: string) => {
        const m = s.metrics.find((x) => x.metric === name);
        return m ? formatChange(m, m.change) : '—';
      };
      const hot = (s.hotFunctions?.flagged ?? []).slice(0, 2).map((f) => plain(displayName(f)));
      lines.push(
        `${mark(s)} ${pad(plain(s.name).slice(0, 26), 26)} ${pad(change('requestsPerSecond'), 10, true)} ${pad(change('p99'), 10, true)}  ${hot.join(', ') || '—'}`,
      );
    }
    lines.push('');
  }
  for (const s of report.scenarios) lines.push(...scenarioLines(s, many, paint, report.settings.threshold));
  const env = report.environment;
  lines.push(
    paint(
      'dim',
      `profiler: base ${plain(env.profilers.base.join(', ')) || 'none'}, head ${plain(env.profilers.head.join(', ')) || 'none'} · ${report.rounds} rounds × ${report.settings.duration} s per side and scenario${report.shards > 1 ? ` from ${report.shards} shards` : ''} (${roundsWords(report)}) · paired intervals, simultaneous 95 % over ${report.statistics.tests} tests`,
    ),
  );
  for (const m of env.machines)
    lines.push(
      paint(
        'dim',
        `measured on ${m.name ? `${plain(m.name)}: ` : ''}Node ${plain(m.node)}, ${plain(m.platform)}, ${m.cpus} CPUs (${plain(m.cpuModel)})`,
      ),
    );
  const load = report.settings.scenarios
    .map(
      (x) => `${many ? `${plain(x.name)}: ` : ''}${plain(loadLevelText(x, env.loadLevels, env.rateLevels))}`,
    )
    .join('; ');
  lines.push(
    paint(
      'dim',
      `load: ${load} · ${plain(interleaveText(report.settings.slice, report.order))} · CPU placement: ${plain(placementText(env.placement))}`,
    ),
  );
  for (const w of report.warnings) lines.push(paint('yellow', `warning: ${plain(w)}`));
  return `${lines.join('\n')}\n`;
}

function scenarioLines(
  s: ScenarioReport,
  many: boolean,
  paint: (code: keyof typeof codes, text: string) => string,
  threshold: number,
): string[] {
  const lines: string[] = [];
  if (many)
    lines.push(
      paint('bold', `── ${plain(s.name)} (${plain(s.target)}): ${plain(scenarioSummary(s, threshold))}`),
    );
  // Each column as wide as its longest cell (at least the usual width), so a long interval
  // or value never pushes the columns after it out of line.
  const rows = s.metrics.map((m) => [
    metricLabel(m.metric),
    formatValue(m, m.base),
    formatValue(m, m.head),
    formatChange(m, m.change),
    `  ${formatInterval(m, m.ci)}`,
    formatDetectable(m),
  ]);
  const header = ['metric', 'base', 'head', 'change', '  interval', 'detectable'];
  const widths = [26, 11, 11, 9, 20, 11].map((least, i) =>
    Math.max(least, ...[header, ...rows].map((cells) => [...(cells[i] ?? '')].length + (i === 4 ? 1 : 0))),
  );
  const right = [false, true, true, true, false, true];
  const line = (cells: string[]) => cells.map((cell, i) => pad(cell, widths[i] ?? 0, right[i])).join(' ');
  lines.push(paint('dim', `${line(header)}  outcome`));
  s.metrics.forEach((m, i) => {
    const words = outcomeText(m, threshold);
    const status = m.inVerdict ? words : `${words} (shown only)`;
    const coloured =
      m.outcome === 'regressed'
        ? paint('red', status)
        : m.outcome === 'improved'
          ? paint('green', status)
          : m.outcome === 'inconclusive'
            ? paint('yellow', status)
            : status;
    lines.push(`${line(rows[i] ?? [])}  ${coloured}`);
  });
  const excluded = Math.max(0, ...s.metrics.map((m) => m.excluded));
  if (excluded > 0)
    lines.push(
      paint(
        'dim',
        `${excluded} of ${s.pairs} pairs saw very different load from other processes in their two rounds: left out of the wall-clock metrics`,
      ),
    );
  lines.push('');
  const hot = s.hotFunctions;
  if (hot && hot.rows.length > 0) {
    lines.push(paint('bold', 'hot functions (self time, base → head; event-loop µs per request)'));
    for (const f of hot.rows) {
      const flag = f.flagged ? paint('red', f.reason === 'new-in-top-10' ? 'new' : '  ▲') : '   ';
      const at = f.file ? f : f.caller;
      const where = at ? plain(shortLocation(at.file, at.line)) : '';
      lines.push(
        `  ${flag} ${pad(`${share(f.baseShare)} → ${share(f.headShare)}`, 18, true)} ${pad(points(f.delta), 11, true)} ${pad(costText(f), 18, true)}  ${plain(displayName(f))}${where ? paint('dim', `  ${where}`) : ''}`,
      );
    }
    lines.push('');
  } else {
    lines.push(paint('dim', 'no hot-function diff (a side has no CPU profile)'), '');
  }
  for (const f of s.diagnosis.findings) {
    lines.push(
      `${paint('yellow', '!')} ${f.side}${f.newInHead ? ' (new in head)' : ''}: ${plain(f.message)}`,
    );
  }
  if (s.diagnosis.findings.length) lines.push('');
  const memory = memoryRows(s.diagnosis);
  if (memory.length > 0) {
    lines.push(paint('dim', `  ${'memory'.padEnd(50)} ${'base'.padStart(18)} ${'head'.padStart(18)}`));
    for (const [label, b, h] of memory)
      lines.push(`  ${label.padEnd(50)} ${b.padStart(18)} ${h.padStart(18)}`);
    lines.push('');
  }
  return [...lines, ...ALLOCATION_TABLES.flatMap((table) => allocationLines(s, table, paint))];
}

/**
 * The functions whose bytes allocated per request (or still alive after a load) changed most;
 * none without the table's profiles.
 */
function allocationLines(
  s: ScenarioReport,
  table: AllocationTable,
  paint: (code: keyof typeof codes, text: string) => string,
): string[] {
  const diff = s[table];
  if (!diff || diff.rows.length === 0) return [];
  const lines = [paint('bold', ALLOCATION_WORDS[table].terminal)];
  lines.push(paint('dim', `  ${allocationCaption(diff, table)}`));
  for (const row of diff.rows) {
    const cells = allocationCells(row);
    const where = plain(allocationWhere(row));
    lines.push(
      `  ${pad(cells.mark, 4)} ${pad(cells.bytes, 24, true)} ${pad(cells.change, 12, true)}  ${pad(cells.interval, 26)}  ${plain(row.name)}${where ? paint('dim', `  ${where}`) : ''}`,
    );
  }
  return [...lines, ''];
}
