// Benchmarks of @hotpath/overload-guard against its anchors, in the same run:
//  1. overhead: hello-world node:http server, guarded vs unguarded (req/s, wrk), goal >= 0.97x;
//  2. overload: a route burning 10 ms of CPU under 100 keep-alive connections — no guard,
//     this guard (node:http and Fastify), overload-protection and @fastify/under-pressure:
//     p99 of ACCEPTED requests, goodput (2xx/s) and share shed.
// Server pinned to core 0 (taskset -c 0), load generator to core 1. Several runs, medians.
//   node bench/run.mjs [--runs 5] [--duration 3] [--skip-overhead] [--skip-overload]
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createMonitor } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    duration: { type: 'string', default: '3' },
    'skip-overhead': { type: 'boolean', default: false },
    'skip-overload': { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const duration = Number(values.duration);
if (!Number.isInteger(runs) || runs < 1 || !(duration > 0)) {
  console.error(
    `bench: invalid --runs ${values.runs} or --duration ${values.duration}: expected an integer >= 1 and seconds > 0`,
  );
  process.exit(2);
}

const serverScript = fileURLToPath(new URL('../test/servers/cpu-server.mjs', import.meta.url));
const loadScript = fileURLToPath(new URL('./http-load.mjs', import.meta.url));
const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return true;
  } catch {
    return false;
  }
})();
const pinned = (core, command, args) =>
  hasTaskset ? ['taskset', ['-c', String(core), command, ...args]] : [command, args];

async function startServer(args) {
  const [command, argv] = pinned(0, process.execPath, [serverScript, ...args]);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  const deadline = Date.now() + 10_000;
  while (!/listening on (\d+)/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`server ${args.join(' ')} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const port = Number(/listening on (\d+)/.exec(out)[1]);
  return {
    port,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    },
  };
}

async function run(command, args) {
  const [cmd, argv] = pinned(1, command, args);
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`${command} exited with ${code}`);
  return out;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (x, digits = 0) => x.toFixed(digits);

function snapshotCost() {
  const monitor = createMonitor({ sampleInterval: 0 });
  const n = 50_000;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) monitor.snapshot();
  const ns = Number(process.hrtime.bigint() - start) / n;
  monitor.close();
  return ns;
}

async function overhead() {
  console.log(`\n## Guard overhead, hello world (node:http), wrk -t1 -c50 -d${duration}s, ${runs} runs`);
  const variants = [
    ['unguarded', ['--framework', 'http', '--cpu', '0']],
    ['guarded', ['--framework', 'http', '--cpu', '0', '--guard']],
  ];
  const results = { unguarded: [], guarded: [] };
  for (let i = 0; i < runs; i++) {
    // alternate the order so drift on the machine falls on both sides
    const order = i % 2 === 0 ? variants : [...variants].reverse();
    for (const [name, args] of order) {
      const server = await startServer(args);
      try {
        await run('wrk', ['-t1', '-c50', '-d1s', `http://127.0.0.1:${server.port}/`]); // warm-up
        const out = await run('wrk', ['-t1', '-c50', `-d${duration}s`, `http://127.0.0.1:${server.port}/`]);
        const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]);
        const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
        if (non2xx > 0)
          console.log(`  note: ${name} run ${i + 1} shed ${non2xx} requests (machine contention?)`);
        results[name].push(rps);
      } finally {
        await server.stop();
      }
    }
  }
  const u = median(results.unguarded);
  const g = median(results.guarded);
  console.log('| variant | req/s (median) | runs |');
  console.log('|---|---:|---|');
  console.log(`| unguarded | ${fmt(u)} | ${results.unguarded.map((x) => fmt(x)).join(', ')} |`);
  console.log(`| guarded | ${fmt(g)} | ${results.guarded.map((x) => fmt(x)).join(', ')} |`);
  console.log(`ratio guarded/unguarded: ${fmt(g / u, 3)}x (goal >= 0.97x)`);
}

async function overload() {
  const load = Math.max(2, duration);
  const rounds = Math.max(1, Math.min(runs, 3));
  console.log(
    `\n## Overload: 10 ms CPU per request, 100 connections, ${load}s measured + 1s warm-up, ${rounds} rounds`,
  );
  const variants = [
    ['no guard (node:http)', ['--framework', 'http']],
    ['overload-guard (node:http)', ['--framework', 'http', '--guard']],
    ['overload-protection 50 ms (node:http)', ['--framework', 'overload-protection']],
    ['no guard (fastify)', ['--framework', 'fastify']],
    ['overload-guard (fastify)', ['--framework', 'fastify', '--guard']],
    ['under-pressure 50 ms (fastify)', ['--framework', 'under-pressure']],
  ];
  const results = new Map(variants.map(([name]) => [name, []]));
  for (let i = 0; i < rounds; i++) {
    for (const [name, args] of variants) {
      const server = await startServer(args);
      try {
        const out = await run(process.execPath, [
          loadScript,
          '--port',
          String(server.port),
          '--connections',
          '100',
          '--duration',
          String(load),
          '--warmup',
          '1',
          '--prime',
          '/ping',
        ]);
        results.get(name).push(JSON.parse(out));
      } finally {
        await server.stop();
      }
    }
  }
  const summary = new Map();
  for (const [name, list] of results) {
    summary.set(name, {
      p99: median(list.map((r) => r.accepted.p99)),
      p50: median(list.map((r) => r.accepted.p50)),
      goodput: median(list.map((r) => r.goodput)),
      shed: median(list.map((r) => r.shedRatio)),
      shedP99: median(list.map((r) => r.shed.p99)),
    });
  }
  const baseline = (name) =>
    summary.get(name.endsWith('(fastify)') ? 'no guard (fastify)' : 'no guard (node:http)');
  console.log(
    '| variant | accepted p50 ms | accepted p99 ms | p99 vs no guard | goodput 2xx/s | goodput vs no guard | shed % | 503 p99 ms |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const [name, s] of summary) {
    const base = baseline(name);
    console.log(
      `| ${name} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(s.p99 / base.p99, 2)}x | ${fmt(s.goodput, 1)} | ${fmt(s.goodput / base.goodput, 2)}x | ${fmt(s.shed * 100, 1)} | ${s.shed > 0 ? fmt(s.shedP99) : '-'} |`,
    );
  }
}

console.log(
  `# @hotpath/overload-guard bench — node ${process.version}, ${hasTaskset ? 'server on core 0, load on core 1' : 'no taskset: unpinned'}`,
);
console.log(`monitor.snapshot(): ${fmt(snapshotCost())} ns per call`);
if (!values['skip-overhead']) await overhead();
if (!values['skip-overload']) await overload();
