import {
  formatChange,
  formatInterval,
  formatValue,
  functionLabel,
  points,
  STATUS_TEXT,
  share,
  shortLocation,
} from './format.js';
import type { Report } from './report.js';

const codes = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;

function pad(text: string, width: number, right = false): string {
  const n = [...text].length;
  if (n >= width) return text;
  return right ? ' '.repeat(width - n) + text : text + ' '.repeat(width - n);
}

/** The report for a terminal: plain text, coloured when `color` is set. Pure. */
export function renderTerminal(report: Report, options: { color?: boolean } = {}): string {
  const paint = (code: keyof typeof codes, text: string) =>
    options.color ? `\u001b[${codes[code]}m${text}\u001b[0m` : text;
  const lines: string[] = [];
  const head = report.regressed ? paint('red', '✗') : report.improved ? paint('green', '✓') : '•';
  lines.push(`${head} ${paint('bold', report.summary)}`, '');
  const widths = [14, 12, 12, 10, 20];
  lines.push(
    paint(
      'dim',
      [
        pad('metric', widths[0]),
        pad('base', widths[1], true),
        pad('head', widths[2], true),
        pad('change', widths[3], true),
        pad('  95 % CI', widths[4]),
        'verdict',
      ].join(' '),
    ),
  );
  for (const m of report.metrics) {
    const status = STATUS_TEXT[m.status];
    const coloured =
      m.status === 'regressed'
        ? paint('red', status)
        : m.status === 'improved'
          ? paint('green', status)
          : status;
    lines.push(
      [
        pad(m.label, widths[0]),
        pad(formatValue(m, m.base), widths[1], true),
        pad(formatValue(m, m.head), widths[2], true),
        pad(formatChange(m, m.change), widths[3], true),
        pad(`  ${formatInterval(m, m.ci)}`, widths[4]),
        coloured,
      ].join(' '),
    );
  }
  lines.push('');
  const hot = report.hotFunctions;
  if (hot && hot.rows.length > 0) {
    lines.push(paint('bold', 'hot functions (self time, base → head)'));
    for (const f of hot.rows) {
      const mark = f.flagged ? paint('red', f.reason === 'new-in-top-10' ? 'new' : '  ▲') : '   ';
      const at = f.file ? f : f.caller;
      const where = at ? shortLocation(at.file, at.line) : '';
      lines.push(
        `  ${mark} ${pad(`${share(f.baseShare)} → ${share(f.headShare)}`, 18, true)} ${pad(points(f.delta), 11, true)}  ${functionLabel(f)}${where ? paint('dim', `  ${where}`) : ''}`,
      );
    }
    lines.push('');
  } else {
    lines.push(paint('dim', 'no hot-function diff (a side has no CPU profile)'), '');
  }
  for (const f of report.diagnosis.findings) {
    lines.push(`${paint('yellow', '!')} ${f.side}${f.newInHead ? ' (new in head)' : ''}: ${f.message}`);
  }
  const env = report.environment;
  lines.push(
    paint(
      'dim',
      `profiler: base ${env.profilers.base.join(', ') || 'none'}, head ${env.profilers.head.join(', ') || 'none'} · ${report.settings.rounds} rounds × ${report.settings.duration} s per side, ${report.settings.connections} connections`,
    ),
  );
  for (const w of report.warnings) lines.push(paint('yellow', `warning: ${w}`));
  return `${lines.join('\n')}\n`;
}
