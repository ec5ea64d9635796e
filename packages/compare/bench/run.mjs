// hotpath's own bench: what the measurement costs, against the unmeasured server as anchor.
//
//   node bench/run.mjs            (about a minute)
//
// 1. Probe overhead: the same CPU-bound server measured with the probe dormant (profiler none:
//    only the event-loop monitor) and with the CPU profiler running, interleaved; ratios of
//    req/s against a run with no probe preloaded at all (the anchor).
// 2. Statistics: the paired interval's cost on recorded-size inputs.
// Detection rates (A/A false positives, A/B detection) are measured by bench/detection.mjs.
// The servers are pinned to core 0 and this process (the load generator) to core 1.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runLoad } from '../dist/measure/load.js';
import { probePath } from '../dist/measure/probe-path.js';
import { runRound } from '../dist/measure/round.js';
import { resolveSettings } from '../dist/settings/schema.js';
import { pairedDifference } from '../dist/verdict/statistics.js';

const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
if (hasTaskset && !process.env.HOTPATH_BENCH_PINNED) {
  const r = spawnSync('taskset', ['-c', '1', process.execPath, fileURLToPath(import.meta.url)], {
    stdio: 'inherit',
    env: { ...process.env, HOTPATH_BENCH_PINNED: '1' },
  });
  process.exit(r.status ?? 1);
}

const server = fileURLToPath(new URL('./work-server.cjs', import.meta.url));
const pin = hasTaskset ? 'taskset -c 0 ' : '';
const spec = {
  side: 'head',
  command: `WORK=300000 ${pin}node ${JSON.stringify(server)}`,
  cwd: process.cwd(),
};
const base = {
  duration: '2',
  warmup: '0.5',
  rounds: '1',
  connections: '8',
  readyTimeout: '20',
  start: 'x',
};
const context = { probePath: probePath(), env: process.env };

/** The anchor: the same server with nothing preloaded, loaded the same way. */
async function anchorRound() {
  const { spawn } = await import('node:child_process');
  const { freePort, waitForPort } = await helpers();
  const port = await freePort();
  const child = spawn('/bin/sh', ['-c', spec.command], {
    env: { ...process.env, PORT: String(port) },
    detached: true,
    stdio: 'ignore',
  });
  await waitForPort(port);
  await runLoad({
    url: `http://127.0.0.1:${port}/`,
    connections: 8,
    duration: 0.5,
    pipelining: 1,
    method: 'GET',
    headers: {},
  });
  const r = await runLoad({
    url: `http://127.0.0.1:${port}/`,
    connections: 8,
    duration: 2,
    pipelining: 1,
    method: 'GET',
    headers: {},
  });
  process.kill(-child.pid, 'SIGKILL');
  return r.requests.mean;
}

async function helpers() {
  const net = await import('node:net');
  return {
    freePort: () =>
      new Promise((resolve) => {
        const s = net.createServer().listen(0, '127.0.0.1', () => {
          const { port } = s.address();
          s.close(() => resolve(port));
        });
      }),
    waitForPort: async (port) => {
      for (let i = 0; i < 200; i++) {
        const ok = await new Promise((resolve) => {
          const c = net.connect(port, '127.0.0.1');
          c.once('connect', () => {
            c.destroy();
            resolve(true);
          });
          c.once('error', () => resolve(false));
        });
        if (ok) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('server did not start');
    },
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const samples = { anchor: [], none: [], cpuprofile: [] };
for (let i = 0; i < 3; i++) {
  samples.anchor.push(await anchorRound());
  for (const profiler of ['none', 'cpuprofile']) {
    const r = await runRound(spec, i + 1, resolveSettings({ overrides: { ...base, profiler } }), context);
    samples[profiler].push(r.scenarios[0].load.requests.mean);
  }
}
const a = median(samples.anchor);
console.log(
  `probe overhead (CPU-bound server, 8 connections, 3 × 2 s each, medians; taskset ${hasTaskset ? 'on' : 'off'})`,
);
console.log(`  no probe (anchor)          ${a.toFixed(0)} req/s   1.00`);
for (const p of ['none', 'cpuprofile']) {
  const m = median(samples[p]);
  console.log(`  probe, profiler ${p.padEnd(10)} ${m.toFixed(0)} req/s   ${(m / a).toFixed(2)}`);
}

const d = Array.from({ length: 300 }, (_, i) =>
  Math.log((980 + Math.cos(i) * 30) / (1000 + Math.sin(i) * 30)),
);
const n = 20_000;
const start = process.hrtime.bigint();
for (let i = 0; i < n; i++) pairedDifference(d, 0.005);
const us = Number(process.hrtime.bigint() - start) / n / 1e3;
console.log(`pairedDifference(300 pairs, alpha 0.005): ${us.toFixed(1)} µs per call`);
