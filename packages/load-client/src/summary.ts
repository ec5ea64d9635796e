import type { Histogram } from 'hdr-histogram-js';
import type { RunResult } from './result.js';
import type { SeriesStats } from './series-stats.js';

function pad(label: string): string {
  return `${label}:`.padEnd(24);
}

function fixed(n: number, digits = 2): string {
  return n.toFixed(digits);
}

/** An ab-style plain-text summary of a run; `title` (-T) heads it. */
export function formatSummary(result: RunResult, title?: string): string {
  const lines: string[] = [];
  if (title !== undefined) lines.push(`${pad('Title')}${title}`);
  const model =
    result.rate === null
      ? 'closed'
      : `open, ${result.rate} req/s scheduled (latency from intended send time)`;
  lines.push(`${pad('Target')}${result.url}`);
  lines.push(
    `${pad('Connections')}${result.connections} (pipelining ${result.pipelining}, ${result.workers} worker${result.workers === 1 ? '' : 's'}, ${model} model)`,
  );
  lines.push(
    `${pad('Time taken for tests')}${fixed(result.duration, 3)} seconds${result.aborted ? ' (interrupted)' : result.bailedOut ? ' (bailed out: -B failures reached)' : ''}`,
  );
  lines.push(`${pad('Complete requests')}${result.requests.total}`);
  lines.push(`${pad('Failed requests')}${result.errors}`);
  const kinds = Object.entries(result.errorsByKind);
  if (kinds.length > 0) lines.push(`   (${kinds.map(([kind, n]) => `${kind}: ${n}`).join(', ')})`);
  const failureLabel = result.url.startsWith('memcache:') ? 'Error replies' : 'Non-2xx responses';
  lines.push(`${pad(failureLabel)}${result.non2xx}`);
  const codes = Object.entries(result.statusCodes);
  if (codes.length > 0)
    lines.push(`${pad('Status codes')}${codes.map(([code, n]) => `${code}: ${n}`).join(', ')}`);
  lines.push(`${pad('Total transferred')}${result.throughput.total} bytes`);
  lines.push(`${pad('Requests per second')}${fixed(result.requests.mean)} [#/sec] (mean)`);
  lines.push(`${pad('Transfer rate')}${fixed(result.throughput.mean / 1024)} [Kbytes/sec] received`);
  if (result.tls !== null && result.tls !== undefined)
    lines.push(`${pad('TLS handshakes')}${result.tls.handshakes} (${result.tls.resumed} resumed sessions)`);
  const requestStats = result.requests.perSecondStats;
  const byteStats = result.throughput.perSecondStats;
  if (requestStats !== undefined && byteStats !== undefined && requestStats.samples > 0) {
    lines.push('');
    lines.push(
      `Per second, over the ${requestStats.samples} whole second${requestStats.samples === 1 ? '' : 's'}`,
    );
    lines.push(
      seriesRow(
        '',
        SERIES_COLUMNS.map(([label]) => label),
      ),
    );
    lines.push(seriesRow('Req/Sec', seriesValues(requestStats)));
    lines.push(seriesRow('Bytes/Sec', seriesValues(byteStats)));
  }
  const l = result.latency;
  lines.push(
    `${pad('Latency (ms)')}mean ${fixed(l.mean, 3)}, stdev ${fixed(l.stdev, 3)}, min ${fixed(l.min, 3)}`,
  );
  lines.push('');
  lines.push('Percentage of the requests served within a certain time (ms)');
  const rows: [string, number][] = [
    ['50%', l.p50],
    ['75%', l.p75],
    ['90%', l.p90],
    ['97.5%', l.p97_5],
    ['99%', l.p99],
    ['99.9%', l.p99_9],
    ['99.99%', l.p99_99],
    ['100%', l.max],
  ];
  for (const [label, value] of rows) {
    lines.push(
      `  ${label.padStart(6)}  ${fixed(value, 3).padStart(10)}${label === '100%' ? ' (longest request)' : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

const SERIES_COLUMNS: [string, keyof SeriesStats][] = [
  ['mean', 'mean'],
  ['stdev', 'stdev'],
  ['min', 'min'],
  ['1%', 'p1'],
  ['2.5%', 'p2_5'],
  ['50%', 'p50'],
  ['97.5%', 'p97_5'],
  ['max', 'max'],
];

function seriesValues(stats: SeriesStats): string[] {
  return SERIES_COLUMNS.map(([, key]) => {
    const value = stats[key];
    return Number.isInteger(value) ? String(value) : fixed(value);
  });
}

function seriesRow(label: string, cells: string[]): string {
  return `  ${label.padEnd(10)}${cells.map((cell) => cell.padStart(12)).join('')}`;
}

const KIND_WORDS: Record<string, string> = {
  connect: 'failed connects',
  reset: 'connection resets',
  timeout: 'timeouts',
  parse: 'unreadable responses',
  closed: 'connections closed before the response',
  other: 'socket errors',
  body: 'bodies unlike --expect-body',
};

/** Why a run completed no request, in one line (for the CLI's non-zero exit). */
export function noCompletionReason(result: RunResult, timeoutSeconds: number): string {
  const kinds = Object.entries(result.errorsByKind);
  if (kinds.length === 0) {
    return result.duration > 0 && result.duration < timeoutSeconds
      ? `no response within the ${result.duration} s window (try a longer -d)`
      : 'no response from the target';
  }
  return kinds
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => {
      const message = result.errorMessages?.[kind];
      return `${n} ${KIND_WORDS[kind] ?? kind}${message ? ` (${message})` : ''}`;
    })
    .join(', ');
}

/**
 * The full latency distribution (-l): HdrHistogram's percentile table of the run, in
 * milliseconds (value, percentile, count, 1/(1-percentile)).
 */
export function formatLatencyDistribution(histogram: Histogram): string {
  return `\nLatency distribution (ms)\n${histogram.outputPercentileDistribution(5, 1000)}`;
}
