import { readFileSync } from 'node:fs';
import { createServer as createHttp1Server } from 'node:http';
import {
  createSecureServer,
  createServer,
  type Http2SecureServer,
  type Http2Server,
  type ServerHttp2Stream,
} from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../src/index.js';
import { cli } from './cli-runner.js';
import { NGINX, startNginx } from './nginx.js';

// hotpath-load --http2 against real servers: node:http2 (h2c and TLS with the test certificate)
// and nginx; every count checked against the server's own count.
const key = readFileSync(new URL('./fixtures/tls-key.pem', import.meta.url));
const cert = readFileSync(new URL('./fixtures/tls-cert.pem', import.meta.url));

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

interface Target {
  url: string;
  /** Streams the server answered (the response ended). */
  answered: () => number;
  /** Request body bytes the server read. */
  bodyBytes: () => number;
}

type Handler = (
  stream: ServerHttp2Stream,
  headers: Record<string, string | string[] | undefined>,
  n: number,
) => void;

const hello: Handler = (stream) => {
  stream.respond({ ':status': 200, 'content-type': 'text/plain' });
  stream.end('hello over h2');
};

async function listen(
  server: Http2Server | Http2SecureServer,
  scheme: string,
  handler: Handler,
): Promise<Target> {
  let answered = 0;
  let bodyBytes = 0;
  let seen = 0;
  server.on('stream', (stream, headers) => {
    stream.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
    });
    stream.on('error', () => {});
    stream.on('close', () => {
      if (stream.rstCode === 0) answered++;
    });
    handler(stream, headers, ++seen);
  });
  const sessions = new Set<{ destroy(): void }>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: `${scheme}://127.0.0.1:${port}`, answered: () => answered, bodyBytes: () => bodyBytes };
}

const h2c = (handler: Handler = hello) => listen(createServer(), 'http', handler);
const h2tls = (handler: Handler = hello) => listen(createSecureServer({ key, cert }), 'https', handler);

describe('HTTP/2 against node:http2', () => {
  it('h2c with prior knowledge: exact counts over connections and concurrent streams', async () => {
    const target = await h2c();
    const result = await run({
      url: `${target.url}/`,
      http2: true,
      connections: 4,
      pipelining: 8,
      amount: 3000,
    });
    expect(result.statusCodes).toEqual({ 200: 3000 });
    expect(result.errors).toBe(0);
    expect(result.requests.total).toBe(3000);
    expect(target.answered()).toBe(3000);
  });

  it('TLS with ALPN h2 and a self-signed certificate (not checked unless asked)', async () => {
    const target = await h2tls();
    const result = await run({
      url: `${target.url}/`,
      http2: true,
      connections: 3,
      pipelining: 5,
      amount: 1500,
    });
    expect(result.statusCodes).toEqual({ 200: 1500 });
    expect(target.answered()).toBe(1500);
    expect(result.tls?.handshakes).toBeGreaterThanOrEqual(3);
    await expect(
      run({ url: `${target.url}/`, http2: true, connections: 1, amount: 1, tls: { verify: true } }),
    ).rejects.toMatchObject({ code: 'HP_LOAD_TLS' });
  });

  it('an https server that does not speak h2 fails the run with HP_LOAD_H2_ALPN', async () => {
    const server = createHttpsServer({ key, cert }, (_req, res) => res.end('h1'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const { port } = server.address() as AddressInfo;
    await expect(
      run({ url: `https://127.0.0.1:${port}/`, http2: true, connections: 1, amount: 1 }),
    ).rejects.toMatchObject({ code: 'HP_LOAD_H2_ALPN', message: expect.stringContaining('expected "h2"') });
  });

  it('counts statuses per code and sends method, path and headers', async () => {
    const seen: string[] = [];
    const target = await h2c((stream, headers, n) => {
      if (n <= 3)
        seen.push(`${headers[':method']} ${headers[':path']} ${headers['x-test']} ${headers[':authority']}`);
      stream.respond({ ':status': n % 4 === 0 ? 404 : 200 });
      stream.end();
    });
    const result = await run({
      url: `${target.url}/items?page=2`,
      http2: true,
      connections: 1,
      pipelining: 1,
      amount: 400,
      method: 'DELETE',
      headers: { 'X-Test': 'yes', Connection: 'keep-alive' },
    });
    expect(result.statusCodes).toEqual({ 200: 300, 404: 100 });
    expect(result.non2xx).toBe(100);
    expect(seen[0]).toBe(`DELETE /items?page=2 yes ${new URL(target.url).host}`);
    expect(seen).toEqual([seen[0], seen[0], seen[0]]);
  });

  it('large responses flow (WINDOW_UPDATE for received DATA) and request bodies respect the windows', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 0x61);
    const target = await h2c((stream, headers) => {
      if (headers[':method'] === 'POST') {
        let length = 0;
        stream.on('data', (chunk: Buffer) => {
          length += chunk.length;
        });
        stream.on('end', () => {
          stream.respond({ ':status': length === 300_000 ? 201 : 400 });
          stream.end();
        });
        return;
      }
      stream.respond({ ':status': 200 });
      stream.end(big);
    });
    const gets = await run({ url: `${target.url}/`, http2: true, connections: 2, pipelining: 2, amount: 12 });
    expect(gets.statusCodes).toEqual({ 200: 12 });
    expect(gets.throughput.total).toBeGreaterThan(12 * big.length);
    const posts = await run({
      url: `${target.url}/`,
      http2: true,
      connections: 2,
      pipelining: 3,
      amount: 30,
      method: 'POST',
      body: Buffer.alloc(300_000, 0x62),
    });
    // 300 000 bytes is more than a stream's initial window (65 535): the body waits for updates.
    expect(posts.statusCodes).toEqual({ 201: 30 });
    expect(target.bodyBytes()).toBe(30 * 300_000);
  });

  it('the fixed-rate model over HTTP/2 sends on schedule and counts exactly', async () => {
    const target = await h2c();
    const result = await run({
      url: `${target.url}/`,
      http2: true,
      connections: 2,
      pipelining: 4,
      rate: 400,
      amount: 200,
    });
    expect(result.statusCodes).toEqual({ 200: 200 });
    expect(result.rate).toBe(400);
    expect(target.answered()).toBe(200);
  });
});

describe('coordinated omission over HTTP/2, as over HTTP/1.1', () => {
  it('the fixed-rate model counts latency from the intended time across a server stall, like HTTP/1.1', async () => {
    // The same stall for both protocols: the server's event loop blocks for 500 ms at its 20th
    // request, so every request scheduled during the stall waits; measured from its intended
    // send time, the wait shows in p90 (a closed-model count would see one slow request).
    const stall = (n: number) => {
      if (n !== 20) return;
      const until = Date.now() + 500;
      while (Date.now() < until);
    };
    const h2 = await h2c((stream, _headers, n) => {
      stall(n);
      stream.respond({ ':status': 200 });
      stream.end('x');
    });
    let n1 = 0;
    const h1server = createHttp1Server((_req, res) => {
      stall(++n1);
      res.end('x');
    });
    await new Promise<void>((resolve) => h1server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          h1server.closeAllConnections();
          h1server.close(() => resolve());
        }),
    );
    const h1url = `http://127.0.0.1:${(h1server.address() as AddressInfo).port}/`;
    const options = { amount: 100, rate: 50, connections: 1 };
    const over2 = await run({ url: `${h2.url}/`, http2: true, ...options });
    const over1 = await run({ url: h1url, ...options });
    for (const result of [over1, over2]) {
      expect(result.requests.total).toBe(100);
      expect(result.latency.max).toBeGreaterThanOrEqual(450);
      expect(result.latency.p90).toBeGreaterThan(100);
    }
  });
});

describe.skipIf(!NGINX)('HTTP/2 against nginx (h2c)', () => {
  it('the CLI counts 20 000 requests exactly against nginx access log, JSON in the same shape', async () => {
    const nginx = await startNginx('', { http2: true });
    closers.push(() => nginx.stop());
    const ran = await cli(['--http2', '-c', '50', '-p', '10', '-a', '20000', '-j', `${nginx.url}/hello`]);
    expect(ran.code).toBe(0);
    const result = JSON.parse(ran.stdout);
    expect(result.statusCodes).toEqual({ 200: 20000 });
    expect(result.errors).toBe(0);
    expect(Object.keys(result)).toEqual(
      expect.arrayContaining(['requests', 'latency', 'throughput', 'histogram']),
    );
    // nginx writes its access log line when a request ends; give it a moment to flush.
    for (let i = 0; i < 50 && nginx.accessLogLines() < 20000; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(nginx.accessLogLines()).toBe(20000);
  });
});
