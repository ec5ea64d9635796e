// report.html's latency-vs-rate chart of a scenario with an SLO: every step of every round's
// capacity search, base and head, as the latency the SLO targets against the arrival rate, with
// the SLO's line and each side's median capacity. Inline SVG, every text escaped.
import type { RoundRow, Side } from '../model.js';
import { describeSlo, type SloLatency, sloTargets } from '../settings/slo.js';
import { escapeHtml as e } from './html-text.js';

/** The chart's own style, appended to the page's. */
export const CAPACITY_STYLE = [
  '.chart .dot.met.base{fill:var(--base)}.chart .dot.met.head{fill:var(--head)}',
  '.chart .slo{stroke:var(--bad);stroke-dasharray:5 4}.chart .slo-label{font-size:11px;fill:var(--bad)}',
  '.chart .cap{stroke-width:1.5;stroke-dasharray:2 3}.chart .cap.base{stroke:var(--base)}.chart .cap.head{stroke:var(--head)}',
  '.chart .over{fill:#fff;stroke-width:2}.chart .over.base{stroke:var(--base)}.chart .over.head{stroke:var(--head)}',
].join('\n');

/** Steps whose rates lie within this ratio of a group's first are one point of the curve. */
const GROUP_RATIO = 1.05;

interface Point {
  rate: number;
  ms: number;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/**
 * One side's curve: its steps sorted by rate, those within GROUP_RATIO of each other merged
 * into one point (the median rate and latency), so rounds that tried nearly the same rate read
 * as one line. Pure.
 */
export function latencyCurve(points: readonly Point[]): Point[] {
  const sorted = [...points].sort((a, b) => a.rate - b.rate);
  const curve: Point[] = [];
  let group: Point[] = [];
  const close = () => {
    if (group.length)
      curve.push({ rate: median(group.map((p) => p.rate)), ms: median(group.map((p) => p.ms)) });
    group = [];
  };
  for (const p of sorted) {
    if (group.length && p.rate > (group[0] as Point).rate * GROUP_RATIO) close();
    group.push(p);
  }
  close();
  return curve;
}

/** The latency the chart plots: the SLO's (p99, else p90, else p50), p99 for an error-only SLO. */
function plotted(slo: string): { key: SloLatency; target?: number } {
  const t = sloTargets(slo);
  for (const key of ['p99', 'p90', 'p50'] as const) if (t[key] !== undefined) return { key, target: t[key] };
  return { key: 'p99' };
}

/** A power of ten as a tick: 1000, 10, 0.1. */
const fmt = (v: number) => (v >= 1 ? v.toFixed(0) : String(Number(v.toPrecision(1))));

interface SideMarks {
  side: Side;
  steps: (Point & { met: boolean })[];
  /** The steps at twice base's capacity (their p99). */
  overload: Point[];
  /** The side's median capacity over the rounds that met the SLO at some rate. */
  capacity?: number;
}

/** Each side's steps (the plotted latency), steps at twice base's capacity and median capacity. */
function sideMarks(rows: readonly RoundRow[], key: SloLatency): SideMarks[] {
  const ok = (p: Point) => Number.isFinite(p.ms) && p.ms > 0 && p.rate > 0;
  return (['base', 'head'] as const).map((side) => {
    const searches = rows.flatMap((r) => (r.side === side && r.capacitySearch ? [r.capacitySearch] : []));
    const capacities = searches.flatMap((c) => (c.capacity === null ? [] : [c.capacity]));
    return {
      side,
      steps: searches
        .flatMap((c) => c.steps.map((s) => ({ rate: s.rate, ms: s[key], met: s.met })))
        .filter(ok),
      // the step at twice base's capacity records its p99 only
      overload:
        key === 'p99'
          ? searches
              .flatMap((c) => (c.overload ? [{ rate: c.overload.rate, ms: c.overload.p99 }] : []))
              .filter(ok)
          : [],
      ...(capacities.length ? { capacity: median(capacities) } : {}),
    };
  });
}

const [W, H, LEFT, RIGHT, TOP, BOTTOM] = [620, 270, 56, 16, 44, 34];

/** The chart's scales: rate linear from 0, latency log10 around every point and the target. */
function scales(points: readonly Point[], target: number | undefined) {
  const maxRate = Math.max(...points.map((p) => p.rate)) * 1.05;
  const latencies = points.map((p) => p.ms).concat(target ?? []);
  const lo = Math.log10(Math.max(0.01, Math.min(...latencies) / 1.5));
  const hi = Math.log10(Math.max(...latencies) * 1.5);
  return {
    maxRate,
    lo,
    hi,
    x: (rate: number) => LEFT + (rate / maxRate) * (W - LEFT - RIGHT),
    y: (ms: number) =>
      TOP + (1 - (Math.log10(Math.max(ms, 10 ** lo)) - lo) / (hi - lo || 1)) * (H - TOP - BOTTOM),
  };
}

/** Grid lines at each power of ten, rate ticks, the axis label and the SLO's line. */
function frame(sc: ReturnType<typeof scales>, target: number | undefined, slo: string): string[] {
  const out: string[] = [];
  for (let d = Math.ceil(sc.lo); d <= Math.floor(sc.hi); d++) {
    const yy = sc.y(10 ** d);
    out.push(
      `<line x1="${LEFT}" x2="${W - RIGHT}" y1="${yy.toFixed(1)}" y2="${yy.toFixed(1)}" class="grid"/>`,
      `<text x="${LEFT - 6}" y="${(yy + 4).toFixed(1)}" text-anchor="end" class="tick">${e(fmt(10 ** d))}</text>`,
    );
  }
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    const rate = (sc.maxRate / 1.05) * f;
    out.push(
      `<text x="${sc.x(rate).toFixed(1)}" y="${H - 18}" text-anchor="middle" class="tick">${Math.round(rate)}</text>`,
    );
  }
  out.push(
    `<text x="${(LEFT + W - RIGHT) / 2}" y="${H - 2}" text-anchor="middle" class="tick">arrival rate, req/s</text>`,
  );
  if (target !== undefined) {
    const yy = sc.y(target);
    out.push(
      `<line x1="${LEFT}" x2="${W - RIGHT}" y1="${yy.toFixed(1)}" y2="${yy.toFixed(1)}" class="slo"/>`,
      `<text x="${W - RIGHT}" y="${(yy - 4).toFixed(1)}" text-anchor="end" class="slo-label">${e(`SLO: ${describeSlo(sloTargets(slo))}`)}</text>`,
    );
  }
  return out;
}

/** One side's capacity line, curve, step dots and overload squares. */
function drawSide(sc: ReturnType<typeof scales>, marks: SideMarks): string[] {
  const { side } = marks;
  const out: string[] = [];
  if (marks.capacity !== undefined) {
    const xx = sc.x(marks.capacity).toFixed(1);
    out.push(`<line x1="${xx}" x2="${xx}" y1="${TOP}" y2="${H - BOTTOM}" class="cap ${side}"/>`);
  }
  const curve = latencyCurve(marks.steps).map((p) => `${sc.x(p.rate).toFixed(1)},${sc.y(p.ms).toFixed(1)}`);
  out.push(`<polyline points="${curve.join(' ')}" class="line ${side}"/>`);
  for (const p of marks.steps)
    out.push(
      `<circle cx="${sc.x(p.rate).toFixed(1)}" cy="${sc.y(p.ms).toFixed(1)}" r="3" class="dot ${side}${p.met ? ' met' : ''}"/>`,
    );
  for (const o of marks.overload)
    out.push(
      `<rect x="${(sc.x(o.rate) - 3.5).toFixed(1)}" y="${(sc.y(o.ms) - 3.5).toFixed(1)}" width="7" height="7" class="over ${side}"/>`,
    );
  return out;
}

const CAPTION =
  'Each dot is one step of a round’s capacity search (filled: the SLO met, hollow: missed); the lines join the median of steps within 5 % of each other; the dotted verticals are each side’s median capacity; squares are the steps at twice base’s capacity (their p99).';

/**
 * The latency-vs-rate chart of a scenario's capacity searches; '' when no round searched.
 * Latency on a log scale (past a server's capacity it grows by orders of magnitude); each dot
 * one step (filled: met the SLO, hollow: missed), squares the steps at twice base's capacity.
 */
export function capacityChart(rows: readonly RoundRow[]): string {
  const slo = rows.find((r) => r.capacitySearch)?.capacitySearch?.slo;
  if (slo === undefined) return '';
  const { key, target } = plotted(slo);
  const marks = sideMarks(rows, key);
  const points = marks.flatMap((m) => [...m.steps, ...m.overload]);
  if (points.length === 0) return '';
  const sc = scales(points, target);
  const title = `Latency ${key} (ms, log scale) against arrival rate: the capacity search's steps`;
  const svg = [
    `<svg class="chart" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${e(title)}">`,
    `<text x="${LEFT}" y="16" class="chart-title">${e(title)}</text>`,
    ...frame(sc, target, slo),
    ...marks.flatMap((m) => drawSide(sc, m)),
    `<text x="${W - RIGHT - 100}" y="34" class="legend base">● base</text>`,
    `<text x="${W - RIGHT - 46}" y="34" class="legend head">● head</text>`,
    '</svg>',
  ];
  return `<h3>Latency against rate</h3><div class="charts">${svg.join('')}</div><p class="dim">${e(CAPTION)}</p>`;
}
