// Detection bench, the yardstick of the verdict: through real git worktrees and the public API,
// how often does hotpath flag an A/A pull request (head = base + a comment line: a false alarm)
// and a head whose handler costs 11 % more CPU (about −10 % req/s: detection)?
//
//   node bench/detection.mjs [--runs N] [--shards 1,2,4] [--factor 1.11] [--rounds N|auto] [--duration S]
//                            [--change cpu|pbkdf2|leak|buffer|alloc|cache|stall|nplus1|serial|keepalive|cache-miss]
//                            [--rate N|N%] [--slo TEXT]
//                            [--store http|postgres|redis] [--neighbour off|unpinned|server-core]
//                            [--memory on|off] [--profiler auto|inspector|prof|none]
//                            [--only both|aa|ab] [--threshold PCT] [--via api|action [--node BIN]] [--out FILE]
//
// --out keeps every run's summary and its rounds (each round's metrics and other load), so an
// estimator can be re-run offline on measured data.
// --change pbkdf2 is the seed's story instead: base hashes with the async crypto.pbkdf2 (libuv's
// pool), head with pbkdf2Sync (the event loop). The memory stories, on a JSON route: leak (head
// keeps a ~300-byte record of every request in a module-level array), buffer (head keeps a
// 256-byte Buffer per request), alloc (head allocates about 30 % more per request, 2.8 KB, and
// keeps none of it), cache (head adds an LRU of 10 000 entries over 5 000 distinct keys: it fills and
// stops growing; nothing should be flagged). --change stall: head holds its event loop --stall-ms
// (20) every --stall-every ms (200) without spending CPU (Atomics.wait, as a synchronous read or a
// lock would), on base's CPU route; with --rate (e.g. 70%: of base's capacity) the scenario is an
// open model judged by its latency tail, and a latency table follows. --slo (e.g.
// 'p99<=50ms'): each round also searches each side's capacity at that SLO, and a capacity table
// follows (with --change cpu, the truth is 1/factor − 1: --factor 1.25 is −20 %). --neighbour runs a CPU hog during a random half of
// the rounds (decided per round, as a shared runner's neighbours come and go): unpinned, or on the
// server's core. The waiting stories, on a JSON route that calls a local HTTP service (a child
// process of the bench answering after 3 ms): nplus1 (base asks once for 10 items, head once per
// item), serial (base awaits 3 calls together, head one after another), keepalive (head's agent
// opens a new connection per call), cache-miss (base serves 95 % of requests from an in-process
// cache, head's cache never hits); a waiting table follows. --store postgres|redis tells nplus1 and
// serial on a real PostgreSQL (node-postgres) or Redis (ioredis) instead (bench/waiting-stores.mjs).
//
// Each run is a whole comparison as a user runs it: base and head checked out with git worktree
// from a temp repository, interleaved rounds at the default settings (unless overridden), the
// probe, paired statistics, the hot-function diff. With --shards k, k measurements of the same
// pair of commits are merged as the Action's report mode merges a matrix. "Flagged" means the
// run regressed or a function's growth was significant. Every run is at the product's settings
// (its defaults, or --placement auto|off and --connections N|auto as a user sets them);
// --bench-pinning gives the older bench-only setup. --via action runs each comparison through the
// bundled GitHub Action as GitHub runs it (bench/via-action.mjs; --node: the node that runs it,
// e.g. a Node 24 binary): its inputs at action.yml's defaults, a recording stand-in for the API.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { report as makeReport, measure, resolveSettings } from '../dist/index.js';
import { compareThroughAction } from './via-action.mjs';
import { STORE_CHANGES, STORES, startDownstream, waitingServer } from './waiting-stores.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    shards: { type: 'string', default: '1' },
    factor: { type: 'string', default: '1.11' },
    work: { type: 'string', default: '400000' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    'bench-pinning': { type: 'boolean', default: false },
    placement: { type: 'string' },
    out: { type: 'string' },
    pinned: { type: 'boolean', default: false },
    change: { type: 'string', default: 'cpu' },
    rate: { type: 'string' },
    slo: { type: 'string' },
    'stall-ms': { type: 'string', default: '20' },
    'stall-every': { type: 'string', default: '200' },
    neighbour: { type: 'string', default: 'off' },
    threshold: { type: 'string' },
    seed: { type: 'string', default: '1' },
    only: { type: 'string', default: 'both' },
    via: { type: 'string', default: 'api' },
    node: { type: 'string' },
    memory: { type: 'string' },
    profiler: { type: 'string' },
    store: { type: 'string', default: 'http' },
  },
});
if (!['api', 'action'].includes(values.via) || (values.via === 'action' && values.shards !== '1')) {
  console.error(`--via: expected api or action (with one shard), got ${JSON.stringify(values.via)}`);
  process.exit(2);
}
if (!['both', 'aa', 'ab'].includes(values.only)) {
  console.error(`--only: expected both, aa or ab, got ${JSON.stringify(values.only)}`);
  process.exit(2);
}
const MEMORY_CHANGES = ['leak', 'buffer', 'alloc', 'cache'];
const WAITING_CHANGES = ['nplus1', 'serial', 'keepalive', 'cache-miss'];
if (!['cpu', 'pbkdf2', 'stall', ...MEMORY_CHANGES, ...WAITING_CHANGES].includes(values.change)) {
  console.error(
    `--change: expected cpu, pbkdf2, leak, buffer, alloc, cache, stall, nplus1, serial, keepalive or cache-miss, got ${JSON.stringify(values.change)}`,
  );
  process.exit(2);
}
if (
  !STORES.includes(values.store) ||
  (values.store !== 'http' && !STORE_CHANGES[values.store].includes(values.change))
) {
  console.error(
    `--store: expected ${STORES.join(', ')} (postgres and redis with --change ${STORE_CHANGES.postgres.join(' or ')}), got ${JSON.stringify(values.store)} with --change ${values.change}`,
  );
  process.exit(2);
}
if (!['off', 'unpinned', 'server-core'].includes(values.neighbour)) {
  console.error(
    `--neighbour: expected off, unpinned or server-core, got ${JSON.stringify(values.neighbour)}`,
  );
  process.exit(2);
}

const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
// --bench-pinning: the setup earlier figures came from, which the product does not use — the
// servers on core 0 through their start command, this process (the load generator) on core 1,
// the product's own placement off and 4 connections. Without it, every run is at the product's
// settings, as a user gets them.
const benchPinning = values['bench-pinning'];
if (benchPinning && hasTaskset && !values.pinned && values.neighbour === 'off') {
  const r = spawnSync(
    'taskset',
    ['-c', '1', process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2), '--pinned'],
    {
      stdio: 'inherit',
    },
  );
  process.exit(r.status ?? 1);
}

const server = (
  work,
  stall,
) => `// each request burns ${work} iterations of CPU${stall ? `; the event loop is held ${stall.ms} ms every ${stall.every} ms without CPU` : ''}
const work = ${work};
${stall ? `const cell = new Int32Array(new SharedArrayBuffer(4));\nsetInterval(() => Atomics.wait(cell, 0, 0, ${stall.ms}), ${stall.every});\n` : ''}require('node:http').createServer((req, res) => {
  let x = 0;
  for (let i = 0; i < work; i++) x += Math.sqrt(i) * 1e-9;
  res.end(String(x));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

const hashServer = (
  sync,
) => `// each request hashes a password with PBKDF2 (${sync ? 'pbkdf2Sync: on the event loop' : "pbkdf2: on libuv's pool"})
const crypto = require('node:crypto');
require('node:http').createServer((req, res) => {
  ${sync ? "res.end(crypto.pbkdf2Sync('secret', 'salt', 10000, 32, 'sha256').toString('hex'));" : "crypto.pbkdf2('secret', 'salt', 10000, 32, 'sha256', (err, key) => res.end(key.toString('hex')));"}
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

// The memory stories' JSON route; `change` adds what head does on top of base.
const memoryServer = (change) => `// a JSON route${change ? `: head ${change}` : ''}
const requests = [];
const kept = [];
const cache = new Map();
let served = 0;
function rememberRequest(req) {
  // about 300 bytes a request: the record, and 32 numbers of it kept with it
  requests.push({ url: req.url, at: Date.now(), trace: new Array(32).fill(served) });
}
function keepBuffer() {
  kept.push(Buffer.alloc(256, served & 0xff));
}
function scratch(items) {
  // allocated and dropped: about 2.8 KB a request (30 % of the route's own), little CPU
  const copy = new Array(350).fill(items.length);
  return copy.length;
}
function cached(key) {
  let value = cache.get(key);
  if (value === undefined) {
    value = { key, text: 'entry '.repeat(8) + key };
    cache.set(key, value);
    if (cache.size > 10000) cache.delete(cache.keys().next().value);
  }
  return value.text.length;
}
require('node:http').createServer((req, res) => {
  served++;
  const items = Array.from({ length: 20 }, (_, i) => ({ i, s: 'item ' + i, even: i % 2 === 0 }));
  const body = { ok: true, served, items };
  ${change === 'leak' ? 'rememberRequest(req);' : ''}
  ${change === 'buffer' ? 'keepBuffer();' : ''}
  ${change === 'alloc' ? 'body.check = scratch(items);' : ''}
  ${change === 'cache' ? 'body.check = cached(served % 5000);' : ''}
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** An allocation table's first three rows: name, base → head bytes per request, interval. */
const tableHead = (diff) =>
  (diff?.rows ?? []).slice(0, 3).map((r) => ({ name: r.name, base: r.base, head: r.head, ci: r.ci }));

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
const memoryStory = MEMORY_CHANGES.includes(values.change);
const waitingStory = WAITING_CHANGES.includes(values.change);
const service = waitingStory ? await startDownstream(values.store) : undefined;
const baseText =
  values.change === 'pbkdf2'
    ? hashServer(false)
    : memoryStory
      ? memoryServer(undefined)
      : waitingStory
        ? waitingServer(service, values.change, false)
        : server(work);
const base = commit(baseText, 'base');
const aa = commit(`${baseText}// a comment: nothing else changed\n`, 'A/A head');
git('checkout', '-q', base);
const ab = commit(
  values.change === 'pbkdf2'
    ? hashServer(true)
    : memoryStory
      ? memoryServer(values.change)
      : waitingStory
        ? waitingServer(service, values.change, true)
        : values.change === 'stall'
          ? server(work, { ms: Number(values['stall-ms']), every: Number(values['stall-every']) })
          : server(Math.round(work * Number(values.factor))),
  'A/B head',
);

// The noisy neighbour: a CPU hog switched on for a random half of the rounds (a seeded choice
// per round, made when the round starts), unpinned or on the server's core.
let seed = Number(values.seed) >>> 0;
const random = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
let hog;
const hogOff = () => {
  hog?.kill('SIGKILL');
  hog = undefined;
};
const hogOn = () => {
  if (hog) return;
  const burn = ['-e', 'for (;;) Math.sqrt(Math.random());'];
  hog =
    values.neighbour === 'server-core' && hasTaskset
      ? spawn('taskset', ['-c', '0', process.execPath, ...burn], { stdio: 'ignore' })
      : spawn(process.execPath, burn, { stdio: 'ignore' });
};
let hogRounds = 0;
let allRounds = 0;
const onProgress = (event) => {
  if (values.neighbour === 'off') return;
  if (event.phase !== 'start') return;
  allRounds++;
  if (random() < 0.5) {
    hogRounds++;
    hogOn();
  } else hogOff();
};
process.once('exit', hogOff);

const overrides = {
  start: `${benchPinning && hasTaskset && values.neighbour === 'off' ? 'taskset -c 0 ' : ''}node server.cjs`,
  cwd: dir,
  install: 'none',
  ...(benchPinning ? { placement: 'off', connections: values.connections ?? '4' } : {}),
  ...(values.connections ? { connections: values.connections } : {}),
  ...(values.placement ? { placement: values.placement } : {}),
};
for (const key of ['rounds', 'duration', 'warmup', 'threshold', 'rate', 'slo', 'memory', 'profiler'])
  if (values[key]) overrides[key] = values[key];
if (values.change === 'pbkdf2' || memoryStory || waitingStory) overrides.url = '/';
const settings = resolveSettings({ overrides });

process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

// --via action: the whole comparison is the bundled Action's (mode all, its inputs at
// action.yml's defaults but for these), and the neighbour is decided every 7 s, as the Action
// reports no rounds to a caller.
async function throughAction(headSha) {
  const { cwd: _, ...inputs } = overrides;
  const timer =
    values.neighbour === 'off' ? undefined : setInterval(() => onProgress({ phase: 'start' }), 7000);
  try {
    const run = await compareThroughAction({
      dir,
      base,
      head: headSha,
      overrides: inputs,
      git,
      node: values.node,
    });
    // the sticky comment's verdict line, as the pull request shows it
    return {
      report: run.report,
      comment: run.comment?.split('\n').find((line) => /^\*\*|^#/.test(line.trim())),
    };
  } finally {
    clearInterval(timer);
  }
}

async function comparison(headSha, shards) {
  const measured = [];
  let viaAction;
  const startedAt = Date.now();
  try {
    if (values.via === 'action') viaAction = await throughAction(headSha);
    else
      for (let i = 1; i <= shards; i++) {
        measured.push(
          await measure(settings, {
            baseDir: dir,
            refs: { base: { sha: base }, head: { sha: headSha } },
            shard: { index: i, total: shards },
            onProgress,
          }),
        );
      }
  } finally {
    hogOff();
  }
  const report = viaAction?.report ?? makeReport(measured);
  const s = report.scenarios[0];
  const functions = (s.hotFunctions?.flagged ?? []).filter((f) => f.reason === 'grew' && f.significant);
  const flagged = report.regressed || functions.length > 0;
  return {
    flagged,
    // the verdict metrics that regressed (memory stories: which one caught it)
    regressedBy: s.metrics.filter((m) => m.inVerdict && m.outcome === 'regressed').map((m) => m.metric),
    outcome: report.outcome,
    regressed: report.regressed,
    ...(viaAction?.comment ? { comment: viaAction.comment } : {}),
    seconds: (Date.now() - startedAt) / 1000,
    pairs: s.pairs,
    stop: report.stop.map((x) => x.reason),
    connections: report.settings.scenarios[0]?.connections,
    loadLevels: report.environment.loadLevels,
    rateLevels: report.environment.rateLevels,
    placement: report.environment.placement,
    functions: functions.map((f) => f.name),
    // The allocation tables' first rows (the memory stories: is the function that allocates, or
    // that keeps, what head adds named?)
    allocations: tableHead(s.allocations),
    survivors: tableHead(s.survivors),
    // The waiting stories: the endpoint and the function named first, and "awaited in series"
    waiting: s.downstream
      ? {
          endpoint: s.downstream.endpoints[0]?.endpoint,
          calls: s.downstream.endpoints[0] && [
            s.downstream.endpoints[0].base.calls,
            s.downstream.endpoints[0].head.calls,
          ],
          connections: s.downstream.endpoints[0] && [
            s.downstream.endpoints[0].base.connections,
            s.downstream.endpoints[0].head.connections,
          ],
          function: s.downstream.functions[0]?.name,
          inSeries: s.downstream.inSeries?.name,
        }
      : undefined,
    // Every shown function's cost per request (µs) and the interval of its change: to decide
    // from measurements whether a cost growth should regress a scenario by default.
    functionCosts: (s.hotFunctions?.rows ?? []).map(({ name, baseCost, headCost, costCi }) => ({
      name,
      baseCost,
      headCost,
      costCi,
    })),
    rounds: s.rounds.map(({ side, round, shard, profilers: _, ...metrics }) => ({
      side,
      round,
      shard,
      ...metrics,
    })),
    metrics: Object.fromEntries(
      s.metrics.map((m) => [
        m.metric,
        { change: m.change, ci: m.ci, outcome: m.outcome, detectable: m.detectable, excluded: m.excluded },
      ]),
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
      if (values.only !== 'ab') results[shards].aa.push(await comparison(aa, shards));
      if (values.only !== 'aa') results[shards].ab.push(await comparison(ab, shards));
      process.stderr.write(
        `shards ${shards}: run ${i + 1}/${runs} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
      );
    }
  }
} finally {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const story =
  values.change === 'pbkdf2'
    ? 'head pbkdf2Sync vs base pbkdf2'
    : memoryStory
      ? `memory: head ${values.change}`
      : waitingStory
        ? `waiting on ${values.store === 'http' ? 'a local HTTP service' : values.store}: head ${values.change}`
        : values.change === 'stall'
          ? `head holds its event loop ${values['stall-ms']} ms every ${values['stall-every']} ms`
          : `head ×${values.factor} CPU per request`;
console.log(
  `hotpath detection bench${values.via === 'action' ? ' through the Action (mode all, action.yml defaults)' : ''}: ${values.only === 'ab' ? 0 : runs} A/A and ${values.only === 'aa' ? 0 : runs} A/B runs per shard count, threshold ${settings.threshold} %, rounds ${settings.rounds}${settings.rounds === 'auto' ? ` (max-time ${settings.maxTime} s)` : ''} × ${settings.duration} s (+${settings.warmup} s warm-up) per side and shard, ${story}, neighbour ${values.neighbour}${values.neighbour === 'off' ? '' : ` (on in ${hogRounds} of ${allRounds} rounds)`}, ${benchPinning ? `--bench-pinning (servers taskset -c 0, load generator on core 1, ${settings.scenarios[0]?.connections} connections, product placement off)` : `connections ${settings.scenarios[0]?.connections}, placement ${settings.placement}`}`,
);
console.log(
  '| shards | A/A flagged (false alarms) | A/A outcomes | A/B flagged (detected) | A/B outcomes | A/B req/s (median) | A/B event-loop CPU/req (median) | detectable req/s, A/A (median) | detectable CPU/req, A/A (median) | connections used | pairs (median) | s per comparison (median) | s per A/A (median) |',
);
console.log('|---:|---:|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|');
const outcomes = (list) => {
  const count = {};
  for (const r of list) count[r.outcome] = (count[r.outcome] ?? 0) + 1;
  return Object.entries(count)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
};
const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
for (const shards of shardCounts) {
  const { aa: a, ab: b } = results[shards];
  const fp = a.filter((r) => r.flagged).length;
  const tp = b.filter((r) => r.flagged).length;
  const of = (list) => list.length;
  const change = (metric) => median(b.map((r) => r.metrics[metric]?.change ?? Number.NaN));
  const detectable = (metric) => median(a.map((r) => r.metrics[metric]?.detectable ?? Number.NaN));
  const all = [...a, ...b];
  const used = [...new Set(all.map((r) => r.connections))].join(', ');
  console.log(
    `| ${shards} | ${fp}/${of(a)} | ${outcomes(a)} | ${tp}/${of(b)} | ${outcomes(b)} | ${pct(change('requestsPerSecond'))} | ${pct(change('mainThreadCpuPerRequest'))} | ±${(detectable('requestsPerSecond') * 100).toFixed(1)} % | ±${(detectable('cpuPerRequest') * 100).toFixed(1)} % | ${used} | ${median(all.map((r) => r.pairs))} | ${median(all.map((r) => r.seconds)).toFixed(0)} | ${a.length ? median(a.map((r) => r.seconds)).toFixed(0) : '—'} |`,
  );
}
// The memory metrics of every run: what each shows A/A and A/B, and which metric regressed.
console.log(
  '\n| shards | runs | regressed by (A/B runs) | retained B/req, A/B change (median) | retained outcomes A/A · A/B | allocated, A/B change (median) | allocated outcomes A/A · A/B | GC time, A/B change (median) | detectable retained, A/A (median) | detectable allocated, A/A (median) |',
);
console.log('|---:|---:|---|---:|---|---:|---|---:|---:|---:|');
const metricOutcomes = (list, metric) =>
  outcomes(list.map((r) => ({ outcome: r.metrics[metric]?.outcome ?? 'absent' })));
for (const shards of shardCounts) {
  const { aa: a, ab: b } = results[shards];
  const by = {};
  for (const r of b) for (const m of r.regressedBy) by[m] = (by[m] ?? 0) + 1;
  const med = (list, metric, key) => median(list.map((r) => r.metrics[metric]?.[key] ?? Number.NaN));
  console.log(
    `| ${shards} | ${a.length} A/A, ${b.length} A/B | ${
      Object.entries(by)
        .map(([m, n]) => `${m} ${n}`)
        .join(', ') || '—'
    } | ${med(b, 'retainedBytesPerRequest', 'change')?.toFixed(1)} B | ${metricOutcomes(a, 'retainedBytesPerRequest')} · ${metricOutcomes(b, 'retainedBytesPerRequest')} | ${pct(med(b, 'allocatedBytesPerRequest', 'change'))} | ${metricOutcomes(a, 'allocatedBytesPerRequest')} · ${metricOutcomes(b, 'allocatedBytesPerRequest')} | ${pct(med(b, 'gcTimePerRequest', 'change'))} | ${a.length ? `±${med(a, 'retainedBytesPerRequest', 'detectable')?.toFixed(1)} B` : '—'} | ${a.length ? `±${(med(a, 'allocatedBytesPerRequest', 'detectable') * 100).toFixed(1)} %` : '—'} |`,
  );
}
// Latency at a rate: the rate each run held (a share of base's capacity, measured per run), and
// what p90 and p99 showed A/A and A/B.
if (values.rate) {
  console.log(
    '\n| shards | rate held, req/s (median; range) | base capacity, req/s (median) | base p99 (median) | p99 outcomes A/A · A/B | p99, A/B change (median) | p90 outcomes A/A · A/B | p90, A/B change (median) | detectable p99, A/A (median) |',
  );
  console.log('|---:|---|---:|---:|---|---:|---|---:|---:|');
  for (const shards of shardCounts) {
    const { aa: a, ab: b } = results[shards];
    const all = [...a, ...b];
    const held = all.map((r) => r.rateLevels?.[0]?.rate ?? r.rounds[0]?.requestsPerSecond ?? Number.NaN);
    const capacity = all.map((r) => r.rateLevels?.[0]?.capacity ?? Number.NaN);
    const baseP99 = all.map((r) => median(r.rounds.filter((x) => x.side === 'base').map((x) => x.p99)));
    const med = (list, metric, key) => median(list.map((r) => r.metrics[metric]?.[key] ?? Number.NaN));
    console.log(
      `| ${shards} | ${Math.round(median(held))} (${Math.round(Math.min(...held))}–${Math.round(Math.max(...held))}) | ${Math.round(median(capacity))} | ${median(baseP99)?.toFixed(2)} ms | ${metricOutcomes(a, 'p99')} · ${metricOutcomes(b, 'p99')} | ${b.length ? pct(med(b, 'p99', 'change')) : '—'} | ${metricOutcomes(a, 'p90')} · ${metricOutcomes(b, 'p90')} | ${b.length ? pct(med(b, 'p90', 'change')) : '—'} | ${a.length ? `±${(med(a, 'p99', 'detectable') * 100).toFixed(1)} %` : '—'} |`,
    );
  }
}
// The waiting metrics of every run (the waiting stories): outcomes A/A and A/B, what was named.
if (waitingStory) {
  console.log(
    '\n| shards | calls/req outcomes A/A · A/B | calls/req base → head (A/B median) | waiting/req outcomes A/A · A/B | waiting/req, A/B change (median) | new conn/req base → head (A/B median) | endpoint named first (A/B) | function named first (A/B) | "awaited in series" (A/B) |',
  );
  console.log('|---:|---|---|---|---:|---|---|---|---|');
  for (const shards of shardCounts) {
    const { aa: a, ab: b } = results[shards];
    const count = (list, pick) => {
      const seen = {};
      for (const r of list) {
        const v = pick(r) ?? 'none';
        seen[v] = (seen[v] ?? 0) + 1;
      }
      return (
        Object.entries(seen)
          .map(([k, v]) => `${k} ${v}/${list.length}`)
          .join(', ') || '—'
      );
    };
    const pair = (pick) => {
      const values = b.map(pick).filter(Boolean);
      return values.length
        ? `${median(values.map((x) => x[0])).toFixed(2)} → ${median(values.map((x) => x[1])).toFixed(2)}`
        : '—';
    };
    const waitingChange = median(b.map((r) => r.metrics.waitingPerRequest?.change ?? Number.NaN));
    console.log(
      `| ${shards} | ${metricOutcomes(a, 'downstreamCallsPerRequest')} · ${metricOutcomes(b, 'downstreamCallsPerRequest')} | ${pair((r) => r.waiting?.calls)} | ${metricOutcomes(a, 'waitingPerRequest')} · ${metricOutcomes(b, 'waitingPerRequest')} | ${b.length ? pct(waitingChange) : '—'} | ${pair((r) => r.waiting?.connections)} | ${count(b, (r) => r.waiting?.endpoint)} | ${count(b, (r) => r.waiting?.function)} | ${count(b, (r) => r.waiting?.inSeries)} |`,
    );
  }
}

// Capacity at the SLO: what each run's paired capacity showed, against the truth for --change cpu.
if (values.slo) {
  const truth = values.change === 'cpu' ? 1 / Number(values.factor) - 1 : undefined;
  console.log(
    `\n| shards | SLO | capacity outcomes A/A · A/B | A/B change (median; range) | A/B within ±5 points of ${truth === undefined ? 'the truth' : pct(truth)} | A/B interval covers it | base capacity, req/s (median) | detectable, A/A (median) | s per comparison (median) |`,
  );
  console.log('|---:|---|---|---|---:|---:|---:|---:|---:|');
  for (const shards of shardCounts) {
    const { aa: a, ab: b } = results[shards];
    const changes = b.map((r) => r.metrics.capacity?.change ?? Number.NaN);
    const within =
      truth === undefined ? '—' : `${changes.filter((c) => Math.abs(c - truth) <= 0.05).length}/${b.length}`;
    const covers =
      truth === undefined
        ? '—'
        : `${b.filter((r) => r.metrics.capacity?.ci && r.metrics.capacity.ci[0] <= truth && truth <= r.metrics.capacity.ci[1]).length}/${b.length}`;
    const baseCapacity = [...a, ...b].map((r) =>
      median(r.rounds.filter((x) => x.side === 'base').map((x) => x.capacity)),
    );
    const detectable = median(a.map((r) => r.metrics.capacity?.detectable ?? Number.NaN));
    console.log(
      `| ${shards} | ${settings.scenarios[0]?.slo} | ${metricOutcomes(a, 'capacity')} · ${metricOutcomes(b, 'capacity')} | ${b.length ? `${pct(median(changes))} (${pct(Math.min(...changes))} to ${pct(Math.max(...changes))})` : '—'} | ${within} | ${covers} | ${Math.round(median(baseCapacity))} | ${a.length ? `±${(detectable * 100).toFixed(1)} %` : '—'} | ${median([...a, ...b].map((r) => r.seconds)).toFixed(0)} |`,
    );
  }
}
console.log(`wall time: ${((Date.now() - started) / 60000).toFixed(1)} min`);
if (values.out) writeFileSync(values.out, JSON.stringify({ settings, results }, null, 2));
