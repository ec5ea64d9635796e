// Detection bench, the yardstick of the verdict: through real git worktrees and the public API,
// how often does hotpath flag an A/A pull request (head = base + a comment line: a false alarm)
// and a head whose handler costs 11 % more CPU (about −10 % req/s: detection)?
//
//   node bench/detection.mjs [--runs N] [--shards 1,2,4] [--factor 1.11] [--rounds N] [--duration S]
//
// Each run is a whole comparison as a user runs it: base and head checked out with git worktree
// from a temp repository, interleaved rounds at the default settings (unless overridden), the
// probe, paired statistics, the hot-function diff. With --shards k, k measurements of the same
// pair of commits are merged as the Action's report mode merges a matrix. "Flagged" means the
// run regressed or a function's growth was significant. The servers are pinned to core 0 and
// this process (the load generator) to core 1 when taskset exists.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { report as makeReport, measure, resolveSettings } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    shards: { type: 'string', default: '1' },
    factor: { type: 'string', default: '1.11' },
    work: { type: 'string', default: '400000' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '4' },
    out: { type: 'string' },
    pinned: { type: 'boolean', default: false },
  },
});

const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
if (hasTaskset && !values.pinned) {
  const r = spawnSync(
    'taskset',
    ['-c', '1', process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2), '--pinned'],
    {
      stdio: 'inherit',
    },
  );
  process.exit(r.status ?? 1);
}

const server = (work) => `// each request burns ${work} iterations of CPU
const work = ${work};
require('node:http').createServer((req, res) => {
  let x = 0;
  for (let i = 0; i < work; i++) x += Math.sqrt(i) * 1e-9;
  res.end(String(x));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

const dir = mkdtempSync(join(tmpdir(), 'hotpath-detection-'));
const git = (...args) =>
  execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@example.com',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@example.com',
    },
  }).trim();
const commit = (text, message) => {
  writeFileSync(join(dir, 'server.cjs'), text);
  git('add', '.');
  git('commit', '-q', '-m', message);
  return git('rev-parse', 'HEAD');
};
git('init', '-q', '-b', 'main');
const work = Number(values.work);
const base = commit(server(work), 'base');
const aa = commit(`${server(work)}// a comment: nothing else changed\n`, 'A/A head');
git('checkout', '-q', base);
const ab = commit(server(Math.round(work * Number(values.factor))), 'A/B head');

const overrides = {
  start: `${hasTaskset ? 'taskset -c 0 ' : ''}node server.cjs`,
  cwd: dir,
  install: 'none',
  connections: values.connections,
};
for (const key of ['rounds', 'duration', 'warmup']) if (values[key]) overrides[key] = values[key];
const settings = resolveSettings({ overrides });

process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

async function comparison(headSha, shards) {
  const measured = [];
  for (let i = 1; i <= shards; i++) {
    measured.push(
      await measure(settings, {
        baseDir: dir,
        refs: { base: { sha: base }, head: { sha: headSha } },
        shard: { index: i, total: shards },
      }),
    );
  }
  const report = makeReport(measured);
  const s = report.scenarios[0];
  const functions = (s.hotFunctions?.flagged ?? []).filter((f) => f.reason === 'grew' && f.significant);
  const flagged = report.regressed || functions.length > 0;
  return {
    flagged,
    regressed: report.regressed,
    functions: functions.map((f) => f.name),
    metrics: Object.fromEntries(
      s.metrics.map((m) => [m.metric, { change: m.change, ci: m.ci, status: m.status }]),
    ),
  };
}

const runs = Number(values.runs);
const shardCounts = values.shards.split(',').map(Number);
const started = Date.now();
const results = {};
try {
  for (const shards of shardCounts) {
    results[shards] = { aa: [], ab: [] };
    for (let i = 0; i < runs; i++) {
      results[shards].aa.push(await comparison(aa, shards));
      results[shards].ab.push(await comparison(ab, shards));
      process.stderr.write(
        `shards ${shards}: run ${i + 1}/${runs} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `hotpath detection bench: ${runs} A/A and ${runs} A/B runs per shard count, ${settings.rounds} rounds × ${settings.duration} s (+${settings.warmup} s warm-up) per side and shard, ${values.connections} connections, head ×${values.factor} CPU per request, taskset ${hasTaskset ? 'on' : 'off'}`,
);
console.log(
  '| shards | A/A flagged (false alarms) | A/B flagged (detected) | A/B req/s change (median) | A/B CPU/request change (median) |',
);
console.log('|---:|---:|---:|---:|---:|');
for (const shards of shardCounts) {
  const { aa: a, ab: b } = results[shards];
  const fp = a.filter((r) => r.flagged).length;
  const tp = b.filter((r) => r.flagged).length;
  const change = (metric) => median(b.map((r) => r.metrics[metric]?.change ?? Number.NaN)) * 100;
  console.log(
    `| ${shards} | ${fp}/${runs} (${((100 * fp) / runs).toFixed(0)} %) | ${tp}/${runs} (${((100 * tp) / runs).toFixed(0)} %) | ${change('requestsPerSecond').toFixed(1)} % | ${change('cpuPerRequest').toFixed(1)} % |`,
  );
}
console.log(`wall time: ${((Date.now() - started) / 60000).toFixed(1)} min`);
if (values.out) writeFileSync(values.out, JSON.stringify({ settings, results }, null, 2));
