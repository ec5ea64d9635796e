import { afterEach, describe, expect, it } from 'vitest';
import { HotpathLoadError, run } from '../src/index.js';
import { httpServer, type Running } from './servers.js';

// `drain`: at the end of the duration nothing new is sent and the requests in flight are awaited
// and counted. Real node:http servers whose every response takes a fixed time, so which requests
// fall inside the window is known.

const running: Running[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

/** A server answering each request after `ms`; counts what it received and what is still open. */
async function slowServer(ms: number, hang?: (path: string) => boolean) {
  const state = { received: 0, open: 0 };
  const server = await httpServer((req, res) => {
    state.received++;
    state.open++;
    res.on('close', () => state.open--);
    if (hang?.(req.url ?? '')) return;
    setTimeout(() => res.end('ok'), ms);
  });
  running.push(server);
  return { server, state };
}

describe('drain: the requests in flight at the end are awaited and counted', () => {
  it('closed model: without it the second wave is dropped uncounted; with it every request sent is counted', async () => {
    // 4 connections, 300 ms a response, 0.5 s: a wave at 0, a wave at 300 ms that ends at 600
    const plain = await slowServer(300);
    const dropped = await run({ url: `${plain.server.url}/`, connections: 4, duration: 0.5 });
    expect(dropped.requests.total).toBe(4);
    expect(plain.state.received).toBe(8);

    const drained = await slowServer(300);
    const result = await run({ url: `${drained.server.url}/`, connections: 4, duration: 0.5, drain: true });
    expect(result.requests.total).toBe(8);
    expect(drained.state.received).toBe(8);
    // nothing of the run is left on the server, and the window ran to the last response
    expect(drained.state.open).toBe(0);
    expect(result.duration).toBeGreaterThanOrEqual(0.59);
    expect(result.latency.p50).toBeGreaterThanOrEqual(290);
    expect(result.errors).toBe(0);
  });

  it('drains in every worker thread', async () => {
    const { server, state } = await slowServer(300);
    const result = await run({
      url: `${server.url}/`,
      connections: 4,
      workers: 2,
      duration: 0.5,
      drain: true,
    });
    expect(result.requests.total).toBe(8);
    expect(state.received).toBe(8);
    expect(state.open).toBe(0);
  });

  it('open model: requests sent before the end are counted, none is sent after it', async () => {
    const { server, state } = await slowServer(200);
    const result = await run({
      url: `${server.url}/`,
      connections: 20,
      rate: 40,
      duration: 0.5,
      drain: true,
    });
    // 40 req/s for 0.5 s: 20 sent (give or take the last one at the edge), each counted
    expect(state.received).toBeGreaterThanOrEqual(19);
    expect(state.received).toBeLessThanOrEqual(21);
    expect(result.requests.total).toBe(state.received);
    expect(state.open).toBe(0);
  });

  it('a warm-up request still in flight when the drain begins is awaited, and then the run ends', async () => {
    // one connection, 800 ms a response: the warm-up's request (sent at 0) is still out when the
    // measured 0.3 s end at 0.5 s; its answer at 0.8 s ends the drain (it once ended nothing: the
    // run waited forever, as a capacity step at an overloaded rate with a long queue did)
    const { server, state } = await slowServer(800);
    const started = Date.now();
    const result = await run({
      url: `${server.url}/`,
      connections: 1,
      warmup: 0.2,
      duration: 0.3,
      drain: true,
    });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(750);
    expect(result.requests.total).toBe(0);
    expect(state.received).toBe(1);
    expect(state.open).toBe(0);
  });

  it('a request that never gets its answer ends the drain at the timeout, counted as a timeout', async () => {
    const { server } = await slowServer(50, (path) => path === '/hang');
    let n = 0;
    const started = Date.now();
    const result = await run({
      url: `${server.url}/`,
      connections: 2,
      duration: 0.3,
      timeout: 0.6,
      drain: true,
      onRequest: () => ({ path: n++ === 3 ? '/hang' : '/' }),
    });
    expect(result.errorsByKind.timeout).toBe(1);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('names a value that is not a boolean', async () => {
    await expect(run({ url: 'http://127.0.0.1:1/', drain: 'yes' as unknown as boolean })).rejects.toThrow(
      HotpathLoadError,
    );
    await expect(run({ url: 'http://127.0.0.1:1/', drain: 1 as unknown as boolean })).rejects.toThrow(
      /drain.*expected true or false/,
    );
  });
});
