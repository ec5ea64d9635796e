// What the probe's record of downstream calls costs: CPU per request of a server with the probe
// (dist/probe.cjs, no CPU profiler, memory off) and HOTPATH_PROBE_WAITING on vs off.
//
//   node bench/waiting-cost.mjs [--route none|call] [--pairs 8] [--window 2] [--on on|calls]
//
// --on calls: the record without the requests' contexts (HOTPATH_PROBE_WAITING=calls) against off.
// --route none: a small JSON route that calls nothing (the recorder is installed and counts the
// requests; no request context, no stack); --route call: the same route after one call to a local
// HTTP service kept alive (every call recorded: the socket's state machine, the stack at the
// call, the request's async context). Each pair is two fresh server processes, on and off, in
// alternating order, each warmed for a second and then measured over a window of --window seconds
// (the probe's own CPU time of the window, over the responses the load counted). Process to
// process, CPU per request varies by a few percent with how V8 compiled that process: read the
// median ratio and its interval, not one pair. Pinned: server to core 0, this process to core 1.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { run } from '@hotpath/load-client';
import { ProbeControl } from '../dist/measure/probe-control.js';
import { probePath } from '../dist/measure/probe-path.js';

const { values } = parseArgs({
  options: {
    route: { type: 'string', default: 'none' },
    pairs: { type: 'string', default: '8' },
    window: { type: 'string', default: '2' },
    connections: { type: 'string', default: '8' },
    on: { type: 'string', default: 'on' },
  },
});
const pairs = Number(values.pairs);
const seconds = Number(values.window);
if (
  !['none', 'call'].includes(values.route) ||
  !['on', 'calls'].includes(values.on) ||
  !(pairs >= 1) ||
  !(seconds > 0)
) {
  console.error(
    `waiting-cost: --route none|call, --on on|calls, --pairs ≥ 1, --window > 0 seconds; got ${JSON.stringify(values)}`,
  );
  process.exit(2);
}
const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
if (hasTaskset && !process.env.HOTPATH_BENCH_PINNED) {
  const r = spawnSync(
    'taskset',
    ['-c', '1', process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
      env: { ...process.env, HOTPATH_BENCH_PINNED: '1' },
    },
  );
  process.exit(r.status ?? 1);
}

const service = createServer((_req, res) => res.end('ok'));
await new Promise((resolve) => service.listen(0, '127.0.0.1', resolve));
const serviceUrl = `http://127.0.0.1:${service.address().port}/`;
const server = fileURLToPath(new URL('./waiting-cost-server.cjs', import.meta.url));

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** One fresh server process: CPU µs per request over a window, with the waiting record on or off. */
async function measureOnce(waiting) {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-waiting-cost-'));
  const control = await ProbeControl.open();
  const port = await freePort();
  const command = hasTaskset ? 'taskset' : process.execPath;
  const args = hasTaskset ? ['-c', '0', process.execPath, server] : [server];
  const child = spawn(command, args, {
    stdio: 'ignore',
    env: {
      ...process.env,
      PORT: String(port),
      SERVICE_URL: serviceUrl,
      NODE_OPTIONS: `--require ${probePath()}`,
      HOTPATH_PROBE_CONTROL: control.address,
      HOTPATH_PROBE_DIR: dir,
      HOTPATH_PROBE_PROFILER: 'none',
      HOTPATH_PROBE_MEMORY: 'off',
      HOTPATH_PROBE_WAITING: waiting ? values.on : 'off',
    },
  });
  try {
    if (!(await control.waitForProbe(15_000))) throw new Error('the server did not start');
    const url = `http://127.0.0.1:${port}/${values.route}`;
    const connections = Number(values.connections);
    await run({ url, connections, duration: 1 });
    await control.start(1);
    const load = await run({ url, connections, duration: seconds });
    const [report] = await control.stop();
    const monitor = JSON.parse(readFileSync(report.files.monitor, 'utf8'));
    const requests = load.requests.total;
    return {
      cpu: (monitor.cpuUserMicros + monitor.cpuSystemMicros) / requests,
      requests,
      calls: monitor.downstream?.endpoints.reduce((n, e) => n + e.calls, 0),
    };
  } finally {
    child.kill('SIGTERM');
    await control.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const ratios = [];
const on = [];
const off = [];
for (let pair = 0; pair < pairs; pair++) {
  const order = pair % 2 ? [false, true] : [true, false];
  const results = {};
  for (const waiting of order) results[waiting] = await measureOnce(waiting);
  on.push(results.true.cpu);
  off.push(results.false.cpu);
  ratios.push(results.true.cpu / results.false.cpu);
  console.log(
    `pair ${pair + 1}: on ${results.true.cpu.toFixed(1)} µs/request (${results.true.requests} requests, ${results.true.calls ?? 0} calls recorded), off ${results.false.cpu.toFixed(1)} µs/request: ${((ratios.at(-1) - 1) * 100).toFixed(1)} %`,
  );
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(
  `route ${values.route}: CPU per request on ${median(on).toFixed(1)} µs, off ${median(off).toFixed(1)} µs; median of the pairs' ratios ${((median(ratios) - 1) * 100).toFixed(1)} % (min ${((Math.min(...ratios) - 1) * 100).toFixed(1)} %, max ${((Math.max(...ratios) - 1) * 100).toFixed(1)} %)`,
);
service.close();
