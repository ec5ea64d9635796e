import type { RunResult } from './result.js';

function pad(label: string): string {
  return `${label}:`.padEnd(24);
}

function fixed(n: number, digits = 2): string {
  return n.toFixed(digits);
}

/** An ab-style plain-text summary of a run. */
export function formatSummary(result: RunResult): string {
  const lines: string[] = [];
  const model =
    result.rate === null
      ? 'closed'
      : `open, ${result.rate} req/s scheduled (latency from intended send time)`;
  lines.push(`${pad('Target')}${result.url}`);
  lines.push(
    `${pad('Connections')}${result.connections} (pipelining ${result.pipelining}, ${result.workers} worker${result.workers === 1 ? '' : 's'}, ${model} model)`,
  );
  lines.push(
    `${pad('Time taken for tests')}${fixed(result.duration, 3)} seconds${result.aborted ? ' (interrupted)' : ''}`,
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

/** One progress line for a TTY: a bar when the length of the run is known. */
export function formatProgress(
  second: number,
  requests: number,
  errors: number,
  totalSeconds?: number,
): string {
  const stats = `${second}s  ${requests} req/s  ${errors} errors`;
  if (totalSeconds === undefined || totalSeconds <= 0) return stats;
  const width = 30;
  const done = Math.min(width, Math.round((second / totalSeconds) * width));
  return `[${'#'.repeat(done)}${'-'.repeat(width - done)}] ${stats}`;
}
