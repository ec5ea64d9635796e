// hotpath-memcached against memcached -t 1 in one run (servers on core 0, load on core 1), in
// strictly alternating pairs so that both sides of a ratio see the same moment of a shared
// machine:
// - fresh: each pair starts both servers anew (the order alternates: AB, BA, AB, ...), warms
//   each up with memcaslap, then measures memcaslap TPS (90 % get / 10 % set, 50 connections);
// - full: both servers are started once and preloaded identically (500 000 items of 100 bytes,
//   RSS growth per item measured on the way, then up to 800 000), then memcaslap runs alternate
//   between them, pair by pair;
// - pipelined and multi-get throughput with our client, a few pairs on fresh servers.
// For each measure it prints the median of the per-pair ratios (what the goal is judged on),
// their spread, the ratio of the medians, and memcached's own variation between runs. Beside
// each memcaslap TPS it records the server's CPU time per operation (user + system, from /proc):
// other load on a shared machine moves TPS a lot (a server that waits for its core is slower
// but uses no CPU meanwhile) and CPU per operation far less, so its pair ratio says more
// steadily which server does more work per request.
// Usage: node bench/run.mjs [--pairs 9] [--seconds 4] [--warmup 2] [--client-pairs 3]
//                           [--items 500000] [--full 800000] [--anchor-cli <other build's dist/cli.js>]
// --anchor-cli replaces memcached with another build of hotpath-memcached (the rows still say
// "memcached"): an A/B of two builds, paired the same way.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '../dist/index.js';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const PAIRS = opt('pairs', 9);
const SECONDS = opt('seconds', 4);
const WARMUP = opt('warmup', 2);
const CLIENT_PAIRS = opt('client-pairs', 3);
const ITEMS = opt('items', 500_000);
const FULL = opt('full', 800_000);
const anchorArg = args.indexOf('--anchor-cli');
const ANCHOR_CLI = anchorArg === -1 ? undefined : args[anchorArg + 1];
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const pin = (core, cmd) => (hasTaskset ? ['taskset', ['-c', String(core), ...cmd]] : [cmd[0], cmd.slice(1)]);
/** Quantile q of xs (linear between order statistics). */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (at - lo);
};
const median = (xs) => quantile(xs, 0.5);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitPort(port) {
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`server on ${port} did not start`);
}

async function startServer(kind) {
  const port = await freePort();
  const cmd =
    kind === 'memcached' && ANCHOR_CLI !== undefined
      ? [process.execPath, ANCHOR_CLI, '-p', String(port), '-m', '1024', '-c', '4096']
      : kind === 'memcached'
        ? [
            '/usr/bin/memcached',
            '-t',
            '1',
            '-p',
            String(port),
            '-l',
            '127.0.0.1',
            '-U',
            '0',
            '-m',
            '1024',
            '-c',
            '4096',
            ...(process.getuid?.() === 0 ? ['-u', 'root'] : []),
          ]
        : [process.execPath, cli, '-p', String(port), '-m', '1024', '-c', '4096'];
  const [file, argv] = pin(0, cmd);
  const child = spawn(file, argv, { stdio: 'ignore' });
  await waitPort(port);
  return {
    port,
    pid: child.pid,
    stop: () =>
      new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGKILL');
      }),
  };
}

function rssKb(pid) {
  // taskset execs the server, so the pid is the server's
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
}

const dir = mkdtempSync(join(tmpdir(), 'hotpath-mc-bench-'));
const cfg = join(dir, 'memaslap.cfg');
writeFileSync(cfg, 'key\n64 64 1\nvalue\n1024 1024 1\ncmd\n0 0.1\n1 0.9\n');

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/**
 * One measured memcaslap run against server: its TPS, and the server's CPU time per operation
 * in microseconds (what the server spends per request, which other load on the machine moves
 * far less than TPS: a server that waits for a busy core uses no CPU meanwhile).
 */
function measure(server) {
  const before = cpuSeconds(server.pid);
  const { tps, ops } = memaslapRun(server.port, SECONDS);
  return { tps, usPerOp: ((cpuSeconds(server.pid) - before) * 1e6) / ops };
}

function memaslap(port, seconds = SECONDS) {
  return memaslapRun(port, seconds).tps;
}

function memaslapRun(port, seconds) {
  const [file, argv] = pin(1, [
    'memcaslap',
    '-s',
    `127.0.0.1:${port}`,
    '-T',
    '1',
    '-c',
    '50',
    '-t',
    `${seconds}s`,
    '-F',
    cfg,
  ]);
  const out = spawnSync(file, argv, { encoding: 'utf8', timeout: (seconds + 30) * 1000 });
  const tps = /TPS:\s+(\d+)/.exec(out.stdout ?? '');
  const ops = /Ops:\s+(\d+)/.exec(out.stdout ?? '');
  if (!tps || !ops) throw new Error(`memcaslap gave no TPS: ${out.stdout}${out.stderr}`);
  return { tps: Number(tps[1]), ops: Number(ops[1]) };
}

async function pipelined(port, total = 100_000, depth = 200) {
  const client = createClient({ servers: [`127.0.0.1:${port}`], timeout: 30_000 });
  const value = Buffer.alloc(100, 'v');
  await client.set('pipe:0', value);
  const start = process.hrtime.bigint();
  let sent = 0;
  const worker = async () => {
    while (sent < total) {
      sent++;
      await client.get(`pipe:${sent % 1000}`);
    }
  };
  await Promise.all(Array.from({ length: depth }, worker));
  const s = Number(process.hrtime.bigint() - start) / 1e9;
  client.close();
  return total / s;
}

async function multiGet(port, rounds = 2000, keysPerGet = 100) {
  const client = createClient({ servers: [`127.0.0.1:${port}`], timeout: 30_000 });
  const keys = Array.from({ length: keysPerGet }, (_, i) => `multi:${i}`);
  await Promise.all(keys.map((k) => client.set(k, Buffer.alloc(100, 'm'))));
  const start = process.hrtime.bigint();
  const inFlight = 20;
  let done = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (done < rounds) {
        done++;
        const got = await client.getMulti(keys);
        if (got.size !== keysPerGet) throw new Error('multi-get lost keys');
      }
    }),
  );
  const s = Number(process.hrtime.bigint() - start) / 1e9;
  client.close();
  return (rounds * keysPerGet) / s;
}

/** Stores items mem:<from>..mem:<to - 1> of 100 bytes. */
async function fill(server, from, to) {
  const client = createClient({ servers: [`127.0.0.1:${server.port}`], timeout: 30_000 });
  const value = Buffer.alloc(100, 'x');
  for (let i = from; i < to; i += 1000) {
    await Promise.all(
      Array.from({ length: Math.min(1000, to - i) }, (_, j) => client.set(`mem:${i + j}`, value)),
    );
  }
  client.close();
}

async function memoryPerItem(server, items) {
  const before = rssKb(server.pid);
  await fill(server, 0, items);
  await sleep(200);
  return ((rssKb(server.pid) - before) * 1024) / items;
}

const KINDS = ['memcached', 'hotpath'];
/** Pair i runs memcached first when i is even, hotpath first when odd. */
const order = (i) => (i % 2 === 0 ? KINDS : [...KINDS].reverse());
const results = {
  memcached: { tps: [], full: [], cpu: [], fullCpu: [], pipe: [], multi: [], mem: [] },
  hotpath: { tps: [], full: [], cpu: [], fullCpu: [], pipe: [], multi: [], mem: [] },
};
const fmt = (x) => Math.round(x).toString().padStart(7);
console.log(
  `bench: ${PAIRS} pairs x ${SECONDS}s memcaslap (after ${WARMUP}s warm-up), servers on core 0, load on core 1 (taskset ${hasTaskset ? 'on' : 'unavailable'})`,
);
const started = new Set();
async function start(kind) {
  const server = await startServer(kind);
  started.add(server);
  return server;
}
async function stop(server) {
  started.delete(server);
  await server.stop();
}
try {
  // fresh servers: each pair starts both anew
  for (let i = 0; i < PAIRS; i++) {
    const line = [];
    for (const kind of order(i)) {
      const server = await start(kind);
      try {
        memaslap(server.port, WARMUP); // JIT, memcaslap's key window: not measured
        const m = measure(server);
        results[kind].tps.push(m.tps);
        results[kind].cpu.push(m.usPerOp);
        line.push(`${kind} ${fmt(m.tps)} (${m.usPerOp.toFixed(2)} us/op)`);
      } finally {
        await stop(server);
      }
    }
    const ratio = results.hotpath.tps[i] / results.memcached.tps[i];
    console.log(`fresh pair ${String(i + 1).padStart(2)}: ${line.join('  ')}  ratio ${ratio.toFixed(2)}`);
  }

  // client-driven measures, a few pairs on fresh servers
  for (let i = 0; i < CLIENT_PAIRS; i++) {
    for (const kind of order(i)) {
      const server = await start(kind);
      try {
        results[kind].pipe.push(await pipelined(server.port));
        results[kind].multi.push(await multiGet(server.port));
      } finally {
        await stop(server);
      }
    }
  }

  // full servers: both preloaded the same way, then alternating memcaslap runs
  const full = {};
  for (const kind of KINDS) {
    full[kind] = await start(kind);
    results[kind].mem.push(await memoryPerItem(full[kind], ITEMS));
    await fill(full[kind], ITEMS, FULL);
    memaslap(full[kind].port, WARMUP);
  }
  for (let i = 0; i < PAIRS; i++) {
    const line = [];
    for (const kind of order(i)) {
      const m = measure(full[kind]);
      results[kind].full.push(m.tps);
      results[kind].fullCpu.push(m.usPerOp);
      line.push(`${kind} ${fmt(m.tps)} (${m.usPerOp.toFixed(2)} us/op)`);
    }
    const ratio = results.hotpath.full[i] / results.memcached.full[i];
    console.log(`full  pair ${String(i + 1).padStart(2)}: ${line.join('  ')}  ratio ${ratio.toFixed(2)}`);
  }
} finally {
  for (const server of started) await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

const ratios = (key) => results.hotpath[key].map((h, i) => h / results.memcached[key][i]);
const spread = (xs) =>
  `min ${Math.round(Math.min(...xs))}, max ${Math.round(Math.max(...xs))} (max/min ${(Math.max(...xs) / Math.min(...xs)).toFixed(2)})`;
const row = (name, key, unit, digits = 0) => {
  const m = median(results.memcached[key]);
  const h = median(results.hotpath[key]);
  const r = ratios(key);
  console.log(
    `${name.padEnd(40)} memcached ${m.toFixed(digits).padStart(8)}  hotpath ${h.toFixed(digits).padStart(8)} ${unit.padEnd(6)}` +
      ` median pair ratio ${median(r).toFixed(2)}x (quartiles ${quantile(r, 0.25).toFixed(2)}-${quantile(r, 0.75).toFixed(2)}, n=${r.length}); ratio of medians ${(h / m).toFixed(2)}x`,
  );
};
console.log('\nmedians (hotpath / memcached):');
row('memcaslap 90% get, 50 conns, fresh', 'tps', 'ops/s');
row(`memcaslap, servers holding ${FULL} items`, 'full', 'ops/s');
row('pipelined get, 1 conn, depth 200', 'pipe', 'get/s');
row('multi-get, 100 keys per get', 'multi', 'keys/s');
row('server CPU per op, fresh', 'cpu', 'us', 2);
row(`server CPU per op, holding ${FULL} items`, 'fullCpu', 'us', 2);
row(`memory per 100-byte item (RSS, ${ITEMS})`, 'mem', 'bytes');
for (const key of ['tps', 'full']) {
  console.log(
    `${key} pair ratios: ${ratios(key)
      .map((r) => r.toFixed(2))
      .join(' ')}`,
  );
  console.log(`${key} memcached TPS (the anchor's own variation): ${spread(results.memcached[key])}`);
  console.log(`${key} hotpath TPS: ${spread(results.hotpath[key])}`);
}
