// A bisect search as one static page (report.html beside the search's report.json): the range
// drawn as its commits, each marked good, bad, skipped or not measured, the steps' probes
// numbered; each step's change with its interval against 0, half the step and the step; the
// steps as a table. No script; every text from the repository (subjects, scenario names, the
// reason) is HTML-escaped, and a Content-Security-Policy lets only the page's own style apply.
import type { BisectSearch, BisectStep } from '../bisect/model.js';
import { changeText } from './bisect.js';
import { cspHash, escapeHtml as e } from './html-text.js';

const STYLE = `body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;color:#1f2328;margin:24px auto;max-width:1100px;padding:0 16px}
h1{font-size:22px;margin:8px 0}h2{font-size:17px;margin:26px 0 6px}code{font:12px ui-monospace,Menlo,Consolas,monospace;background:#f6f8fa;padding:1px 4px;border-radius:4px}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #d0d7de;padding:4px 10px;text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
.dim{color:#656d76}.culprit{color:#cf222e}.no-culprit{color:#1a7f37}.range{color:#9a6700}
svg text{font-size:11px;fill:#656d76}svg .good{fill:#1a7f37}svg .bad{fill:#cf222e}svg .skip{fill:#8c959f}svg .open{fill:#fff;stroke:#8c959f}
svg .bar.good{stroke:#1a7f37}svg .bar.bad{stroke:#cf222e}svg .bar.undecided{stroke:#9a6700}svg .rule{stroke:#d0d7de}svg .half{stroke:#9a6700;stroke-dasharray:4 3}
`;

const short = (sha: string) => sha.slice(0, 12);
const worse = (better: 'higher' | 'lower', x: number) => (better === 'lower' ? x : -x);

/** The range: one dot per commit, coloured by what the search learnt of it. */
function rangeSvg(search: BisectSearch): string {
  const n = search.commits.length;
  const width = 1040;
  const x = (i: number) => 20 + (i * (width - 40)) / Math.max(1, n - 1);
  const state = new Map<number, string>([[0, 'good']]);
  state.set(n - 1, 'bad');
  const probed = new Map<number, number[]>();
  for (const s of search.steps) {
    probed.set(s.probeIndex, [...(probed.get(s.probeIndex) ?? []), s.step]);
    if (s.verdict === 'skip') state.set(s.probeIndex, 'skip');
    else if (s.verdict === 'good' || s.verdict === 'bad') state.set(s.probeIndex, s.verdict);
  }
  const culprit = search.culprit ? search.commits.findIndex((c) => c.sha === search.culprit?.sha) : -1;
  const dots = search.commits.map((c, i) => {
    const cls = state.get(i) ?? 'open';
    const ring =
      i === culprit
        ? `<circle cx="${x(i)}" cy="34" r="9" fill="none" stroke="#cf222e" stroke-width="2"/>`
        : '';
    const label = probed.has(i)
      ? `<text x="${x(i)}" y="16" text-anchor="middle">${probed.get(i)?.join(',')}</text>`
      : '';
    return `${ring}<circle class="${cls}" cx="${x(i)}" cy="34" r="5"><title>#${i} ${e(short(c.sha))} ${e(c.subject)}</title></circle>${label}`;
  });
  return `<svg width="${width}" height="60" role="img" aria-label="the commits of the range"><line class="rule" x1="20" x2="${width - 20}" y1="34" y2="34"/>${dots.join('')}<text x="20" y="56">#0 good</text><text x="${width - 20}" y="56" text-anchor="end">#${n - 1} bad</text></svg>`;
}

/** Each measured step's change with its interval, against 0, half the step and the step. */
function stepsSvg(search: BisectSearch): string {
  const sized = search.steps.find((s) => s.setsStep && s.change);
  const measured = search.steps.filter((s) => s.change?.ci);
  if (!sized?.change || measured.length === 0) return '';
  const size = worse(sized.change.better, sized.change.change);
  const values = measured.flatMap((s) =>
    (s.change?.ci ?? [0, 0]).map((v) => worse(s.change?.better ?? 'lower', v)),
  );
  const lo = Math.min(0, ...values);
  const hi = Math.max(size * 1.2, ...values);
  const width = 1040;
  const left = 260;
  const x = (v: number) => left + ((v - lo) / (hi - lo || 1)) * (width - left - 20);
  const row = 22;
  const height = 30 + measured.length * row;
  const rules = [
    `<line class="rule" x1="${x(0)}" x2="${x(0)}" y1="14" y2="${height}"/><text x="${x(0)}" y="10" text-anchor="middle">0</text>`,
    `<line class="half" x1="${x(size / 2)}" x2="${x(size / 2)}" y1="14" y2="${height}"/><text x="${x(size / 2)}" y="10" text-anchor="middle">S/2</text>`,
    `<line class="rule" x1="${x(size)}" x2="${x(size)}" y1="14" y2="${height}"/><text x="${x(size)}" y="10" text-anchor="middle">S ${e((size * 100).toFixed(1))} %</text>`,
  ];
  const bars = measured.map((s, k) => {
    const y = 30 + k * row;
    const better = s.change?.better ?? 'lower';
    const [a, b] = (s.change?.ci ?? [0, 0]).map((v) => worse(better, v)).sort((p, q) => p - q) as [
      number,
      number,
    ];
    const point = worse(better, s.change?.change ?? 0);
    const cls = s.verdict === 'good' || s.verdict === 'bad' ? s.verdict : 'undecided';
    const what = s.culpritCheck ? 'own comparison' : `#${s.probeIndex} vs #${s.goodIndex}`;
    return `<text x="0" y="${y + 4}">step ${s.step}: ${e(what)}</text><line class="bar ${cls}" stroke-width="3" x1="${x(a)}" x2="${x(b)}" y1="${y}" y2="${y}"/><circle class="${cls === 'undecided' ? 'skip' : cls}" cx="${x(point)}" cy="${y}" r="4"/>`;
  });
  return `<svg width="${width}" height="${height + 6}" role="img" aria-label="each step's change against half the step">${rules.join('')}${bars.join('')}</svg>`;
}

function stepRow(search: BisectSearch, s: BisectStep): string {
  const subject = search.commits[s.probeIndex]?.subject ?? '';
  const what = s.setsStep ? ' (sets the step S)' : s.culpritCheck ? " (the culprit's own comparison)" : '';
  const verdict = s.decidedBy ? `${s.verdict}, by half the step` : s.verdict;
  return `<tr><td class="num">${s.step}</td><td><code>${e(short(s.probe))}</code> #${s.probeIndex} ${e(subject)}${e(what)}</td><td><code>${e(short(s.good))}</code> #${s.goodIndex}</td><td>${e(s.outcome)}</td><td>${e(verdict)}</td><td>${e(s.outcome === 'unbuildable' ? (s.reason ?? '') : changeText(s.change))}</td><td class="num">${s.pairs}</td><td class="num">${Math.round(s.seconds)} s</td></tr>`;
}

/** The conclusion as the page's title line. */
function conclusionText(search: BisectSearch): string {
  if (search.conclusion === 'culprit' && search.culprit)
    return `culprit ${short(search.culprit.sha)} "${search.culprit.subject}": ${changeText(search.culprit.change)} against its parent`;
  if (search.conclusion === 'no-culprit') return `no culprit: ${search.why}`;
  return `no single culprit: ${search.range.commits.length} commit(s) after ${short(search.range.from)} up to ${short(search.range.to)} — ${search.why}`;
}

/** report.html of a bisect search. `culpritReport`: the relative path of the culprit's own report.html. */
export function renderBisectHtml(search: BisectSearch, culpritReport?: string): string {
  const csp = `default-src 'none'; style-src ${cspHash(STYLE)}; img-src data:; base-uri 'none'; form-action 'none'`;
  const minutes =
    search.seconds >= 90 ? `${Math.round(search.seconds / 60)} min` : `${Math.round(search.seconds)} s`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${e(csp)}">`,
    `<title>hotpath bisect: ${e(search.conclusion)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    `<h1>hotpath bisect: <span class="${e(search.conclusion)}">${e(conclusionText(search))}</span></h1>`,
    `<p class="dim">${search.commits.length - 1} commits after <code>${e(short(search.commits[0]?.sha ?? ''))}</code>; ${search.comparisons} comparisons, ${search.pairs} pairs, ${e(minutes)}; threshold ${search.threshold} %${culpritReport ? ` · <a href="${e(culpritReport)}">the culprit's own comparison</a>` : ''}</p>`,
    '<h2>The range</h2>',
    '<p class="dim">Each commit of the first-parent history, oldest first: green good, red bad, grey skipped, open not measured; the numbers are the steps that probed it; the ring is the culprit.</p>',
    rangeSvg(search),
    '<h2>The steps</h2>',
    '<p class="dim">Each comparison\'s change on the step\'s metric, as "how much worse", with its interval: a probe is good below half the step (S/2), bad above it.</p>',
    stepsSvg(search),
    `<table><thead><tr><th>step</th><th>probe</th><th>against</th><th>outcome</th><th>placed</th><th>change</th><th>pairs</th><th>time</th></tr></thead><tbody>${search.steps.map((s) => stepRow(search, s)).join('')}</tbody></table>`,
    ...(search.skipped.length > 0
      ? [
          '<h2>Skipped</h2>',
          `<ul>${search.skipped.map((s) => `<li><code>${e(short(s.sha))}</code> ${e(s.subject)}: ${e(s.reason)}</li>`).join('')}</ul>`,
        ]
      : []),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
