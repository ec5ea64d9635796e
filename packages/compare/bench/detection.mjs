// Detection bench: how often does hotpath flag an A/A comparison (false positive) and a real
// 25 % throughput drop (detection), over repeated short runs on this machine?
//
//   node bench/detection.mjs [--runs N] [--duration S] [--rounds N] [--out FILE]
//
// Each run is a full comparison (interleaved rounds, probe, load) through the engine in
// ../dist/lib. The server is pinned to core 0 and this process (the load generator) to core 1
// when taskset exists. Raw per-round numbers are kept so the verdict rules can be compared on
// the same data: Welch 95 % (the default), Welch 99 %, and a paired (log-ratio) 95 % test.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  judgeMetrics,
  measure,
  parseSettings,
  probePath,
  roundMetrics,
  tQuantile975,
} from '../dist/lib/index.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    duration: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '4' },
    out: { type: 'string' },
    work: { type: 'string', default: '1000000' },
    // Head's work per request relative to base; 1.41 gives about -25 % throughput here
    // (each request also has a fixed HTTP cost that the factor must outweigh).
    factor: { type: 'string', default: '1.41' },
    pinned: { type: 'boolean', default: false },
  },
});

const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
if (hasTaskset && !values.pinned) {
  // Re-exec pinned to core 1; the servers go to core 0.
  const r = spawnSync(
    'taskset',
    ['-c', '1', process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2), '--pinned'],
    {
      stdio: 'inherit',
    },
  );
  process.exit(r.status ?? 1);
}

// Signals exit through 'exit', where the engine kills the servers' process groups.
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

const server = fileURLToPath(new URL('./work-server.cjs', import.meta.url));
const pin = hasTaskset ? 'taskset -c 0 ' : '';
const BASE_WORK = Number(values.work);
const settings = parseSettings({
  start: 'x',
  duration: values.duration,
  warmup: '0.5',
  rounds: values.rounds,
  connections: values.connections,
  'ready-timeout': '20',
});
const context = { probePath: probePath(), env: process.env };

async function comparison(headWork) {
  const plan = {
    base: {
      side: 'base',
      command: `WORK=${BASE_WORK} ${pin}node ${JSON.stringify(server)}`,
      cwd: process.cwd(),
    },
    head: {
      side: 'head',
      command: `WORK=${headWork} ${pin}node ${JSON.stringify(server)}`,
      cwd: process.cwd(),
    },
    settings,
  };
  const m = await measure(plan, context);
  return { base: m.base.map(roundMetrics), head: m.head.map(roundMetrics) };
}

// --- decision rules on recorded rounds -------------------------------------------------
const welch = (threshold) => (base, head) =>
  judgeMetrics(base, head, threshold).some((v) => v.status === 'regressed');

function tQuantile995(df) {
  const table = [63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.25, 3.169];
  if (df <= table.length) return table[Math.max(1, Math.round(df)) - 1];
  return 2.576 + 3 / df;
}

function welch99(base, head) {
  // Same rule with a 99 % interval (Bonferroni over the metrics).
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const vr = (xs, m) => xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1);
  for (const [metric, better] of [
    ['requestsPerSecond', 'higher'],
    ['p50', 'lower'],
    ['p90', 'lower'],
    ['p99', 'lower'],
    ['cpuPerRequest', 'lower'],
  ]) {
    const b = base.map((r) => r[metric]);
    const h = head.map((r) => r[metric]);
    const mb = mean(b);
    const mh = mean(h);
    const vb = vr(b, mb) / b.length;
    const vh = vr(h, mh) / h.length;
    const df = (vb + vh) ** 2 / (vb ** 2 / (b.length - 1) + vh ** 2 / (h.length - 1)) || 1e9;
    const half = tQuantile995(df) * Math.sqrt(vb + vh);
    const change = (mh - mb) / mb;
    const lo = (mh - mb - half) / mb;
    const hi = (mh - mb + half) / mb;
    const worse = better === 'higher' ? hi < 0 && change < -0.1 : lo > 0 && change > 0.1;
    if (worse) return true;
  }
  return false;
}

function paired(base, head) {
  // Round i of base ran right before round i of head: test the mean log ratio.
  for (const [metric, better] of [
    ['requestsPerSecond', 'higher'],
    ['p50', 'lower'],
    ['p90', 'lower'],
    ['p99', 'lower'],
    ['cpuPerRequest', 'lower'],
  ]) {
    const d = base.map((r, i) => Math.log(head[i][metric] / r[metric]));
    const n = d.length;
    const m = d.reduce((a, b) => a + b, 0) / n;
    const sd = Math.sqrt(d.reduce((a, b) => a + (b - m) ** 2, 0) / (n - 1));
    const half = tQuantile975(n - 1) * (sd / Math.sqrt(n));
    const change = Math.exp(m) - 1;
    const worse = better === 'higher' ? m + half < 0 && change < -0.1 : m - half > 0 && change > 0.1;
    if (worse) return true;
  }
  return false;
}

const rules = {
  'welch-95 (default)': welch(0.1, true),
  'welch-95 wall only': welch(0.1, false),
  'welch-99': welch99,
  'paired-95': paired,
};

// --- run -----------------------------------------------------------------------------------
const runs = Number(values.runs);
const results = { aa: [], ab: [] };
const started = Date.now();
for (let i = 0; i < runs; i++) {
  results.aa.push(await comparison(BASE_WORK));
  results.ab.push(await comparison(Math.round(BASE_WORK * Number(values.factor))));
  process.stderr.write(`run ${i + 1}/${runs} done (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const drop = results.ab.map((r) => {
  const mb = r.base.reduce((a, x) => a + x.requestsPerSecond, 0) / r.base.length;
  const mh = r.head.reduce((a, x) => a + x.requestsPerSecond, 0) / r.head.length;
  return mh / mb - 1;
});
console.log(
  `hotpath detection bench: ${runs} A/A and ${runs} A/B runs, ${settings.rounds} rounds × ${settings.duration} s per side, ${settings.connections} connections, taskset ${hasTaskset ? 'on' : 'off'}`,
);
console.log(`A/B measured throughput change: median ${(median(drop) * 100).toFixed(1)} % (target -25 %)`);
for (const [name, rule] of Object.entries(rules)) {
  const fp = results.aa.filter((r) => rule(r.base, r.head)).length;
  const tp = results.ab.filter((r) => rule(r.base, r.head)).length;
  console.log(
    `${name.padEnd(20)} A/A flagged ${fp}/${runs} (${((100 * (runs - fp)) / runs).toFixed(0)} % clean)   A/B flagged ${tp}/${runs} (${((100 * tp) / runs).toFixed(0)} % detected)`,
  );
}
if (values.out) writeFileSync(values.out, JSON.stringify({ settings, results }, null, 2));
