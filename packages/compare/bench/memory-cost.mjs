// What memory on costs inside a measured window, against the same process with it off (the anchor):
//
//   node bench/memory-cost.mjs [--route json|work] [--pairs 30] [--window 1]
//
// One server process (bench/memory-cost-server.mjs) serves every window, so that the comparison
// holds the process's compiled code fixed: between processes CPU per request varies by several
// percent with how V8 compiled that one, which buries a cost of a fraction of a percent under
// dozens of pairs. Its windows alternate (on off, off on, ...) between the probe's window-level
// memory parts running (the record of collections and the sampling heap profiler, at the interval
// the warm-up's rate of allocation sets, from dist/) and not; each is preceded by an unmeasured
// second of the same load, and the first pair is thrown away (the first sampler's stop may throw
// optimized code away, which the code made again then serves both kinds of window).
// Prints CPU per request on and off and their ratio with its 95 % interval over the pairs.
// What is not here: the process-level parts (kept hidden classes, the edges' collections, the
// first round's survivors profile) — see the README's "what memory on costs".
// The server is pinned to core 0 and this process (the load generator) to core 1 where taskset is.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runLoad } from '../dist/measure/load.js';
import { pairedDifference } from '../dist/verdict/statistics.js';

const { values } = parseArgs({
  options: {
    route: { type: 'string', default: 'json' },
    pairs: { type: 'string', default: '30' },
    window: { type: 'string', default: '1' },
    parts: { type: 'string', default: 'record,sampler' },
  },
});
const pairs = Number(values.pairs);
const seconds = Number(values.window);
const parts = values.parts.split(',');
const known = ['record', 'sampler', 'maps', 'edge'];
if (
  !['json', 'work'].includes(values.route) ||
  !(pairs >= 2) ||
  !(seconds > 0) ||
  !parts.every((p) => known.includes(p))
) {
  console.error(
    `memory-cost: --route json|work, --pairs ≥ 2, --window > 0 seconds, --parts of record,sampler,maps,edge; got ${JSON.stringify(values)}`,
  );
  process.exit(2);
}

/**
 * The median of `xs` and its distribution-free 95 % interval (order statistics from the sign test):
 * a window the host slowed by a third, which happens here now and then to either kind, moves it
 * by one rank, where it moves the mean's interval by a third over the pairs.
 */
function medianInterval(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  // the largest k with P(Binomial(n, 1/2) < k) ≤ 2.5 %
  let k = 0;
  let below = 0;
  let term = 0.5 ** n;
  while (k < n && below + term <= 0.025) {
    below += term;
    term = (term * (n - k)) / (k + 1);
    k++;
  }
  const median = n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return { median, ci: k === 0 ? [-Infinity, Infinity] : [s[k - 1], s[n - k]] };
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

const net = await import('node:net');
const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});
const serverFile = fileURLToPath(new URL('./memory-cost-server.mjs', import.meta.url));
const child = spawn(
  hasTaskset ? 'taskset' : process.execPath,
  [...(hasTaskset ? ['-c', '0', process.execPath] : []), serverFile],
  {
    env: { ...process.env, PORT: String(port), ROUTE: values.route },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  },
);
const replies = [];
const waiting = [];
child.on('message', (m) => {
  const w = waiting.shift();
  if (w) w(m);
  else replies.push(m);
});
child.on('exit', (code) => {
  if (code !== 0 && code !== null) {
    console.error(`memory-cost: the server exited with ${code}`);
    process.exit(1);
  }
});
const next = () => (replies.length ? Promise.resolve(replies.shift()) : new Promise((r) => waiting.push(r)));
const ask = async (message, answer) => {
  child.send(message);
  const m = await next();
  if (m.type !== answer) throw new Error(`expected ${answer}, got ${JSON.stringify(m)}`);
  return m;
};

try {
  await next(); // listening
  const load = (duration) =>
    runLoad({
      url: `http://127.0.0.1:${port}/`,
      connections: 8,
      duration,
      pipelining: 1,
      method: 'GET',
      headers: {},
    });
  const prepared = await ask({ type: 'prepare', parts }, 'prepared');
  if (prepared.note) throw new Error(`the sampling heap profiler cannot run here: ${prepared.note}`);
  await load(3);
  const { interval } = await ask({ type: 'rate' }, 'rated');
  const windowOf = async (memory) => {
    // `edge`: the window's opening collection a second (the settle) before it, as the probe takes it
    if (memory && parts.includes('edge') && !(await ask({ type: 'edge' }, 'edged')).memory)
      throw new Error('the opening collection failed');
    await load(1);
    const opened = await ask({ type: 'open', memory, parts }, 'opened');
    if (opened.memory !== memory) throw new Error(`window memory ${memory} opened as ${opened.memory}`);
    await load(seconds);
    const closed = await ask({ type: 'close' }, 'closed');
    return closed.micros / closed.requests;
  };
  const rows = [];
  for (let k = 0; k <= pairs; k++) {
    const order = k % 2 === 0 ? [true, false] : [false, true];
    const cost = {};
    for (const memory of order) cost[memory] = await windowOf(memory);
    if (k > 0) rows.push(cost);
  }
  const logs = rows.map((r) => Math.log(r.true / r.false));
  const d = pairedDifference(logs, 0.05);
  const m = medianInterval(logs);
  const gm = (xs) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
  const pct = (x) => `${x >= 0 ? '+' : ''}${(Math.expm1(x) * 100).toFixed(2)} %`;
  console.log(
    `memory on in the window (${parts.join(' + ')}), route ${values.route}, ${pairs} pairs of ${seconds} s windows in one process` +
      ` (sampling interval ${Math.round(interval / 1024)} KiB; taskset ${hasTaskset ? 'on' : 'off'})`,
  );
  console.log(`  memory off (anchor)  ${gm(rows.map((r) => r.false)).toFixed(2)} µs CPU per request   1.000`);
  console.log(
    `  memory on            ${gm(rows.map((r) => r.true)).toFixed(2)} µs CPU per request   ${Math.exp(d.mean).toFixed(3)}` +
      `   (mean ${pct(d.mean)} [${pct(d.ci[0])}, ${pct(d.ci[1])}]; median ${pct(m.median)} [${pct(m.ci[0])}, ${pct(m.ci[1])}])`,
  );
} finally {
  child.kill('SIGKILL');
}
