import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
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
import type { HotFunction } from './hot-functions.js';
import type { Report, SourceLinks } from './report.js';

/** Hidden marker that identifies hotpath's sticky comment. */
export const COMMENT_MARKER = '<!-- hotpath-report -->';

function escapeCell(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/`/g, "'");
}

/** Link to head's source line when the function's file lies inside head's checkout. */
export function sourceLink(fn: Pick<HotFunction, 'file' | 'line'>, links?: SourceLinks): string | undefined {
  if (!links || !fn.file) return undefined;
  let path: string;
  try {
    path = fn.file.startsWith('file://') ? fileURLToPath(fn.file) : fn.file;
  } catch {
    return undefined;
  }
  if (!path.startsWith('/')) return undefined;
  const rel = relative(links.root, path);
  if (rel.startsWith('..') || rel.split(sep).includes('node_modules')) return undefined;
  const anchor = fn.line > 0 ? `#L${fn.line}` : '';
  return `${links.repositoryUrl}/blob/${links.sha}/${rel.split(sep).map(encodeURIComponent).join('/')}${anchor}`;
}

function verdictIcon(report: Report): string {
  if (report.regressed) return '🔴';
  if (report.improved) return '🟢';
  return '⚪';
}

function metricsTable(report: Report): string[] {
  const lines = ['| Metric | Base | Head | Change | 95 % CI | Verdict |', '|---|---:|---:|---:|---|---|'];
  for (const m of report.metrics) {
    const status = m.status === 'regressed' ? '**regressed**' : STATUS_TEXT[m.status];
    lines.push(
      `| ${m.label} | ${formatValue(m, m.base)} | ${formatValue(m, m.head)} | ${formatChange(m, m.change)} | ${formatInterval(m, m.ci)} | ${status} |`,
    );
  }
  return lines;
}

function hotTable(report: Report): string[] {
  const hot = report.hotFunctions;
  if (!hot) return ['_No CPU profile on both sides, so no hot-function diff._'];
  if (hot.rows.length === 0) return ['_The profiles show no function with self time._'];
  const lines = [
    `Self-time share per function (${hot.baseTotal} base / ${hot.headTotal} head samples, merged over rounds; flagged when it grows by ≥ ${(report.settings.hotThreshold * 100).toFixed(0)} points or is new in the top 10).`,
    '',
    '| | Function | Where | Self base → head | Δ |',
    '|---|---|---|---:|---:|',
  ];
  for (const f of hot.rows) {
    const at = f.file ? f : f.caller;
    const where = at ? shortLocation(at.file, at.line) : '';
    const link = at ? sourceLink(at, report.links) : undefined;
    const whereCell = where
      ? link
        ? `[${escapeCell(where)}](${link})`
        : `\`${escapeCell(where)}\``
      : f.kind;
    const mark = f.flagged ? (f.reason === 'new-in-top-10' ? '🆕' : '🔥') : '';
    const label = functionLabel(f);
    const name = f.flagged ? `**${escapeCell(label)}**` : escapeCell(label);
    lines.push(
      `| ${mark} | ${name} | ${whereCell} | ${share(f.baseShare)} → ${share(f.headShare)} | ${points(f.delta)} |`,
    );
  }
  const hidden = hot.flagged.filter((f) => !hot.rows.includes(f));
  for (const f of hidden)
    lines.push(
      `| 🔥 | **${escapeCell(functionLabel(f))}** | | ${share(f.baseShare)} → ${share(f.headShare)} | ${points(f.delta)} |`,
    );
  return lines;
}

function diagnosisLines(report: Report): string[] {
  const { diagnosis } = report;
  if (!diagnosis.base && !diagnosis.head) return ['_No event-loop data (the probe did not attach)._'];
  const lines: string[] = [];
  if (diagnosis.findings.length === 0)
    lines.push('No blocked event loop, saturation or memory growth on either side.');
  for (const f of diagnosis.findings) {
    lines.push(`- **${f.side}**${f.newInHead ? ' (new in head)' : ''}: ${f.message}`);
  }
  const row = (label: string, pick: (h: NonNullable<typeof diagnosis.base>) => string) =>
    `| ${label} | ${diagnosis.base ? pick(diagnosis.base) : '—'} | ${diagnosis.head ? pick(diagnosis.head) : '—'} |`;
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
  lines.push(
    '',
    '| Event loop / memory | Base | Head |',
    '|---|---:|---:|',
    row('Delay mean', (h) => `${h.delayMean.toFixed(1)} ms`),
    row('Delay p99 (worst second)', (h) => `${h.delayP99.toFixed(1)} ms`),
    row('Utilisation', (h) => `${(h.utilization * 100).toFixed(0)} %`),
    row('Heap start → end', (h) => `${mb(h.heapStart)} → ${mb(h.heapEnd)}`),
    row('RSS at end', (h) => mb(h.rssEnd)),
  );
  return lines;
}

function chart(report: Report): string[] {
  const base = report.rounds.filter((r) => r.side === 'base').map((r) => r.requestsPerSecond);
  const head = report.rounds.filter((r) => r.side === 'head').map((r) => r.requestsPerSecond);
  if (base.length < 2) return [];
  const max = Math.max(...base, ...head);
  const labels = base.map((_, i) => `"round ${i + 1}"`).join(', ');
  return [
    '```mermaid',
    'xychart-beta',
    '  title "Requests/s per round (first line: base, second: head)"',
    `  x-axis [${labels}]`,
    `  y-axis "req/s" 0 --> ${Math.ceil(max * 1.1)}`,
    `  line [${base.map((v) => v.toFixed(1)).join(', ')}]`,
    `  line [${head.map((v) => v.toFixed(1)).join(', ')}]`,
    '```',
  ];
}

function roundsTable(report: Report): string[] {
  const lines = [
    '| # | Side | Requests | Req/s | p50 | p90 | p99 | Errors | Profiler |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  report.rounds.forEach((r, i) => {
    lines.push(
      `| ${i + 1} | ${r.side} ${r.round} | ${r.requests} | ${r.requestsPerSecond.toFixed(1)} | ${r.p50.toFixed(2)} | ${r.p90.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.errors + r.non2xx} | ${r.profilers.join(', ') || '—'} |`,
    );
  });
  return lines;
}

function settingsLines(report: Report): string[] {
  const s = report.settings;
  const side = (label: string, info: Report['sides']['base']) =>
    `- **${label}**: \`${escapeCell(info.command)}\`${info.ref ? ` at ${escapeCell(info.ref)}` : ''}${info.sha ? ` (${info.sha.slice(0, 12)})` : ''}`;
  const env = report.environment;
  return [
    side('base', report.sides.base),
    side('head', report.sides.head),
    `- **load**: \`${escapeCell(s.method)} ${escapeCell(s.url)}\`, ${s.connections} connections, pipelining ${s.pipelining}${s.rate ? `, ${s.rate} req/s fixed rate` : ''}; ${s.warmup} s warm-up + ${s.duration} s measured per round, ${s.rounds} rounds per side interleaved (${report.order.map((o) => (o === 'base' ? 'B' : 'H')).join(' ')})`,
    `- **verdict rules**: a metric regresses when its 95 % interval excludes 0 and the change exceeds ${(s.threshold * 100).toFixed(0)} %; functions flagged at ≥ ${(s.hotThreshold * 100).toFixed(0)} points of self time`,
    `- **profiler**: ${s.profiler} — ran: base ${env.profilers.base.join(', ') || 'none'}, head ${env.profilers.head.join(', ') || 'none'}`,
    `- **environment**: ${env.serverNode ? `server Node ${env.serverNode}, ` : ''}runner Node ${env.node}, ${env.platform}, ${env.cpus} CPUs (${escapeCell(env.cpuModel)})`,
  ];
}

/** The whole report as one markdown document (PR comment and job summary). Pure. */
export function renderMarkdown(
  report: Report,
  options: { marker?: boolean; filesNote?: string } = {},
): string {
  const out: string[] = [];
  if (options.marker) out.push(COMMENT_MARKER);
  out.push(`### ${verdictIcon(report)} hotpath: ${escapeCell(report.summary)}`, '');
  out.push(...metricsTable(report), '');
  out.push('#### Hot functions (base → head)', '', ...hotTable(report), '');
  out.push('#### Event loop', '', ...diagnosisLines(report), '');
  const chartLines = chart(report);
  out.push(
    '<details><summary>Rounds</summary>',
    '',
    ...chartLines,
    chartLines.length ? '' : '',
    ...roundsTable(report),
    '',
    '</details>',
    '',
  );
  out.push(
    '<details><summary>Settings and environment</summary>',
    '',
    ...settingsLines(report),
    '',
    '</details>',
  );
  if (report.warnings.length > 0) {
    out.push(
      '',
      '<details><summary>Warnings</summary>',
      '',
      ...report.warnings.map((w) => `- ${escapeCell(w)}`),
      '',
      '</details>',
    );
  }
  if (options.filesNote) out.push('', options.filesNote);
  return `${out.join('\n')}\n`;
}
