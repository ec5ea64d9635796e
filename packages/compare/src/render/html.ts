import type {
  AllocationRow,
  HotFunction,
  MetricVerdict,
  Outcome,
  Report,
  RoundRow,
  ScenarioReport,
} from '../model.js';
import {
  ALLOCATION_TABLES,
  ALLOCATION_WORDS,
  type AllocationTable,
  allocationCaption,
  allocationCells,
  allocationWhere,
} from './allocation-rows.js';
import { type FlameData, flameData, MIN_FRAME_SHARE } from './flame-data.js';
import {
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
import { CAPACITY_STYLE, capacityChart } from './html-capacity.js';
import { flameSection } from './html-flames.js';
import { type Column, cspHash, escapeHtml, scriptJson, table } from './html-text.js';
import { waitingSection } from './html-waiting.js';
import { sourceLink } from './markdown-text.js';
import { memoryRows, noFindingsText } from './memory-rows.js';
import { metricLabel } from './metric-labels.js';
import { interleaveText, loadLevelText, runSummary, scenarioSummary } from './words.js';

export { escapeHtml, scriptJson };

const e = escapeHtml;

/** The metrics of a scenario: what changed, by how much, how sure, and the verdict. */
const METRIC_COLUMNS: readonly Column<MetricVerdict>[] = [
  { title: 'Metric', cell: (m) => e(metricLabel(m.metric)) },
  { title: 'Base', numeric: true, cell: (m) => e(formatValue(m, m.base)) },
  { title: 'Head', numeric: true, cell: (m) => e(formatValue(m, m.head)) },
  { title: 'Change', numeric: true, cell: (m) => e(formatChange(m, m.change)) },
  { title: 'Interval', numeric: true, cell: (m) => e(formatInterval(m, m.ci)) },
  { title: 'Detectable', numeric: true, cell: (m) => e(formatDetectable(m)) },
];

/** The outcome column needs the threshold the words name. */
const outcomeColumn = (threshold: number): Column<MetricVerdict> => ({
  title: 'Outcome',
  cell: (m) =>
    `${e(outcomeText(m, threshold))}${m.inVerdict ? '' : ' <span class="dim">(shown only)</span>'}`,
});

function hotColumns(report: Report): Column<HotFunction>[] {
  return [
    {
      title: '',
      cell: (f) => (f.flagged ? (f.reason === 'new-in-top-10' ? 'new' : 'hotter') : ''),
    },
    { title: 'Function', cell: (f) => `<code>${e(displayName(f))}</code>` },
    {
      title: 'Where',
      cell: (f) => {
        const at = f.file ? f : f.caller;
        const where = at ? shortLocation(at.file, at.line) : '';
        if (!at || !where) return `<span class="dim">${e(f.kind)}</span>`;
        const link = sourceLink(at, report.links);
        return link
          ? `<a href="${e(link)}" rel="noopener noreferrer"><code>${e(where)}</code></a>`
          : `<code>${e(where)}</code>`;
      },
    },
    { title: 'Self base', numeric: true, cell: (f) => e(share(f.baseShare)) },
    { title: 'Self head', numeric: true, cell: (f) => e(share(f.headShare)) },
    { title: 'Δ', numeric: true, cell: (f) => e(points(f.delta)) },
  ];
}

const ROUND_COLUMNS: readonly Column<RoundRow>[] = [
  { title: 'Side', cell: (r) => e(`${r.side} ${r.round}${r.shard > 1 ? ` (shard ${r.shard})` : ''}`) },
  { title: 'Requests', numeric: true, cell: (r) => String(r.requests) },
  { title: 'Req/s', numeric: true, cell: (r) => r.requestsPerSecond.toFixed(1) },
  { title: 'p50 ms', numeric: true, cell: (r) => r.p50.toFixed(2) },
  { title: 'p99 ms', numeric: true, cell: (r) => r.p99.toFixed(2) },
  { title: 'Errors', numeric: true, cell: (r) => String(r.errors + r.non2xx) },
  { title: 'Profiler', cell: (r) => e(r.profilers.join(', ') || '—') },
];

/** A line chart of one per-round number, base and head, as inline SVG. */
function roundsChart(rounds: readonly RoundRow[], pick: (r: RoundRow) => number, title: string): string {
  const series = (['base', 'head'] as const).map((side) => ({
    side,
    values: rounds.filter((r) => r.side === side).map(pick),
  }));
  const all = series.flatMap((s) => s.values).filter(Number.isFinite);
  const n = Math.max(...series.map((s) => s.values.length));
  if (all.length === 0 || n === 0) return '';
  const [W, H, left, right, top, bottom] = [460, 200, 52, 12, 28, 30];
  // From zero, or below it where a value is (retained bytes can fall in a round).
  const low = Math.min(0, ...all);
  const span = (Math.max(0, ...all) - low) * 1.1 || 1;
  const x = (i: number) => left + (n === 1 ? (W - left - right) / 2 : (i * (W - left - right)) / (n - 1));
  const y = (v: number) => top + (1 - (v - low) / span) * (H - top - bottom);
  const out = [
    `<svg class="chart" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${e(title)}">`,
    `<text x="${left}" y="16" class="chart-title">${e(title)}</text>`,
  ];
  for (const f of [0, 0.5, 1]) {
    const v = low + span * f;
    out.push(
      `<line x1="${left}" x2="${W - right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" class="grid"/>`,
      `<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" class="tick">${e(Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1))}</text>`,
    );
  }
  for (let i = 0; i < n; i++)
    out.push(`<text x="${x(i).toFixed(1)}" y="${H - 10}" text-anchor="middle" class="tick">${i + 1}</text>`);
  for (const { side, values } of series) {
    const pts = values
      .map((v, i) => (Number.isFinite(v) ? `${x(i).toFixed(1)},${y(v).toFixed(1)}` : ''))
      .filter(Boolean);
    out.push(`<polyline points="${pts.join(' ')}" class="line ${side}"/>`);
    for (const p of pts) {
      const [cx, cy] = p.split(',');
      out.push(`<circle cx="${cx}" cy="${cy}" r="3.5" class="dot ${side}"/>`);
    }
  }
  out.push(
    `<text x="${W - right - 90}" y="16" class="legend base">● base</text>`,
    `<text x="${W - right - 40}" y="16" class="legend head">● head</text>`,
    `<text x="${(left + W - right) / 2}" y="${H}" text-anchor="middle" class="tick">round</text>`,
    '</svg>',
  );
  return out.join('');
}

/** ` · measured in slices of 0.5 s` (each distinct length), or '' for whole windows. */
function slicesText(rounds: readonly RoundRow[]): string {
  const lengths = [
    ...new Set(rounds.flatMap((r) => (r.sliceSeconds ? [Math.round(r.sliceSeconds * 1000) / 1000] : []))),
  ];
  return lengths.length ? ` · measured in slices of ${lengths.sort((a, b) => a - b).join(', ')} s` : '';
}

const verdictClass = (x: { outcome: Outcome }) =>
  x.outcome === 'unchanged' || x.outcome === 'not-worse' ? 'neutral' : x.outcome;

function diagnosisTable(s: ScenarioReport): string {
  const { base, head, findings } = s.diagnosis;
  if (!base && !head) return '<p class="dim">No event-loop data (the probe did not attach).</p>';
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
  type H = NonNullable<typeof base>;
  const picks: [string, (h: H) => string][] = [
    ['Delay mean', (h) => `${h.delayMean.toFixed(1)} ms`],
    ['Delay p99 (worst second)', (h) => `${h.delayP99.toFixed(1)} ms`],
    ['Utilisation', (h) => `${(h.utilization * 100).toFixed(0)} %`],
    ['Heap start → end', (h) => `${mb(h.heapStart)} → ${mb(h.heapEnd)}`],
    ['RSS at end', (h) => mb(h.rssEnd)],
  ];
  // Every row as text, base and head ('—' for a side without data), the memory block's included.
  const rows: [string, string, string][] = [
    ...picks.map(([label, pick]): [string, string, string] => [
      label,
      base ? pick(base) : '—',
      head ? pick(head) : '—',
    ]),
    ...memoryRows(s.diagnosis),
  ];
  const list = findings.length
    ? `<ul>${findings.map((f) => `<li><b>${e(f.side)}</b>${f.newInHead ? ' (new in head)' : ''}: ${e(f.message)}</li>`).join('')}</ul>`
    : `<p>${e(noFindingsText(s.diagnosis))}</p>`;
  return (
    list +
    table<[string, string, string]>(
      [
        { title: 'Event loop / memory', cell: ([label]) => e(label) },
        { title: 'Base', numeric: true, cell: ([, b]) => e(b) },
        { title: 'Head', numeric: true, cell: ([, , h]) => e(h) },
      ],
      rows,
    )
  );
}

/**
 * The functions whose bytes allocated per request (or still alive after a load) changed most,
 * under the memory block.
 */
function allocationTable(report: Report, s: ScenarioReport, kind: AllocationTable): string {
  const diff = s[kind];
  const words = ALLOCATION_WORDS[kind];
  if (!diff || diff.rows.length === 0) return '';
  const where = (row: AllocationRow) => {
    const text = allocationWhere(row);
    const link = text ? sourceLink(row, report.links) : undefined;
    if (!text) return '';
    return link
      ? `<a href="${e(link)}" rel="noopener noreferrer"><code>${e(text)}</code></a>`
      : `<code>${e(text)}</code>`;
  };
  const columns: Column<AllocationRow>[] = [
    { title: '', cell: (row) => e(allocationCells(row).mark) },
    { title: words.function, cell: (row) => `<code>${e(row.name)}</code>` },
    { title: 'Where', cell: where },
    { title: words.bytes, numeric: true, cell: (row) => e(allocationCells(row).bytes) },
    { title: 'Change', numeric: true, cell: (row) => e(allocationCells(row).change) },
    { title: 'Interval', numeric: true, cell: (row) => e(allocationCells(row).interval) },
  ];
  return `<h3>${e(words.heading)}</h3><p class="dim">${e(allocationCaption(diff, kind))}</p>${table(columns, diff.rows)}`;
}

/** Retained and allocated bytes per request per round; nothing where memory was off. */
function memoryCharts(rounds: readonly RoundRow[]): string {
  const charts =
    roundsChart(rounds, (r) => r.retainedBytesPerRequest, 'Retained bytes per request per round') +
    roundsChart(rounds, (r) => r.allocatedBytesPerRequest, 'Allocated bytes per request per round');
  return charts ? `<div class="charts">${charts}</div>` : '';
}

function scenarioSection(
  report: Report,
  s: ScenarioReport,
  index: number,
  flames: FlameData,
  allocationFlames: FlameData,
  waitingFlames: { data: FlameData; at: number },
): string {
  const hot = s.hotFunctions;
  const hotRows = hot ? [...hot.rows, ...hot.flagged.filter((f) => !hot.rows.includes(f))] : [];
  return [
    `<section class="scenario ${verdictClass(s)}" id="scenario-${index + 1}">`,
    `<h2><span class="badge ${verdictClass(s)}">${s.outcome === 'not-worse' ? 'no regression' : s.outcome}</span> <code>${e(s.name)}</code></h2>`,
    `<p class="summary">${e(scenarioSummary(s, report.settings.threshold))}</p>`,
    `<p class="dim">Load: <code>${e(s.target)}</code> · ${s.pairs} round pairs${e(slicesText(s.rounds))}</p>`,
    table([...METRIC_COLUMNS, outcomeColumn(report.settings.threshold)], s.metrics, (m) =>
      m.outcome === 'regressed' && m.inVerdict ? 'bad' : '',
    ),
    '<h3>Per round</h3>',
    `<div class="charts">${roundsChart(s.rounds, (r) => r.requestsPerSecond, 'Requests/s per round')}${roundsChart(s.rounds, (r) => r.p99, 'Latency p99 (ms) per round')}</div>`,
    capacityChart(s.rounds),
    memoryCharts(s.rounds),
    `<details><summary>Rounds in the order they ran</summary>${table(ROUND_COLUMNS, s.rounds)}</details>`,
    '<h3>Hot functions (self-time share, base → head)</h3>',
    hot
      ? hotRows.length
        ? `<p class="dim">${hot.baseTotal} base / ${hot.headTotal} head samples, merged over rounds; flagged when a share grows by ≥ ${report.settings.hotThreshold} points or is new in the top 10.</p>${table(hotColumns(report), hotRows, (f) => (f.flagged ? 'bad' : ''))}`
        : '<p class="dim">The profiles show no function with self time.</p>'
      : '<p class="dim">No CPU profile on both sides, so no hot-function diff.</p>',
    '<h3>Flame graphs</h3>',
    flameSection(index, flames),
    '<h3>Event loop and memory</h3>',
    diagnosisTable(s),
    ...ALLOCATION_TABLES.map((kind) => allocationTable(report, s, kind)),
    ...(allocationFlames.base || allocationFlames.head
      ? ['<h3>Allocation flame graphs</h3>', flameSection(report.scenarios.length + index, allocationFlames)]
      : []),
    waitingSection(report, s, waitingFlames),
    '</section>',
  ].join('\n');
}

function settingsSection(report: Report): string {
  const s = report.settings;
  const side = (label: string, info: Report['sides']['base']) =>
    `<li><b>${label}</b>: <code>${e(info.command)}</code>${info.ref ? ` at <code>${e(info.ref)}</code>` : ''}${info.sha ? ` (<code>${e(info.sha.slice(0, 12))}</code>)` : ''}</li>`;
  const env = report.environment;
  const items = [
    side('base', report.sides.base),
    side('head', report.sides.head),
    `<li><b>load</b>: ${s.warmup} s warm-up + ${s.duration} s measured per round and scenario, ${report.rounds} rounds per side${report.shards > 1 ? ` from ${report.shards} shards` : ''}, ${e(interleaveText(s.slice, report.order))}</li>`,
    ...s.scenarios.map(
      (x) =>
        `<li><b>${e(x.name)}</b>: <code>${e(`${x.method} ${x.url}`)}</code>, ${e(loadLevelText(x, env.loadLevels, env.rateLevels))}</li>`,
    ),
    `<li><b>statistics</b>: paired t intervals on per-pair log-ratios, simultaneous 95 % over ${report.statistics.tests} tests (Bonferroni); threshold ${s.threshold} %, hot threshold ${s.hotThreshold} points, fail on ${e(s.failOn)}</li>`,
    `<li><b>profiler</b>: ${e(s.profiler)} — ran: base ${e(env.profilers.base.join(', ') || 'none')}, head ${e(env.profilers.head.join(', ') || 'none')}</li>`,
    ...(env.serverNode ? [`<li><b>server</b>: Node ${e(env.serverNode)}</li>`] : []),
    ...env.machines.map(
      (m) =>
        `<li><b>measured on</b>: ${m.name ? `<code>${e(m.name)}</code>: ` : ''}Node ${e(m.node)}, ${e(m.platform)}, ${m.cpus} CPUs (${e(m.cpuModel)})</li>`,
    ),
  ];
  const warnings = report.warnings.length
    ? `<details><summary>Warnings (${report.warnings.length})</summary><ul>${report.warnings.map((w) => `<li>${e(w)}</li>`).join('')}</ul></details>`
    : '';
  return `<details class="settings"><summary>Settings and environment</summary><ul>${items.join('')}</ul></details>${warnings}`;
}

const STYLE = `
:root{color-scheme:light;--fg:#1f2328;--dim:#59636e;--line:#d1d9e0;--bad:#cf222e;--good:#1a7f37;--base:#0969da;--head:#bc4c00}
body{font:14px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;color:var(--fg);margin:0 auto;max-width:1240px;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 4px}h3{font-size:15px;margin:20px 0 6px}h4{font-size:14px;margin:14px 0 2px}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f6f8fa;padding:1px 4px;border-radius:4px;word-break:break-all}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid var(--line);padding:4px 10px;text-align:left;vertical-align:top}th{background:#f6f8fa}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}tr.bad td{color:var(--bad)}
.dim{color:var(--dim)}.summary{font-weight:600}p.bad{color:var(--bad)}
.badge{font-size:12px;border-radius:10px;padding:2px 8px;color:#fff;background:#6e7781;vertical-align:2px}
.badge.regressed{background:var(--bad)}.badge.improved{background:var(--good)}.badge.inconclusive{background:#b08800}
header .verdict.regressed{color:var(--bad)}header .verdict.improved{color:var(--good)}header .verdict.inconclusive{color:#b08800}
.charts{display:flex;flex-wrap:wrap;gap:16px}
.chart .grid{stroke:#eaeef2}.chart .tick{font-size:11px;fill:var(--dim)}.chart-title{font-size:12px;font-weight:600;fill:var(--fg)}
.chart .line{fill:none;stroke-width:2}.chart .line.base,.chart .dot.base{stroke:var(--base)}.chart .line.head,.chart .dot.head{stroke:var(--head)}
.chart .dot{fill:#fff;stroke-width:2}.chart .legend{font-size:12px}.chart .legend.base{fill:var(--base)}.chart .legend.head{fill:var(--head)}
.flame{width:100%;overflow-x:auto}.flame-details{min-height:1.5em;font:12px ui-monospace,monospace;color:var(--dim)}
.flame-tools input{width:320px;padding:3px 6px}
details{margin:8px 0}summary{cursor:pointer}
`;

/** report.html's script (d3-flame-graph and the viewer, bundled and minified) and style. */
export interface ViewerAssets {
  script: string;
  style: string;
}

/**
 * The run as one self-contained HTML page: the verdict, per scenario the metrics, per-round
 * charts, hot functions and interactive base / head / differential flame graphs (d3-flame-graph,
 * inlined with its style), settings. Works offline and from an artifact zip. Pure given the
 * viewer: every text from the report is HTML-escaped, the flame-graph data sits in a JSON block
 * with `<` escaped, and a Content-Security-Policy lets only this page's own script and style run.
 */
export function renderHtml(report: Report, viewer: ViewerAssets): string {
  const cpu = report.scenarios.map((s) => flameData(s.profiles));
  const allocations = report.scenarios.map((s) =>
    flameData(s.allocationProfiles ?? {}, MIN_FRAME_SHARE, 'bytes'),
  );
  const waiting = report.scenarios.map((s) => flameData(s.waitingProfiles ?? {}, MIN_FRAME_SHARE, 'micros'));
  // CPU at i, allocations at scenarios + i, waiting at 2 × scenarios + i
  const data = { schema: 'hotpath-report-html/1', flames: [...cpu, ...allocations, ...waiting] };
  const script = viewer.script.replace(/<\/(script)/gi, '<\\/$1');
  const style = `${viewer.style}\n${STYLE}\n${CAPACITY_STYLE}`;
  const csp = `default-src 'none'; script-src ${cspHash(script)}; style-src ${cspHash(style)}; img-src data:; base-uri 'none'; form-action 'none'`;
  const title = runSummary(report);
  const sides = report.sides;
  const rev = (info: Report['sides']['base']) =>
    `<code>${e(info.ref || info.sha ? `${info.ref ?? ''}${info.sha ? ` ${info.sha.slice(0, 12)}` : ''}`.trim() : info.command)}</code>`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${e(csp)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>hotpath: ${e(title)}</title>`,
    `<style>${style}</style>`,
    '</head>',
    '<body>',
    '<header>',
    `<h1>hotpath: <span class="verdict ${verdictClass(report)}">${e(title)}</span></h1>`,
    `<p class="dim">base ${rev(sides.base)} vs head ${rev(sides.head)} · ${report.rounds} rounds per side · ${e(report.startedAt)}</p>`,
    '</header>',
    ...report.scenarios.map((s, i) =>
      scenarioSection(
        report,
        s,
        i,
        cpu[i] ?? flameData({}),
        allocations[i] ?? flameData({}, MIN_FRAME_SHARE, 'bytes'),
        { data: waiting[i] ?? flameData({}, MIN_FRAME_SHARE, 'micros'), at: 2 * report.scenarios.length + i },
      ),
    ),
    settingsSection(report),
    `<script type="application/json" id="hotpath-data">${scriptJson(data)}</script>`,
    `<script>${script}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
