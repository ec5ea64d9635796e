import type { MetricVerdict } from '../model.js';

/** Number formatting shared by the markdown and terminal renderings. */
export function formatValue(m: Pick<MetricVerdict, 'metric'>, value: number): string {
  if (m.metric === 'errorRate') return `${(value * 100).toFixed(2)} %`;
  if (m.metric === 'requestsPerSecond') return value >= 100 ? value.toFixed(0) : value.toFixed(1);
  if (m.metric === 'cpuPerRequest') return `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} µs`;
  return `${value >= 100 ? value.toFixed(0) : value.toFixed(value >= 10 ? 1 : 2)} ms`;
}

export function formatChange(m: Pick<MetricVerdict, 'metric'>, change: number): string {
  if (!Number.isFinite(change)) return '—';
  const sign = change > 0 ? '+' : change < 0 ? '−' : '±';
  if (m.metric === 'errorRate') return `${sign}${Math.abs(change * 100).toFixed(2)} pts`;
  return `${sign}${Math.abs(change * 100).toFixed(1)} %`;
}

export function formatInterval(m: Pick<MetricVerdict, 'metric'>, ci: [number, number]): string {
  if (!Number.isFinite(ci[0]) || !Number.isFinite(ci[1])) return 'n/a';
  const one = (x: number) =>
    m.metric === 'errorRate'
      ? `${(x * 100).toFixed(2)}`
      : `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)}`;
  return m.metric === 'errorRate' ? `[${one(ci[0])}, ${one(ci[1])}] pts` : `[${one(ci[0])}, ${one(ci[1])}] %`;
}

export const STATUS_TEXT: Record<MetricVerdict['status'], string> = {
  regressed: 'regressed',
  improved: 'improved',
  'within-threshold': 'within threshold',
  'not-significant': 'no significant change',
};

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
