import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, createServer, get, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DownstreamWindow, DownstreamWindowSchema } from '../src/downstream-model.js';
import { ProbeControl } from '../src/measure/probe-control.js';
import { probePath } from '../src/measure/probe-path.js';
import {
  freePort,
  type StartedPostgres,
  type StartedStore,
  startStores,
  storesMissing,
} from './helpers/stores.js';

// What a real server waits for, recorded by the probe in its own process: PostgreSQL through
// node-postgres, Redis through ioredis, and a local HTTP service (answering after 3 ms) through
// http.request and fetch — real processes, one measured window per story, each window a bounded
// number of requests sent one after another (so calls per request are exact).

const FIXTURE = new URL('./fixtures/downstream-server.mjs', import.meta.url).pathname;
const REQUESTS = 40;
const missing = storesMissing();

interface Running {
  stores: { postgres: StartedPostgres; redis: StartedStore; stop(): Promise<void> };
  service: Server;
  servicePort: number;
  control: ProbeControl;
  server: ChildProcess;
  port: number;
  dir: string;
  window: number;
}

const client = new Agent({ keepAlive: true, maxSockets: 1 });
/** Requests 8 at a time: ioredis then carries several requests' commands on its one connection at once. */
const CONCURRENT = 8;
const clients = new Agent({ keepAlive: true, maxSockets: CONCURRENT });

function ask(port: number, path: string, agent = client): Promise<number> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    }).on('error', reject);
  });
}

/**
 * One measured window of `requests` requests to `path` (after a few unmeasured ones), one after
 * another or `concurrent` at a time: its monitor.json.
 */
async function measureMonitor(
  run: Pick<Running, 'control' | 'port' | 'window'>,
  path: string,
  requests = REQUESTS,
  concurrent = 1,
): Promise<{ downstream?: unknown }> {
  for (let i = 0; i < 5; i++) expect(await ask(run.port, path)).toBe(200);
  run.window++;
  await run.control.start(run.window);
  const agent = concurrent > 1 ? clients : client;
  const worker = async (n: number) => {
    for (let i = 0; i < n; i++) expect(await ask(run.port, path, agent)).toBe(200);
  };
  await Promise.all(Array.from({ length: concurrent }, () => worker(requests / concurrent)));
  const [report] = await run.control.stop();
  expect(report?.error).toBeUndefined();
  return JSON.parse(readFileSync(report?.files.monitor as string, 'utf8'));
}

async function measure(
  run: Running,
  path: string,
  concurrent = 1,
  requests = REQUESTS,
): Promise<DownstreamWindow> {
  return DownstreamWindowSchema.parse((await measureMonitor(run, path, requests, concurrent)).downstream);
}

/** The fixture server with the probe, `HOTPATH_PROBE_WAITING=waiting` where given. */
async function startServer(
  stores: Running['stores'],
  servicePort: number,
  dir: string,
  waiting?: string,
): Promise<{ control: ProbeControl; server: ChildProcess; port: number; window: number }> {
  const control = await ProbeControl.open();
  const port = await freePort();
  const server = spawn(process.execPath, [FIXTURE], {
    stdio: 'ignore',
    env: {
      ...process.env,
      PORT: String(port),
      NODE_OPTIONS: `--require ${probePath()}`,
      HOTPATH_PROBE_CONTROL: control.address,
      HOTPATH_PROBE_DIR: dir,
      HOTPATH_PROBE_PROFILER: 'none',
      ...(waiting ? { HOTPATH_PROBE_WAITING: waiting } : {}),
      PG_URL: stores.postgres.url,
      REDIS_URL: stores.redis.url,
      SERVICE_URL: `http://127.0.0.1:${servicePort}/`,
    },
  });
  if (!(await control.waitForProbe(20_000))) {
    server.kill('SIGTERM');
    await control.close();
    throw new Error('the fixture server did not start');
  }
  return { control, server, port, window: 0 };
}

async function stopServer(server: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  if (server.exitCode === null && server.signalCode === null) await exited;
}

function endpoint(window: DownstreamWindow, port: number) {
  const found = window.endpoints.find((e) => e.endpoint === `127.0.0.1:${port}`);
  expect(found, `endpoint 127.0.0.1:${port} in ${JSON.stringify(window.endpoints)}`).toBeDefined();
  return found as NonNullable<typeof found>;
}

describe.skipIf(missing)(
  `downstream calls of a real server${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let run: Running;

    beforeAll(async () => {
      const stores = await startStores();
      const dir = mkdtempSync(join(tmpdir(), 'hotpath-downstream-'));
      let service: Server | undefined;
      let control: ProbeControl | undefined;
      try {
        const redis = new Redis(stores.redis.url);
        await redis.set('items', JSON.stringify(Array.from({ length: 10 }, (_, i) => i + 1)));
        for (let id = 1; id <= 10; id++) await redis.set(`item:${id}`, String(id));
        redis.disconnect();
        service = createServer((_req, res) => setTimeout(() => res.end('ok'), 3));
        await new Promise<void>((resolve) => service?.listen(0, '127.0.0.1', resolve));
        const address = service.address();
        const servicePort = typeof address === 'object' && address ? address.port : 0;
        const started = await startServer(stores, servicePort, dir);
        control = started.control;
        run = { stores, service, servicePort, dir, ...started };
      } catch (err) {
        await teardown(stores, service, control, dir);
        throw err;
      }
    }, 60_000);

    async function teardown(
      stores: Running['stores'],
      service: Server | undefined,
      control: ProbeControl | undefined,
      dir: string,
    ) {
      client.destroy();
      clients.destroy();
      await new Promise((resolve) => (service ? service.close(resolve) : resolve(undefined)));
      await control?.close();
      await stores.stop();
      rmSync(dir, { recursive: true, force: true });
    }

    afterAll(async () => {
      if (!run) return;
      await stopServer(run.server);
      await teardown(run.stores, run.service, run.control, run.dir);
    }, 30_000);

    it('PostgreSQL: 1 query per request vs one per item (N+1), by endpoint, named postgres', async () => {
      const one = await measure(run, '/pg-one');
      const perItem = await measure(run, '/pg-per-item');
      for (const window of [one, perItem]) expect(window.requests).toBe(REQUESTS);
      const pg = [endpoint(one, run.stores.postgres.port), endpoint(perItem, run.stores.postgres.port)];
      expect(pg[0]?.protocol).toBe('postgres');
      expect((pg[0]?.calls ?? 0) / REQUESTS).toBeCloseTo(1, 1);
      expect((pg[1]?.calls ?? 0) / REQUESTS).toBeCloseTo(10, 1);
      // the pool's connections are open before the window: none opened in it
      expect(pg[1]?.connections).toBe(0);
      expect(pg[1]?.bytesOut).toBeGreaterThan(pg[0]?.bytesOut ?? 0);
      expect(perItem.requestsWithCalls).toMatchObject({ withCalls: REQUESTS, calls: 10 * REQUESTS });
      // the functions' calls are estimates (a stack, held to 0.3 % of the main thread, stands for
      // the calls since the last)
      expect(perItem.functions[0]?.name).toBe('loadItemsOneByOne');
      // (a sample that lands in the route's own frame gives its calls to that frame: on a busy
      // runner 357 of 400 went to the named function, so the floor is three quarters)
      expect(perItem.functions[0]?.calls).toBeGreaterThan(0.75 * 10 * REQUESTS);
      expect(perItem.functions[0]?.calls).toBeLessThanOrEqual(10 * REQUESTS);
      // the estimates add up to at most the calls counted: a stack that finds no user frame gives
      // its calls to no function. Before 2026-12-07 the pool's own callbacks took such stacks when
      // none was due at the query (366 and 328 of 400 here), and the calls after the window's
      // last stack were in no row; now 400 of 400 in four runs
      const given = perItem.functions.reduce((sum, f) => sum + f.calls, 0);
      expect(given).toBeGreaterThan(0.9 * 10 * REQUESTS);
      expect(given).toBeLessThanOrEqual(10 * REQUESTS);
      expect(perItem.functions[0]?.file).toMatch(/downstream-server\.mjs$/);
      expect(one.functions[0]?.name).toBe('loadItemsAtOnce');
      // the flame graph's stacks end at the endpoint the calls went to
      const top = perItem.stacks[0];
      expect(perItem.endpoints[top?.endpoint ?? -1]?.protocol).toBe('postgres');
      expect(perItem.functions[top?.frames.at(-1) ?? -1]?.name).toBe('loadItemsOneByOne');
    });

    it('PostgreSQL: 3 queries awaited together vs in series (union vs sum of waiting)', async () => {
      const together = await measure(run, '/pg-together');
      // in series, more requests: which function made a call is read from some 75 stacks a second
      const seriesRequests = 3 * REQUESTS;
      const series = await measure(run, '/pg-series', 1, seriesRequests);
      for (const [window, requests] of [
        [together, REQUESTS],
        [series, seriesRequests],
      ] as const) {
        expect(window.requestsWithCalls).toMatchObject({ withCalls: requests, calls: 3 * requests });
        expect(endpoint(window, run.stores.postgres.port).calls).toBe(3 * requests);
      }
      const ratio = (w: DownstreamWindow) => w.requestsWithCalls.unionMicros / w.requestsWithCalls.sumMicros;
      // in series the calls never overlap (the union is their sum); together they do
      expect(ratio(series)).toBeGreaterThan(0.97);
      expect(ratio(together)).toBeLessThan(0.7);
      expect(series.functions[0]?.name).toBe('loadThreeInSeries');
      // the function that resumed from an await to make a call: in series, loadThreeInSeries made
      // the second and third (the first ran before any await, in the request's handler); together,
      // all three were made before the first await, so the handler made them. Two thirds, read
      // from the stacks: drawn by the clock, one per ~13 ms on requests of ~14 ms, the same call
      // of each request got them and the share read 0.36–0.64 (2026-12-07); drawn by count,
      // 0.52–0.71 in eight windows of 120 requests (SD about 0.05)
      const resumed = (w: DownstreamWindow, name?: string) =>
        w.functions.filter((f) => !name || f.name === name).reduce((n, f) => n + (f.resumedCalls ?? 0), 0);
      const share = resumed(series, 'loadThreeInSeries') / resumed(series);
      expect(share, JSON.stringify(series.functions)).toBeGreaterThan(0.45);
      expect(share, JSON.stringify(series.functions)).toBeLessThan(0.88);
      expect(resumed(together, 'loadThreeTogether')).toBe(0);
      expect(resumed(together)).toBeGreaterThan(0);
    });

    it('Redis: GET once vs once per item, named redis', async () => {
      const once = await measure(run, '/redis-once');
      const perItem = await measure(run, '/redis-per-item');
      const redis = [endpoint(once, run.stores.redis.port), endpoint(perItem, run.stores.redis.port)];
      expect(redis[0]?.protocol).toBe('redis');
      expect((redis[0]?.calls ?? 0) / REQUESTS).toBeCloseTo(1, 1);
      expect((redis[1]?.calls ?? 0) / REQUESTS).toBeCloseTo(10, 1);
      expect(perItem.functions[0]).toMatchObject({ name: 'readCachedItems' });
      expect(perItem.functions[0]?.file).toMatch(/downstream-server\.mjs$/);
    });

    it('Redis: a command is a call on a connection all requests share (8 requests at a time)', async () => {
      // ioredis writes every request's commands on one connection, without waiting for the
      // answers: a command written while another awaits its reply is a call of its own, ended by
      // its own reply (an exchange, writes until data, would merge them: 0.23 calls per request
      // read for 10 once, 2026-12-06)
      const perItem = await measure(run, '/redis-per-item', CONCURRENT);
      expect(perItem.requests).toBe(REQUESTS);
      expect(endpoint(perItem, run.stores.redis.port).calls).toBe(10 * REQUESTS);
      expect(perItem.requestsWithCalls).toMatchObject({ withCalls: REQUESTS, calls: 10 * REQUESTS });
      expect(perItem.functions[0]).toMatchObject({ name: 'readCachedItems' });
      // the function's waiting is the sum of the waiting of the calls its stacks stand for, each
      // its own: the first call of a burst (written first, answered with the rest) waits longest,
      // and one sampled call's waiting times the calls it stood for read 38–58 % above the
      // endpoint's exact sum; every call of the window stands with a stack, so the functions'
      // waiting adds up to the endpoint's (each row rounded to a microsecond)
      const exact = endpoint(perItem, run.stores.redis.port).waitingMicros;
      const named = perItem.functions.reduce((sum, f) => sum + f.waitingMicros, 0);
      const seen = JSON.stringify({ named, exact, calls: perItem.functions[0]?.calls });
      expect(Math.abs(named - exact), seen).toBeLessThanOrEqual(perItem.functions.length);
      const together = await measure(run, '/redis-together', CONCURRENT);
      const series = await measure(run, '/redis-series', CONCURRENT);
      for (const window of [together, series]) {
        expect(endpoint(window, run.stores.redis.port).calls).toBe(3 * REQUESTS);
        expect(window.requestsWithCalls).toMatchObject({ withCalls: REQUESTS, calls: 3 * REQUESTS });
      }
      // the three GETs of one request overlap when awaited together (their union well under their
      // sum); in series each starts after the last one's reply
      const ratio = (w: DownstreamWindow) => w.requestsWithCalls.unionMicros / w.requestsWithCalls.sumMicros;
      expect(ratio(series)).toBeGreaterThan(0.97);
      expect(ratio(together)).toBeLessThan(0.7);
      expect(series.functions[0]?.name).toBe('readThreeInSeries');
    });

    it('HTTP: keep-alive (no new connection) vs a connection per call, and fetch', async () => {
      const kept = await measure(run, '/http-keepalive');
      const fresh = await measure(run, '/http-new');
      const fetched = await measure(run, '/fetch');
      const service = [kept, fresh, fetched].map((w) => endpoint(w, run.servicePort));
      for (const e of service) {
        expect(e.protocol).toBe('http');
        expect(e.calls / REQUESTS).toBeCloseTo(1, 1);
        expect(e.bytesIn).toBeGreaterThan(0);
      }
      expect((service[0]?.connections ?? 0) / REQUESTS).toBeLessThan(0.05);
      expect(service[1]?.connections).toBe(REQUESTS);
      expect(kept.functions[0]?.name).toBe('askService');
      expect(kept.functions.map((f) => f.name)).toContain('callServiceKeptAlive');
      expect(fetched.functions[0]?.name).toBe('fetchService');
      // waiting per call is at least the service's 3 ms
      expect(service[0]?.waitingMicros ?? 0).toBeGreaterThan(3000 * REQUESTS);
    });

    it('HOTPATH_PROBE_WAITING=calls: the calls without the requests’ contexts; off: nothing', async () => {
      for (const level of ['calls', 'off']) {
        const other = await startServer(run.stores, run.servicePort, run.dir, level);
        try {
          const monitor = await measureMonitor(other, '/http-keepalive');
          if (level === 'off') {
            expect(monitor.downstream).toBeUndefined();
            continue;
          }
          const window = DownstreamWindowSchema.parse(monitor.downstream);
          expect(endpoint(window, run.servicePort).calls / REQUESTS).toBeCloseTo(1, 1);
          expect(window.requestsWithCalls.withCalls).toBe(0);
        } finally {
          await stopServer(other.server);
          await other.control.close();
        }
      }
    });

    it('a timer job’s calls are counted as made outside any request, the requests’ are not', async () => {
      expect(await ask(run.port, '/job-on')).toBe(200);
      let window: DownstreamWindow;
      try {
        // the requests call nothing and take 5 ms each; the job, on a timer made at start-up,
        // queries PostgreSQL every 3 ms (alone, so that the stacks taken are all its own: the
        // stacks are rationed whatever the endpoint)
        window = await measure(run, '/idle');
      } finally {
        expect(await ask(run.port, '/job-off')).toBe(200);
      }
      const job = window.functions.find((f) => f.name === 'sweepExpired');
      const seen = JSON.stringify(window.functions);
      expect(endpoint(window, run.stores.postgres.port).calls, seen).toBeGreaterThan(5);
      expect(job?.calls, seen).toBeGreaterThan(0);
      expect(job?.outsideCalls, seen).toBe(job?.calls);
      // no request made a call: nothing of the job counts as a request's waiting
      expect(window.requestsWithCalls.withCalls).toBe(0);
      // and a request's own calls are never outside (the N+1 route, its calls all in requests)
      const perItem = await measure(run, '/pg-per-item');
      expect(perItem.functions.filter((f) => f.outsideCalls !== undefined)).toEqual([]);
    });

    it('a route that calls nothing records no calls', async () => {
      const none = await measure(run, '/none');
      expect(none.requests).toBe(REQUESTS);
      expect(none.requestsWithCalls.withCalls).toBe(0);
      expect(none.endpoints.reduce((n, e) => n + e.calls, 0)).toBe(0);
    });
  },
);
