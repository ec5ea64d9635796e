import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { HotpathLoadError, run } from '../src/index.js';

// `connectFirst`: every connection is up, and the server has had a moment to accept them, before
// the first request. A Node.js server busy with requests accepts one new connection per turn of
// its event loop (libuv 1.45 and later), so a run that sends on each connection as soon as it is
// up spends its first part on a saturated server waiting for connections to be accepted. A real
// server in its own process, whose every request costs 2 ms of CPU, notes how many connections
// it had accepted when each request arrived.

const SERVER = `
const http = require('node:http');
// BUSY_ON_FIRST_CONNECTION: a synchronous task of that many ms when the first connection comes in
const busyMs = Number(process.env.BUSY_ON_FIRST_CONNECTION ?? 0);
let accepted = 0;
const atRequest = [];
const server = http.createServer((req, res) => {
  atRequest.push(accepted);
  const end = performance.now() + 2;
  while (performance.now() < end);
  res.end('ok');
});
server.on('connection', () => {
  if (accepted++ === 0 && busyMs > 0)
    setImmediate(() => {
      const end = performance.now() + busyMs;
      while (performance.now() < end);
    });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
process.on('message', () => process.send({ accepted, atRequest }, () => process.exit(0)));
`;

type Seen = { accepted: number; atRequest: number[] };
const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
});

const DIST = new URL('../dist/index.js', import.meta.url).href;

async function busyServer(
  prefix: string[] = [],
  busyOnFirstConnection = 0,
): Promise<{ url: string; seen: () => Promise<Seen> }> {
  const [file = process.execPath, ...args] = [...prefix, process.execPath, '-e', SERVER];
  const env = { ...process.env, BUSY_ON_FIRST_CONNECTION: String(busyOnFirstConnection) };
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], env });
  children.push(child);
  const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return {
    url: `http://127.0.0.1:${chunk.toString().trim()}/`,
    seen: async () => {
      child.send('report');
      const [message] = (await once(child, 'message')) as [Seen];
      return message;
    },
  };
}

describe('connectFirst: every connection up before the first request', () => {
  // The client in a process of its own, on the server's CPU: the server then runs only when the
  // client waits, as a saturated server on its own core gets no turn between the client's
  // connects and first requests. Linux (taskset) only.
  const pinned = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  const client = (url: string, connectFirst: boolean) =>
    new Promise<{ total: number; errors: number }>((resolve, reject) => {
      const script = `import(${JSON.stringify(DIST)}).then(async ({ run }) => {
        const r = await run({ url: ${JSON.stringify(url)}, connections: 50, duration: 0.4, drain: true, connectFirst: ${connectFirst} });
        process.stdout.write(JSON.stringify({ total: r.requests.total, errors: r.errors }));
      });`;
      execFile('taskset', ['-c', '0', process.execPath, '-e', script], (error, stdout) =>
        error ? reject(error) : resolve(JSON.parse(stdout)),
      );
    });

  // (Without connectFirst, the same run's first request found 32 of the 50 accepted here.)
  it.skipIf(!pinned)(
    'a busy server has accepted all 50 connections before the first request arrives',
    async () => {
      const server = await busyServer(['taskset', '-c', '0']);
      const result = await client(server.url, true);
      const seen = await server.seen();
      const text = JSON.stringify({ first: seen.atRequest.slice(0, 10) });
      expect(seen.accepted, text).toBe(50);
      expect(Math.min(...seen.atRequest), text).toBe(50);
      expect(result.total, text).toBe(seen.atRequest.length);
      expect(result.errors, text).toBe(0);
    },
  );

  // A server kept from its turns for 300 ms right as the connections come in (a synchronous task,
  // as a loaded machine or a busy neighbour would keep it): the clocks wait for its accept queue to
  // empty, not for a fixed moment (a fixed 20 ms let its first requests in with 2 of 30 accepted).
  it.skipIf(process.platform !== 'linux')(
    'a server busy for 300 ms as the connections arrive has accepted all 30 before the first request (its accept queue watched)',
    async () => {
      const server = await busyServer([], 300);
      const started = performance.now();
      const result = await run({
        url: server.url,
        connections: 30,
        duration: 0.3,
        drain: true,
        connectFirst: true,
      });
      const took = performance.now() - started;
      const seen = await server.seen();
      const text = JSON.stringify({ first: seen.atRequest.slice(0, 10), took });
      expect(seen.accepted, text).toBe(30);
      expect(Math.min(...seen.atRequest), text).toBe(30);
      expect(result.requests.total, text).toBe(seen.atRequest.length);
      expect(result.errors, text).toBe(0);
    },
  );

  it('open model: the schedule starts once the connections are up, so the run still sends rate × duration', async () => {
    const server = await busyServer();
    const result = await run({
      url: server.url,
      connections: 20,
      rate: 100,
      duration: 0.5,
      drain: true,
      connectFirst: true,
    });
    const seen = await server.seen();
    expect(Math.min(...seen.atRequest)).toBe(20);
    expect(result.requests.total).toBeGreaterThanOrEqual(49);
    expect(result.requests.total).toBeLessThanOrEqual(51);
  });

  it('refuses a value that is not true or false, naming it', async () => {
    await expect(run({ url: 'http://127.0.0.1:1/', connectFirst: 'yes' as never })).rejects.toThrow(
      HotpathLoadError,
    );
    await expect(run({ url: 'http://127.0.0.1:1/', connectFirst: 'yes' as never })).rejects.toThrow(
      /connectFirst.*"yes".*true or false/,
    );
  });
});
