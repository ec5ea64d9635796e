import type { MetricVerdict } from '../model.js';
import { changesByAmount } from '../settings/metrics.js';

/** What a format needs of a metric: its name (for its scale) and its unit. */
type Metric = Pick<MetricVerdict, 'metric' | 'unit'>;

/** A metric measured as a rate (0..1) whose changes are points: errors, event-loop utilisation. */
const inPoints = (m: Pick<MetricVerdict, 'unit'>) => m.unit === '%';

/** A metric whose changes are amounts in its unit (bytes retained per request, calls per request). */
const inAmounts = (m: Metric) => changesByAmount(m.metric);

/** An amount in a metric's unit: bytes as bytes, anything else with two decimals and its unit. */
const formatAmount = (m: Metric, x: number) =>
  m.unit === 'B'
    ? formatBytes(x)
    : `${Math.abs(x) >= 100 ? Math.abs(x).toFixed(0) : Math.abs(x).toFixed(2)} ${m.unit}`;

/** A byte count for people: `512 B`, `9.62 KiB`, `1.5 MiB` (binary units, as heaps are measured). */
export function formatBytes(bytes: number): string {
  const size = Math.abs(bytes);
  if (size < 1024)
    return `${size >= 100 ? size.toFixed(0) : size >= 10 ? size.toFixed(1) : size.toFixed(2)} B`;
  const [value, unit] =
    size < 1024 ** 2
      ? [size / 1024, 'KiB']
      : size < 1024 ** 3
        ? [size / 1024 ** 2, 'MiB']
        : [size / 1024 ** 3, 'GiB'];
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${unit}`;
}

const signOf = (x: number) => (x > 0 ? '+' : x < 0 ? '−' : '±');

/** Number formatting shared by the markdown and terminal renderings. */
export function formatValue(m: Metric, value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (m.metric === 'errorRate') return `${(value * 100).toFixed(2)} %`;
  if (inPoints(m)) return `${(value * 100).toFixed(1)} %`;
  if (m.unit === 'B') return `${value < 0 ? '−' : ''}${formatBytes(value)}`;
  if (m.metric === 'requestsPerSecond') return value >= 100 ? value.toFixed(0) : value.toFixed(1);
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${m.unit}`;
}

export function formatChange(m: Metric, change: number): string {
  if (!Number.isFinite(change)) return '—';
  const sign = signOf(change);
  if (inPoints(m)) return `${sign}${Math.abs(change * 100).toFixed(2)} pts`;
  if (inAmounts(m)) return `${sign}${formatAmount(m, change)}`;
  return `${sign}${Math.abs(change * 100).toFixed(1)} %`;
}

/**
 * Beyond this (±100 000 %) a bound says only that there were too few pairs (a t quantile at one
 * degree of freedom and a small alpha): a real 100× change is +9 900 %.
 */
const ABSURD = 1000;
/** A rate (0..1) cannot move by more than 100 points: a bound beyond that says the same. */
const ABSURD_POINTS = 1;

const absurd = (m: Metric, x: number) =>
  !Number.isFinite(x) || (!inAmounts(m) && Math.abs(x) > (inPoints(m) ? ABSURD_POINTS : ABSURD));

/** An interval as text; "too few pairs" when there is none or it is unbounded or absurd. */
export function formatInterval(m: Metric, ci: [number, number] | null): string {
  if (!ci || absurd(m, ci[0]) || absurd(m, ci[1])) return 'too few pairs';
  const sign = (x: number) => (x >= 0 ? '+' : '−');
  if (inAmounts(m))
    return `[${sign(ci[0])}${formatAmount(m, ci[0])}, ${sign(ci[1])}${formatAmount(m, ci[1])}]`;
  const one = (x: number) =>
    inPoints(m) ? `${sign(x)}${Math.abs(x * 100).toFixed(2)}` : `${sign(x)}${Math.abs(x * 100).toFixed(1)}`;
  return inPoints(m) ? `[${one(ci[0])}, ${one(ci[1])}] pts` : `[${one(ci[0])}, ${one(ci[1])}] %`;
}

/** The smallest change the run could have detected: `±3.1 %`, or — without an interval. */
export function formatDetectable(m: Metric & Pick<MetricVerdict, 'detectable'>): string {
  const d = m.detectable;
  if (d === null || absurd(m, d)) return '—';
  if (inAmounts(m)) return `±${formatAmount(m, d)}`;
  return inPoints(m) ? `±${(d * 100).toFixed(2)} pts` : `±${(d * 100).toFixed(1)} %`;
}

/**
 * The change that counts for a metric, as text: `64 B` for retained bytes (its margin), else the
 * threshold in percent (a rate's margin is stated in percent of its base, as the setting is).
 */
export function marginText(m: Metric & Pick<MetricVerdict, 'margin'>, threshold: number): string {
  if (inAmounts(m) && m.margin !== undefined) return formatAmount(m, m.margin);
  return `${threshold} %`;
}

const finite = (x: number | null | undefined): x is number => typeof x === 'number' && Number.isFinite(x);

/** "−1.2 % to +2.0 %": the one-sided bounds of an unchanged metric, lower first. */
function boundsText(m: Metric, worst: number, best: number): string {
  const [lo, hi] = worst < best ? [worst, best] : [best, worst];
  const [from, to] = [formatChange(m, lo), formatChange(m, hi)];
  return from === to ? from : `${from} to ${to}`;
}

/** The outcome of a metric in words (the threshold in percent, as the settings give it). */
export function outcomeText(
  m: Pick<MetricVerdict, 'metric' | 'outcome' | 'reason' | 'unit'> &
    Partial<Pick<MetricVerdict, 'worstCase' | 'bestCase' | 'margin'>>,
  threshold: number,
): string {
  const margin = marginText(m, threshold);
  switch (m.outcome) {
    case 'regressed':
      return 'regressed';
    case 'improved':
      return 'improved';
    case 'unchanged':
      // Both one-sided bounds: what "unchanged" was decided on.
      return finite(m.worstCase) && finite(m.bestCase)
        ? `unchanged: ${boundsText(m, m.worstCase, m.bestCase)}, within ±${margin}`
        : `unchanged: within ±${margin}`;
    case 'not-worse':
      // The worst change the run still allows: what "not worse" was decided on.
      return finite(m.worstCase)
        ? `not worse than ${margin}: at worst ${formatChange(m, m.worstCase)}`
        : `not worse than ${margin}`;
    default:
      return m.reason === 'too-few-pairs'
        ? 'inconclusive: too few pairs'
        : m.reason === 'spoiled'
          ? 'inconclusive: other load on the machine'
          : `inconclusive: noise wider than ±${margin}`;
  }
}

export function share(x: number): string {
  return `${(x * 100).toFixed(1)} %`;
}

export function points(x: number): string {
  const sign = x > 0 ? '+' : x < 0 ? '−' : '±';
  return `${sign}${Math.abs(x * 100).toFixed(1)} pts`;
}

/**
 * A profile's file as a readable location: a checkout-relative path as it is
 * (`src/routes/auth.js:12`), a dependency as its package path (`content-type/index.js:106`),
 * anything absolute or a URL by its last two segments.
 */
export function shortLocation(file: string, line: number): string {
  if (!file) return '';
  let path = file;
  if (file.startsWith('node_modules/')) path = file.slice('node_modules/'.length);
  else if (file.startsWith('/') || file.startsWith('file://')) {
    if (file.startsWith('file://')) {
      try {
        path = decodeURIComponent(new URL(file).pathname);
      } catch {
        // a URL that does not decode is shown as it is
        path = file.slice('file://'.length);
      }
    }
    path = path.split('/').slice(-2).join('/');
  }
  return line > 0 ? `${path}:${line}` : path;
}

/**
 * How a hot function is named on screen: its name, and for a native frame without a file the JS
 * function that called it (`run (native, from pbkdf2Sync)`). Not tick-parser's functionLabel,
 * which names a profile entry with its location.
 */
export function displayName(f: {
  name: string;
  file: string;
  kind: string;
  caller?: { name: string };
}): string {
  if (!f.file && f.caller) return `${f.name} (native, from ${f.caller.name})`;
  return f.name;
}

/** A function's main-thread cost per request, base → head (µs), or — without per-thread CPU. */
export function costText(f: { baseCost?: number; headCost?: number }): string {
  if (f.baseCost === undefined || f.headCost === undefined) return '—';
  const us = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  return `${us(f.baseCost)} → ${us(f.headCost)}`;
}
