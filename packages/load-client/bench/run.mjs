// hotpath-load against its anchors, autocannon and wrk, on the same nginx in the same run.
// nginx: one worker pinned to core 0; each client pinned to core 1; 50 connections; same
// duration; several interleaved rounds; medians and ratios. Then HTTP/2 (h2c) against h2load on
// the same nginx with `http2`, then memcache mode vs memcaslap.
//
//   node bench/run.mjs [--duration 5] [--rounds 3] [--connections 50] [--streams 10]
//                      [--skip-http1] [--skip-http2] [--skip-memcache] [--tls]
// --tls: the HTTP/2 comparison over TLS (ALPN h2, the test certificate) instead of h2c.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', 'dist', 'cli.js');
const require = createRequire(import.meta.url);
const autocannonBin = join(dirname(require.resolve('autocannon/package.json')), 'autocannon.js');

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    streams: { type: 'string', default: '10' },
    tls: { type: 'boolean', default: false },
    'skip-http1': { type: 'boolean', default: false },
    'skip-http2': { type: 'boolean', default: false },
    'skip-memcache': { type: 'boolean', default: false },
  },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const streams = Number(values.streams);

const which = (name) =>
  ['/usr/bin', '/usr/sbin', '/usr/local/bin'].map((d) => join(d, name)).find(existsSync);
const nginxBin = which('nginx');
const wrkBin = which('wrk');
const tasksetBin = which('taskset');
const memcachedBin = which('memcached');
const memcaslapBin = which('memcaslap');
const h2loadBin = which('h2load');

function pinned(core, argv) {
  return tasksetBin ? [tasksetBin, ['-c', String(core), ...argv]] : [argv[0], argv.slice(1)];
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port) {
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listening on ${port}`);
}

const timeBin = which('time');
/**
 * Runs a client; resolves with its stdout and (when /usr/bin/time exists) its user+system CPU
 * seconds and its peak resident memory (MiB).
 */
async function measure(command, args) {
  if (!timeBin) return { out: await captureRaw(command, args), cpu: Number.NaN, rss: Number.NaN };
  const file = join(tmpdir(), `hotpath-load-bench-time-${process.pid}`);
  const out = await captureRaw(timeBin, ['-f', '%U %S %M', '-o', file, command, ...args]);
  let cpu = Number.NaN;
  let rss = Number.NaN;
  try {
    const [user, system, maxKb] = readFileSync(file, 'utf8').trim().split('\n').pop().split(' ').map(Number);
    cpu = user + system;
    rss = maxKb / 1024;
  } catch {}
  rmSync(file, { force: true });
  return { out, cpu, rss };
}

const capture = (command, args) => captureRaw(command, args);

function captureRaw(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} exited ${code}: ${err}`)),
    );
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function startNginx({ http2 = false, tls = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-load-bench-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests ${http2 ? 1000000000 : 1000000};
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port}${tls ? ' ssl' : ''}${http2 ? ' http2' : ''};
    ${tls ? `ssl_certificate ${join(here, '..', 'test', 'fixtures', 'tls-cert.pem')};\n    ssl_certificate_key ${join(here, '..', 'test', 'fixtures', 'tls-key.pem')};` : ''}
    ${http2 ? 'http2_max_concurrent_streams 128;' : ''}
    location / { return 200 "hello world\\n"; }
  }
}
`,
  );
  const [cmd, args] = pinned(0, [nginxBin, '-p', dir, '-c', join(dir, 'nginx.conf')]);
  const child = spawn(cmd, args, { stdio: 'ignore' });
  await waitForPort(port);
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}/`,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const clients = {
  'hotpath-load': async (url) => {
    const [cmd, args] = pinned(1, [
      process.execPath,
      cli,
      '-c',
      String(connections),
      '-d',
      String(duration),
      '--json',
      url,
    ]);
    const { out, cpu } = await measure(cmd, args);
    const result = JSON.parse(out);
    return { rps: result.requests.mean, p99: result.latency.p99, errors: result.errors, cpu };
  },
  autocannon: async (url) => {
    const [cmd, args] = pinned(1, [
      process.execPath,
      autocannonBin,
      '-c',
      String(connections),
      '-d',
      String(duration),
      '--json',
      url,
    ]);
    const { out, cpu } = await measure(cmd, args);
    const result = JSON.parse(out);
    return { rps: result.requests.total / duration, p99: result.latency.p99, errors: result.errors, cpu };
  },
  wrk: async (url) => {
    const [cmd, args] = pinned(1, [wrkBin, '-t1', `-c${connections}`, `-d${duration}s`, '--latency', url]);
    const { out, cpu } = await measure(cmd, args);
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
    const p99m = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
    const scale = { us: 0.001, ms: 1, s: 1000 };
    const p99 = p99m ? Number(p99m[1]) * scale[p99m[2]] : Number.NaN;
    return { rps, p99, errors: 0, cpu };
  },
};

async function httpBench() {
  if (!nginxBin) {
    console.log('nginx not found: skipping the HTTP comparison');
    return;
  }
  const nginx = await startNginx();
  const names = Object.keys(clients).filter((name) => name !== 'wrk' || wrkBin);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  console.log(
    `HTTP: nginx (1 worker, core 0) ← client (core 1), ${connections} connections, ${duration} s, ${rounds} rounds`,
  );
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const name of names) {
        const sample = await clients[name](nginx.url);
        // Client CPU per 1000 requests: the client's own cost, less sensitive to a busy server core.
        sample.cpuPerK = (sample.cpu * 1e6) / (sample.rps * duration);
        samples[name].push(sample);
        console.log(
          `  round ${round} ${name.padEnd(13)} ${sample.rps.toFixed(0).padStart(8)} req/s  p99 ${sample.p99.toFixed(2)} ms  errors ${sample.errors}  client CPU ${sample.cpuPerK.toFixed(1)} ms/1k req`,
        );
      }
    }
  } finally {
    await nginx.stop();
  }
  const med = Object.fromEntries(names.map((name) => [name, median(samples[name].map((s) => s.rps))]));
  const cpu = Object.fromEntries(names.map((name) => [name, median(samples[name].map((s) => s.cpuPerK))]));
  console.log('\nmedians           req/s   client CPU ms per 1k requests');
  for (const name of names)
    console.log(
      `  ${name.padEnd(13)} ${med[name].toFixed(0).padStart(8)}   ${cpu[name].toFixed(1).padStart(6)}`,
    );
  const ours = med['hotpath-load'];
  // Rounds are interleaved, so each round's ratio compares clients under similar machine load.
  const paired = (name) =>
    median(samples['hotpath-load'].map((sample, i) => sample.rps / samples[name][i].rps)).toFixed(2);
  console.log(
    `\nmedian of per-round ratios: vs autocannon ${paired('autocannon')}x` +
      (med.wrk ? `, vs wrk ${paired('wrk')}x` : ''),
  );
  console.log(
    `ratio of medians hotpath-load / autocannon: ${(ours / med.autocannon).toFixed(2)}x (goal >= 1.5x)`,
  );
  if (med.wrk)
    console.log(`ratio of medians hotpath-load / wrk:        ${(ours / med.wrk).toFixed(2)}x (goal >= 0.6x)`);
  console.log(
    `client CPU per request, autocannon / hotpath-load: ${(cpu.autocannon / cpu['hotpath-load']).toFixed(2)}x` +
      (cpu.wrk ? `, wrk / hotpath-load: ${(cpu.wrk / cpu['hotpath-load']).toFixed(2)}x` : ''),
  );
}

const h2clients = {
  'hotpath-load': async (url) => {
    const [cmd, args] = pinned(1, [
      process.execPath,
      cli,
      '--http2',
      '-c',
      String(connections),
      '-p',
      String(streams),
      '-d',
      String(duration),
      '--json',
      url,
    ]);
    const { out, cpu, rss } = await measure(cmd, args);
    const result = JSON.parse(out);
    return { rps: result.requests.mean, p99: result.latency.p99, errors: result.errors, cpu, rss };
  },
  h2load: async (url) => {
    // -D: for that many seconds; one thread (h2load's default), -m streams per connection.
    const [cmd, args] = pinned(1, [
      h2loadBin,
      '-c',
      String(connections),
      '-m',
      String(streams),
      '-D',
      String(duration),
      url,
    ]);
    const { out, cpu, rss } = await measure(cmd, args);
    const done = Number(/requests: \d+ total, \d+ started, (\d+) done/.exec(out)?.[1]);
    const seconds = Number(/finished in ([\d.]+)s/.exec(out)?.[1]);
    const failed = Number(/(\d+) failed/.exec(out)?.[1] ?? 0);
    const p99 = Number.NaN; // h2load prints no percentiles
    return { rps: done / seconds, p99, errors: failed, cpu, rss };
  },
};

async function http2Bench() {
  if (values['skip-http2']) return;
  if (!nginxBin || !h2loadBin) {
    console.log('\nnginx or h2load (nghttp2-client) not found: skipping the HTTP/2 comparison');
    return;
  }
  const tls = values.tls;
  const nginx = await startNginx({ http2: true, tls });
  const names = Object.keys(h2clients);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  console.log(
    `\nHTTP/2 (${tls ? 'TLS, ALPN h2' : 'h2c'}): nginx (1 worker, core 0) ← client (core 1), ${connections} connections × ${streams} streams, ${duration} s, ${rounds} rounds (alternating)`,
  );
  try {
    for (let round = 1; round <= rounds; round++) {
      // Alternate which client goes first, so neither always follows the other.
      const order = round % 2 === 1 ? names : [...names].reverse();
      for (const name of order) {
        const sample = await h2clients[name](nginx.url);
        sample.cpuPerK = (sample.cpu * 1e6) / (sample.rps * duration);
        samples[name].push(sample);
        console.log(
          `  round ${round} ${name.padEnd(13)} ${sample.rps.toFixed(0).padStart(8)} req/s  errors ${sample.errors}  client CPU ${sample.cpuPerK.toFixed(1)} ms/1k req  max RSS ${sample.rss.toFixed(0)} MiB`,
        );
      }
    }
  } finally {
    await nginx.stop();
  }
  const med = Object.fromEntries(names.map((name) => [name, median(samples[name].map((s) => s.rps))]));
  const cpu = Object.fromEntries(names.map((name) => [name, median(samples[name].map((s) => s.cpuPerK))]));
  console.log('\nmedians           req/s   client CPU ms per 1k requests');
  for (const name of names)
    console.log(
      `  ${name.padEnd(13)} ${med[name].toFixed(0).padStart(8)}   ${cpu[name].toFixed(1).padStart(6)}`,
    );
  const perRound = median(samples['hotpath-load'].map((sample, i) => sample.rps / samples.h2load[i].rps));
  console.log(`\nmedian of per-round ratios hotpath-load / h2load: ${perRound.toFixed(2)}x (goal >= 1.0x)`);
  console.log(
    `ratio of medians hotpath-load / h2load:          ${(med['hotpath-load'] / med.h2load).toFixed(2)}x`,
  );
  console.log(
    `client CPU per request, h2load / hotpath-load:   ${(cpu.h2load / cpu['hotpath-load']).toFixed(2)}x`,
  );
}

async function memcacheBench() {
  if (values['skip-memcache'] || !memcachedBin) return;
  const port = await freePort();
  const argv = [memcachedBin, '-l', '127.0.0.1', '-p', String(port), '-U', '0', '-t', '1', '-m', '64'];
  // memcached refuses to run as root without a user to switch to.
  if (process.getuid?.() === 0) argv.push('-u', 'nobody');
  const [cmd, args] = pinned(0, argv);
  const server = spawn(cmd, args, { stdio: 'ignore' });
  try {
    await waitForPort(port);
    const ours = [];
    const theirs = [];
    console.log(
      `\nmemcache: memcached (1 thread, core 0) ← client (core 1), 90% get / 10% set (memcaslap's default), 100-byte values, ${connections} connections`,
    );
    for (let round = 1; round <= rounds; round++) {
      try {
        const [c1, a1] = pinned(1, [
          process.execPath,
          cli,
          '-c',
          String(connections),
          '-d',
          String(duration),
          '--mc-op',
          'mix',
          '--mc-set-ratio',
          '0.1',
          '--mc-value-size',
          '100',
          '--mc-keys',
          '10000',
          '--json',
          `memcache://127.0.0.1:${port}`,
        ]);
        const result = JSON.parse(await capture(c1, a1));
        ours.push(result.requests.mean);
        console.log(`  round ${round} hotpath-load  ${result.requests.mean.toFixed(0).padStart(8)} ops/s`);
      } catch (error) {
        console.log(`  hotpath-load memcache mode failed: ${error.message.split('\n')[0]}`);
        break;
      }
      if (memcaslapBin) {
        const [c2, a2] = pinned(1, [
          memcaslapBin,
          '-s',
          `127.0.0.1:${port}`,
          '-T',
          '1',
          '-c',
          String(connections),
          '-t',
          `${duration}s`,
          '-X',
          '100',
        ]);
        const out = await capture(c2, a2).catch((e) => e.message);
        const tps = Number(/TPS:\s*(\d+)/.exec(out)?.[1]);
        theirs.push(tps);
        console.log(`  round ${round} memcaslap     ${String(tps).padStart(8)} ops/s`);
      }
    }
    if (ours.length && theirs.length) {
      console.log(
        `\nmedian ops/s: hotpath-load ${median(ours).toFixed(0)}, memcaslap ${median(theirs).toFixed(0)}, ratio ${(median(ours) / median(theirs)).toFixed(2)}x`,
      );
    }
  } finally {
    server.kill('SIGTERM');
  }
}

console.log(`machine: ${execFileSync('nproc').toString().trim()} cores (shared); node ${process.version}`);
if (!values['skip-http1']) await httpBench();
await http2Bench();
await memcacheBench();
