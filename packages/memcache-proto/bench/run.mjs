// hotpath-memcached against memcached -t 1, in one run, rounds interleaved (server on core 0,
// load on core 1): memcaslap TPS (90 % get / 10 % set, 50 connections, after a 3 s warm-up) on a
// fresh server, pipelined and multi-get throughput with our client, memory per item (RSS growth
// with 500 000 items of 100 bytes), then memcaslap again once the server holds 800 000 items.
// Prints medians and ratios.
// Usage: node bench/run.mjs [--rounds 3] [--seconds 8] [--items 500000] [--full 800000]
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
const ROUNDS = opt('rounds', 3);
const SECONDS = opt('seconds', 8);
const ITEMS = opt('items', 500_000);
const FULL = opt('full', 800_000);
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const pin = (core, cmd) => (hasTaskset ? ['taskset', ['-c', String(core), ...cmd]] : [cmd[0], cmd.slice(1)]);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
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
    kind === 'memcached'
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

function memaslap(port, seconds = SECONDS) {
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
  if (!tps) throw new Error(`memcaslap gave no TPS: ${out.stdout}${out.stderr}`);
  return Number(tps[1]);
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

const results = {
  memcached: { tps: [], pipe: [], multi: [], mem: [], full: [] },
  hotpath: { tps: [], pipe: [], multi: [], mem: [], full: [] },
};
console.log(
  `bench: ${ROUNDS} rounds x ${SECONDS}s memcaslap per server, taskset ${hasTaskset ? 'on' : 'unavailable'}`,
);
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of round % 2 === 0 ? ['memcached', 'hotpath'] : ['hotpath', 'memcached']) {
      let server = await startServer(kind);
      try {
        const r = results[kind];
        memaslap(server.port, 3); // warm-up (JIT, memaslap's key window), not measured
        r.tps.push(memaslap(server.port));
        r.pipe.push(await pipelined(server.port));
        r.multi.push(await multiGet(server.port));
        // memory: a server restarted empty, so the number is the items' and not the runs' before
        await server.stop();
        server = await startServer(kind);
        r.mem.push(await memoryPerItem(server, ITEMS));
        await fill(server, ITEMS, FULL);
        memaslap(server.port, 3);
        r.full.push(memaslap(server.port));
        console.log(
          `round ${round + 1} ${kind.padEnd(9)} TPS ${r.tps.at(-1)} (holding ${FULL}: ${r.full.at(-1)})  pipelined ${r.pipe.at(-1).toFixed(0)} get/s  multi-get ${r.multi.at(-1).toFixed(0)} keys/s  ${r.mem.at(-1).toFixed(0)} B/item`,
        );
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const row = (name, key, unit, digits = 0) => {
  const m = median(results.memcached[key]);
  const h = median(results.hotpath[key]);
  console.log(
    `${name.padEnd(34)} memcached ${m.toFixed(digits).padStart(9)}  hotpath ${h.toFixed(digits).padStart(9)} ${unit.padEnd(7)} ratio ${(h / m).toFixed(2)}x`,
  );
};
console.log('\nmedians (hotpath / memcached):');
row('memcaslap 90% get, 50 conns (TPS)', 'tps', 'ops/s');
row(`memcaslap, server holding ${FULL} items`, 'full', 'ops/s');
row('pipelined get, 1 conn, depth 200', 'pipe', 'get/s');
row('multi-get, 100 keys per get', 'multi', 'keys/s');
row(`memory per 100-byte item (RSS, ${ITEMS})`, 'mem', 'bytes');
for (const key of ['tps', 'full']) {
  console.log(
    `${key} ratios per round: ${results.hotpath[key].map((h, i) => (h / results.memcached[key][i]).toFixed(2)).join(' ')}`,
  );
}
