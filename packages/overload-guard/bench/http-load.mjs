// A small closed-model HTTP/1.1 load generator for the overload scenarios: keep-alive
// connections, one request in flight per connection, latencies recorded PER STATUS so the
// latency of accepted (2xx) requests can be told apart from fast 503s. Run it as its own
// process (the server's loop is saturated on purpose). Prints one JSON line.
// With --prime PATH, every connection first gets one answer on PATH (a cheap route) before the
// clock starts: a saturated server accepts new connections only about one per loop turn, so
// without priming the run would measure connection set-up starvation, not steady overload.
//   node bench/http-load.mjs --port 3000 [--path /] [--connections 100] [--duration 3] [--warmup 1]
//                            [--prime /ping]
import { connect } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    path: { type: 'string', default: '/' },
    connections: { type: 'string', default: '100' },
    duration: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    grace: { type: 'string', default: '3' },
    prime: { type: 'string' },
  },
});
const port = Number(values.port);
const connections = Number(values.connections);
const duration = Number(values.duration) * 1000;
const warmup = Number(values.warmup) * 1000;
const grace = Number(values.grace) * 1000;
for (const [name, value] of Object.entries({ port, connections, duration, warmup, grace })) {
  if (!Number.isFinite(value) || value < 0 || (name === 'port' && value === 0)) {
    console.error(`http-load: invalid --${name} ${JSON.stringify(values[name])}: expected a positive number`);
    process.exit(2);
  }
}

const requestFor = (path) =>
  Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${values.host}:${port}\r\n\r\n`, 'latin1');
const request = requestFor(values.path);
const primeRequest = values.prime ? requestFor(values.prime) : null;
const HEADER_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('0\r\n\r\n');
let started = performance.now();
let measureFrom = started + warmup;
let measureTo = measureFrom + duration;
let primed = 0;
const primedSockets = [];
let stopping = false;
let inFlight = 0;
let errors = 0;
const latencies = new Map(); // status -> number[]
const completedInWindow = new Map(); // status -> count
let retryAfterMissing = 0;

// Latency: every response received after the warm-up, including the drain after the window
// (a request starved since the warm-up still counts, with its full wait). Goodput: 2xx
// responses completed inside the window, per second.
function record(status, sentAt, doneAt, hasRetryAfter) {
  if (doneAt >= measureFrom) {
    let list = latencies.get(status);
    if (!list) latencies.set(status, (list = []));
    list.push(doneAt - sentAt);
    if (status === 503 && !hasRetryAfter) retryAfterMissing++;
  }
  if (doneAt >= measureFrom && doneAt < measureTo)
    completedInWindow.set(status, (completedInWindow.get(status) ?? 0) + 1);
}

function open() {
  const socket = connect({ host: values.host, port });
  socket.setNoDelay(true);
  let buffer = null;
  let sentAt = 0;
  let waiting = false;
  let priming = primeRequest !== null;
  const send = () => {
    if (stopping || performance.now() >= measureTo) return socket.end();
    sentAt = performance.now();
    waiting = true;
    inFlight++;
    socket.write(request);
  };
  socket.on('connect', () => {
    if (!priming) return send();
    waiting = true;
    inFlight++;
    socket.write(primeRequest);
  });
  socket.on('data', (chunk) => {
    buffer = buffer ? Buffer.concat([buffer, chunk]) : chunk;
    while (buffer !== null) {
      const headerEnd = buffer.indexOf(HEADER_END);
      if (headerEnd < 0) return;
      const head = buffer.toString('latin1', 0, headerEnd).toLowerCase();
      let total;
      const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
      if (length) total = headerEnd + 4 + Number(length[1]);
      else if (head.includes('transfer-encoding: chunked')) {
        const end = buffer.indexOf(CHUNKED_END, headerEnd + 4);
        if (end < 0) return;
        total = end + CHUNKED_END.length;
      } else total = headerEnd + 4;
      if (buffer.length < total) return;
      const status = (buffer[9] - 48) * 100 + (buffer[10] - 48) * 10 + (buffer[11] - 48);
      if (priming) {
        priming = false;
        waiting = false;
        inFlight--;
        buffer = buffer.length === total ? null : buffer.subarray(total);
        primedSockets.push(send);
        if (++primed === connections) begin();
        continue;
      }
      record(status, sentAt, performance.now(), head.includes('\r\nretry-after:'));
      waiting = false;
      inFlight--;
      buffer = buffer.length === total ? null : buffer.subarray(total);
      send();
    }
  });
  socket.on('error', () => errors++);
  socket.on('close', () => {
    if (waiting) {
      waiting = false;
      inFlight--;
    }
    if (!stopping && performance.now() < measureTo) setTimeout(open, 10);
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summary(list) {
  const sorted = Float64Array.from(list).sort();
  const sum = sorted.reduce((a, b) => a + b, 0);
  const r = (v) => Math.round(v * 100) / 100;
  return {
    count: sorted.length,
    mean: r(sorted.length ? sum / sorted.length : 0),
    p50: r(percentile(sorted, 50)),
    p90: r(percentile(sorted, 90)),
    p99: r(percentile(sorted, 99)),
    max: r(sorted.length ? sorted[sorted.length - 1] : 0),
  };
}

function begin() {
  started = performance.now();
  measureFrom = started + warmup;
  measureTo = measureFrom + duration;
  for (const send of primedSockets.splice(0)) send();
  setTimeout(report, warmup + duration);
}

for (let i = 0; i < connections; i++) open();
if (primeRequest === null) setTimeout(report, warmup + duration);
else {
  setTimeout(() => {
    if (primed < connections) {
      console.error(
        `http-load: only ${primed} of ${connections} connections answered ${values.prime} in 10 s`,
      );
      process.exit(1);
    }
  }, 10_000).unref();
}

function report() {
  const deadline = performance.now() + grace;
  const finish = () => {
    if (inFlight > 0 && performance.now() < deadline) return setTimeout(finish, 20);
    stopping = true;
    const statusCodes = {};
    let total = 0;
    let shed = 0;
    const accepted = [];
    for (const [status, list] of latencies) {
      statusCodes[status] = list.length;
      total += list.length;
      if (status >= 200 && status < 300) {
        for (const v of list) accepted.push(v);
      } else if (status === 503) shed += list.length;
    }
    let goodCompleted = 0;
    for (const [status, n] of completedInWindow) if (status >= 200 && status < 300) goodCompleted += n;
    const seconds = duration / 1000;
    process.stdout.write(
      `${JSON.stringify({
        connections,
        duration: seconds,
        total,
        statusCodes,
        goodput: Math.round((goodCompleted / seconds) * 10) / 10,
        shedRatio: total ? Math.round((shed / total) * 1000) / 1000 : 0,
        accepted: summary(accepted),
        shed: summary(latencies.get(503) ?? []),
        retryAfterMissing,
        unfinished: inFlight,
        errors,
      })}\n`,
    );
    process.exit(0);
  };
  finish();
}
