import type { HotFunction, Machine, MetricVerdict, Outcome, Report, ScenarioReport } from '../model.js';
import { RETAINED_WINDOW_NOISE } from '../settings/metrics.js';
import { allocationMarkdown } from './allocation-rows.js';
import { waitingMarkdown } from './downstream-rows.js';
import {
  costText,
  displayName,
  formatBytes,
  formatChange,
  formatDetectable,
  formatInterval,
  formatValue,
  outcomeText,
  points,
  share,
  shortLocation,
} from './format.js';
import {
  codeSpan,
  commentMarker,
  details,
  escapeText,
  MAX_COMMENT_LENGTH,
  sourceLink,
} from './markdown-text.js';
import { memoryRows, noFindingsText } from './memory-rows.js';
import { metricLabel } from './metric-labels.js';
import {
  interleaveText,
  loadLevelText,
  metricsSummary,
  OUTCOME_WORD,
  placementText,
  roundsWords,
  runSummary,
  scenarioSummary,
} from './words.js';

/**
 * The outcome's mark: red for a regression, yellow for "could not tell" (never green or grey:
 * it does not mean "fine"), green for an improvement, a check for no regression (unchanged, or
 * not worse).
 */
const OUTCOME_ICON: Record<Outcome, string> = {
  regressed: '🔴',
  inconclusive: '🟡',
  improved: '🟢',
  'not-worse': '✅',
  unchanged: '✅',
};

function verdictIcon(x: { outcome: Outcome }): string {
  return OUTCOME_ICON[x.outcome];
}

/** The verdict line of a scenario in markdown: hotpath's own words, PR names in code spans. */
function scenarioTitle(s: ScenarioReport, threshold: number): string {
  const hot = (s.hotFunctions?.flagged ?? []).slice(0, 3).map((f) => codeSpan(displayName(f), 80));
  const byMetrics = s.metrics.some((m) => m.inVerdict && m.outcome === 'regressed');
  if (s.regressed && !byMetrics) return `Regression: hotter functions: ${hot.join(', ')}`;
  const own = escapeText(metricsSummary(s, threshold));
  return hot.length ? `${own}; hotter: ${hot.join(', ')}` : own;
}

/** The title line of the document. */
function title(report: Report): string {
  const [only] = report.scenarios;
  if (only && report.scenarios.length === 1) return scenarioTitle(only, report.settings.threshold);
  const n = report.scenarios.length;
  if (report.outcome === 'unchanged' || report.outcome === 'not-worse') return escapeText(runSummary(report));
  const named = report.scenarios.filter((s) => s.outcome === report.outcome).map((s) => codeSpan(s.name, 60));
  return `${OUTCOME_WORD[report.outcome]} in ${named.length} of ${n} scenarios: ${named.join(', ')}`;
}

/** The rows open on top: the verdict's metrics and any shown-only one that moved. */
const openMetric = (m: MetricVerdict) =>
  (m.inVerdict && !(m.base === 0 && m.head === 0)) || m.outcome === 'regressed' || m.outcome === 'improved';

function metricsTable(
  scenario: ScenarioReport,
  threshold: number,
  rows = scenario.metrics.filter(openMetric),
): string[] {
  const lines = [
    '| Metric | Base | Head | Change | Interval | Detectable | Outcome |',
    '|---|---:|---:|---:|---|---:|---|',
  ];
  for (const m of rows) {
    const words = outcomeText(m, threshold);
    const text = m.outcome === 'regressed' && m.inVerdict ? `**${words}**` : words;
    const status = m.inVerdict ? text : `${text} (shown only)`;
    lines.push(
      `| ${metricLabel(m.metric)} | ${formatValue(m, m.base)} | ${formatValue(m, m.head)} | ${formatChange(m, m.change)} | ${formatInterval(m, m.ci)} | ${formatDetectable(m)} | ${status} |`,
    );
  }
  const excluded = Math.max(0, ...scenario.metrics.map((m) => m.excluded));
  if (excluded > 0)
    lines.push(
      '',
      `_${excluded} of ${scenario.pairs} round pairs saw very different load from other processes on the machine in their two rounds: left out of the wall-clock metrics (requests/s, latency, utilisation), kept for CPU time per request._`,
    );
  return lines;
}

/** Rows of the hot-function table open on top (flagged ones always). */
const OPEN_HOT_ROWS = 5;

function hotTable(report: Report, scenario: ScenarioReport, part: 'open' | 'rest' | 'all' = 'all'): string[] {
  const hot = scenario.hotFunctions;
  if (!hot) return part === 'rest' ? [] : ['_No CPU profile on both sides, so no hot-function diff._'];
  if (hot.rows.length === 0)
    return part === 'rest' ? [] : ['_The profiles show no function with self time._'];
  const all = [...hot.rows, ...hot.flagged.filter((f) => !hot.rows.includes(f))];
  const open = [...all.filter((f) => f.flagged), ...all.filter((f) => !f.flagged)].slice(
    0,
    Math.max(OPEN_HOT_ROWS, hot.flagged.length),
  );
  const rows = part === 'open' ? open : part === 'rest' ? all.filter((f) => !open.includes(f)) : all;
  if (rows.length === 0) return [];
  const lines = [
    ...(part === 'rest'
      ? []
      : [
          `Self-time share (${hot.baseTotal} base / ${hot.headTotal} head samples; 🔥 grew ≥ ${report.settings.hotThreshold} points, 🆕 new in the top 10) and event-loop CPU per request.`,
          '',
        ]),
    '| | Function | Where | Self base → head | Δ | µs/request base → head |',
    '|---|---|---|---:|---:|---:|',
  ];
  const row = (f: HotFunction) => {
    const at = f.file ? f : f.caller;
    const where = at ? shortLocation(at.file, at.line) : '';
    const link = at ? sourceLink(at, report.links) : undefined;
    const whereCell = where ? (link ? `[${codeSpan(where)}](${link})` : codeSpan(where)) : escapeText(f.kind);
    const mark = f.flagged ? (f.reason === 'new-in-top-10' ? '🆕' : '🔥') : '';
    const name = f.flagged ? `**${codeSpan(displayName(f))}**` : codeSpan(displayName(f));
    return `| ${mark} | ${name} | ${whereCell} | ${share(f.baseShare)} → ${share(f.headShare)} | ${points(f.delta)} | ${costText(f)} |`;
  };
  for (const f of rows) lines.push(row(f));
  return lines;
}

function findingLines(scenario: ScenarioReport): string[] {
  const { diagnosis } = scenario;
  if (!diagnosis.base && !diagnosis.head) return ['_No event-loop data (the probe did not attach)._'];
  if (diagnosis.findings.length === 0) return [noFindingsText(diagnosis)];
  return diagnosis.findings.map(
    (f) => `- **${f.side}**${f.newInHead ? ' (new in head)' : ''}: ${escapeText(f.message)}`,
  );
}

function healthTable(scenario: ScenarioReport): string[] {
  const { diagnosis } = scenario;
  if (!diagnosis.base && !diagnosis.head) return [];
  const lines: string[] = [];
  const row = (label: string, pick: (h: NonNullable<typeof diagnosis.base>) => string) =>
    `| ${label} | ${diagnosis.base ? pick(diagnosis.base) : '—'} | ${diagnosis.head ? pick(diagnosis.head) : '—'} |`;
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
  lines.push(
    '| Event loop / memory | Base | Head |',
    '|---|---:|---:|',
    row('Delay mean', (h) => `${h.delayMean.toFixed(1)} ms`),
    row('Delay p99 (worst second)', (h) => `${h.delayP99.toFixed(1)} ms`),
    row('Utilisation', (h) => `${(h.utilization * 100).toFixed(0)} %`),
    row('Heap start → end', (h) => `${mb(h.heapStart)} → ${mb(h.heapEnd)}`),
    row('RSS at end', (h) => mb(h.rssEnd)),
    ...memoryRows(diagnosis).map(([label, b, h]) => `| ${label} | ${b} | ${h} |`),
  );
  return lines;
}

function chart(scenario: ScenarioReport): string[] {
  const base = scenario.rounds.filter((r) => r.side === 'base').map((r) => r.requestsPerSecond);
  const head = scenario.rounds.filter((r) => r.side === 'head').map((r) => r.requestsPerSecond);
  if (base.length < 2 || ![...base, ...head].every(Number.isFinite)) return [];
  // A loop, not Math.max(...values): spreading tens of thousands of rounds overflows the stack.
  let max = 0;
  for (const v of [base, head].flat()) if (v > max) max = v;
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
    '',
  ];
}

function roundsTable(scenario: ScenarioReport): string[] {
  const lines = [
    '| # | Side | Requests | Req/s | p50 | p90 | p99 | Errors | Profiler |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  scenario.rounds.forEach((r, i) => {
    lines.push(
      `| ${i + 1} | ${r.side} ${r.round} | ${r.requests} | ${r.requestsPerSecond.toFixed(1)} | ${r.p50.toFixed(2)} | ${r.p90.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.errors + r.non2xx} | ${r.profilers.map((p) => escapeText(p)).join(', ') || '—'} |`,
    );
  });
  return lines;
}

/** The compact table on top: one row per scenario. */
function scenariosTable(report: Report): string[] {
  const lines = ['| | Scenario | Requests/s | Latency p99 | Hotter functions |', '|---|---|---:|---:|---|'];
  for (const s of report.scenarios) {
    const metric = (name: string) => s.metrics.find((m) => m.metric === name);
    const cell = (name: string) => {
      const m = metric(name);
      if (!m) return '—';
      const text = formatChange(m, m.change);
      return m.outcome === 'regressed' ? `**${text}**` : text;
    };
    const hot = (s.hotFunctions?.flagged ?? []).slice(0, 2).map((f) => codeSpan(displayName(f), 60));
    lines.push(
      `| ${verdictIcon(s)} | ${codeSpan(s.name, 80)} | ${cell('requestsPerSecond')} | ${cell('p99')} | ${hot.join(', ') || '—'} |`,
    );
  }
  return lines;
}

function settingsLines(report: Report): string[] {
  const s = report.settings;
  const side = (label: string, info: Report['sides']['base']) =>
    `- **${label}**: ${codeSpan(info.command)}${info.ref ? ` at ${codeSpan(info.ref, 100)}` : ''}${info.sha ? ` (${codeSpan(info.sha.slice(0, 12))})` : ''}`;
  const env = report.environment;
  const scenarios = s.scenarios.map(
    (x) =>
      `  - ${codeSpan(x.name, 80)}: ${codeSpan(`${x.method} ${x.url}`)}${x.requests ? ` (${x.requests} requests in turn)` : ''}, ${loadLevelText(x, env.loadLevels, env.rateLevels)}, pipelining ${x.pipelining}`,
  );
  return [
    side('base', report.sides.base),
    side('head', report.sides.head),
    `- **load**: ${s.warmup} s warm-up + ${s.duration} s measured per round and scenario, ${report.rounds} rounds per side, ${interleaveText(s.slice, report.order)}`,
    `- **rounds**: ${roundsWords(report)}`,
    ...scenarios,
    `- **statistics**: ${report.shards > 1 ? `${report.shards} shards merged, ` : ''}${report.rounds} rounds per side; each base round is paired with the head round after it and the intervals are paired t intervals on the per-pair log-ratios, simultaneous 95 % over ${report.statistics.tests} tests (each at ${((1 - report.statistics.alpha) * 100).toFixed(2)} %, Bonferroni)`,
    `- **verdict rules**: a scenario regresses when a metric of ${s.metrics.map((m) => codeSpan(m)).join(', ')} has an interval excluding 0 and a change beyond ${s.threshold} %${s.metrics.includes('retainedBytesPerRequest') ? ` (retained bytes per request: beyond ${s.retainedThreshold} bytes, or the window's own noise of ${formatBytes(RETAINED_WINDOW_NOISE)} over its requests when that is more)` : ''}, is not worse (no regression) when every such metric's worst case (its one-sided bound on the worse side at ${((1 - report.statistics.equivalenceAlpha) * 100).toFixed(2)} %: every metric must pass, so no correction for their number) stays within ${s.threshold} %, unchanged when its bound on the better side does too (two one-sided tests), and is inconclusive otherwise; the detectable change is the shift each interval would find with ${Math.round(report.statistics.power * 100)} % power given the pairs' spread${s.failOn === 'metrics' ? '' : `${s.failOn === 'both' ? ', or' : '; only'} when a function's self-time share grows by ≥ ${s.hotThreshold} points with an interval above 0`}; functions are flagged at ≥ ${s.hotThreshold} points; the run regresses when any scenario does`,
    `- **profiler**: ${s.profiler} — ran: base ${env.profilers.base.map((p) => escapeText(p)).join(', ') || 'none'}, head ${env.profilers.head.map((p) => escapeText(p)).join(', ') || 'none'}`,
    ...(env.serverNode ? [`- **server**: Node ${escapeText(env.serverNode, 60)}`] : []),
    `- **CPU placement**: ${placementText(env.placement)}`,
    ...machineLines(env.machines),
  ];
}

/** Where the rounds ran: one line per distinct machine (shards may run on several runners). */
function machineLines(machines: readonly Machine[]): string[] {
  const one = (m: Machine) =>
    `${m.name ? `${codeSpan(m.name, 100)}: ` : ''}Node ${escapeText(m.node, 40)}, ${escapeText(m.platform, 60)}, ${m.cpus} CPUs (${escapeText(m.cpuModel, 120)})`;
  const [only] = machines;
  if (only && machines.length === 1) return [`- **measured on**: ${one(only)}`];
  return [`- **measured on ${machines.length} machines**:`, ...machines.map((m) => `  - ${one(m)}`)];
}

function scenarioSection(report: Report, s: ScenarioReport, many: boolean): string[] {
  const out: string[] = [];
  if (many)
    out.push(
      `#### ${verdictIcon(s)} ${codeSpan(s.name, 80)} — ${escapeText(scenarioSummary(s, report.settings.threshold))}`,
      '',
      `Load: ${codeSpan(s.target)}`,
      '',
    );
  out.push(...metricsTable(s, report.settings.threshold), '');
  const hidden = s.metrics.filter((m) => !openMetric(m));
  if (hidden.length > 0)
    out.push(
      ...details(
        `${hidden.length} more metrics (shown only or 0 on both sides, not moved)`,
        metricsTable(s, report.settings.threshold, hidden),
      ),
    );
  const h = many ? '#####' : '####';
  out.push(`${h} Hot functions (base → head)`, '', ...hotTable(report, s, 'open'), '');
  out.push(...details('More functions', hotTable(report, s, 'rest')));
  out.push(...waitingMarkdown(report, s, h));
  out.push(`${h} Event loop`, '', ...findingLines(s), '');
  out.push(
    ...details('Event loop and memory, base and head; allocating functions', [
      ...healthTable(s),
      '',
      ...allocationMarkdown(s, report.links),
    ]),
  );
  out.push('<details><summary>Rounds</summary>', '', ...chart(s), ...roundsTable(s), '', '</details>', '');
  return out;
}

export interface MarkdownOptions {
  /** Start with the sticky-comment marker (of this key). */
  marker?: boolean;
  commentKey?: string;
  /** Lines placed under the title (e.g. which commits, reproduce command); already markdown. */
  preamble?: string[];
  /** A closing note (already markdown). */
  filesNote?: string;
  /**
   * The workflow artifact that holds report.html (charts, flame graphs): linked under the title.
   * Only an artifact URL of the form `https://host/owner/repo/actions/runs/N/artifacts/M` and a
   * name of letters, digits, `-`, `_` and `.` are used; anything else leaves the line out.
   */
  htmlArtifact?: { name: string; url: string };
  /** Cut the document to this many characters, saying what was cut (default GitHub's limit). */
  maxLength?: number;
}

/** The whole report as one markdown document (PR comment and job summary). Pure. */
export function renderMarkdown(report: Report, options: MarkdownOptions = {}): string {
  const head: string[] = [];
  if (options.marker) head.push(commentMarker(options.commentKey));
  head.push(`### ${verdictIcon(report)} hotpath: ${title(report)}`, '');
  if (options.preamble?.length) head.push(...options.preamble, '');
  const html = options.htmlArtifact;
  if (
    html &&
    /^[\w.-]{1,200}$/.test(html.name) &&
    /^https:\/\/[\w.-]+(:\d+)?\/[\w.-]+\/[\w.-]+\/actions\/runs\/\d+\/artifacts\/\d+$/.test(html.url)
  )
    head.push(
      `📊 Charts and interactive flame graphs (base, head, differential): \`report.html\` in the artifact [\`${html.name}\`](${html.url}) (download, unzip, open in a browser).`,
      '',
    );
  const many = report.scenarios.length > 1;
  const body: string[][] = [];
  if (many) body.push([...scenariosTable(report), '']);
  for (const s of report.scenarios) body.push(scenarioSection(report, s, many));
  const tail: string[] = [
    '<details><summary>Settings and environment</summary>',
    '',
    ...settingsLines(report),
    '',
    '</details>',
  ];
  if (report.warnings.length > 0) {
    tail.push(
      '',
      '<details><summary>Warnings</summary>',
      '',
      ...report.warnings.slice(0, 50).map((w) => `- ${escapeText(w, 500)}`),
      ...(report.warnings.length > 50
        ? [`- … and ${report.warnings.length - 50} more (see report.json)`]
        : []),
      '',
      '</details>',
    );
  }
  if (options.filesNote) tail.push('', options.filesNote);
  return fitToLength(head, body, tail, options.maxLength ?? MAX_COMMENT_LENGTH);
}

/**
 * Joins the parts, dropping whole sections from the end of `body` until the text fits. Linear in
 * the text: the length of each choice is summed from the sections' lengths, and only the chosen
 * text is joined.
 */
function fitToLength(head: string[], body: string[][], tail: string[], max: number): string {
  const join = (sections: string[][], note?: string) =>
    `${[...head, ...sections.flat(), ...(note ? [note, ''] : []), ...tail].join('\n')}\n`;
  // Joined with '\n' and ended by one: each line takes its length plus one.
  const size = (lines: readonly string[]) => lines.reduce((sum, line) => sum + line.length + 1, 0);
  const fixed = size(head) + size(tail);
  const sizes = body.map(size);
  let all = fixed;
  for (const n of sizes) all += n;
  if (all <= max) return join(body);
  let kept = all;
  for (let keep = body.length - 1; keep >= 0; keep--) {
    kept -= sizes[keep] ?? 0;
    const note = `_Cut to fit GitHub's ${max}-character limit: ${body.length - keep} of ${body.length} sections left out; the whole report is in report.json and report.md._`;
    if (kept + note.length + 2 <= max) return join(body.slice(0, keep), note);
  }
  // Not even the title and the settings fit: as many whole lines of the head as fit (a line is
  // never cut, so no code span is left open to let its text become markup).
  const note = "_Cut to fit GitHub's limit; the whole report is in report.json and report.md._";
  const lines: string[] = [];
  let used = note.length + 1;
  for (const line of head) {
    if (used + line.length + 1 > max) break;
    lines.push(line);
    used += line.length + 1;
  }
  return `${[...lines, note].join('\n')}\n`;
}
