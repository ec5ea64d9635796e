import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { HotpathLoadError, run } from '../src/index.js';
import { httpServer, type Running, tcpServer } from './servers.js';

const running: Running[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

async function track<T extends Running>(server: Promise<T>): Promise<T> {
  const started = await server;
  running.push(started);
  return started;
}

describe('run() against node:http', () => {
  it('sends exactly `amount` requests over keep-alive connections', async () => {
    let seen = 0;
    const sockets = new Set<unknown>();
    const server = await track(
      httpServer((req, res) => {
        seen++;
        sockets.add(req.socket);
        res.end('hello');
      }),
    );
    const result = await run({ url: `${server.url}/`, amount: 3000, connections: 7 });
    expect(result.requests.total).toBe(3000);
    expect(seen).toBe(3000);
    expect(result.errors).toBe(0);
    expect(result.statusCodes).toEqual({ '200': 3000 });
    expect(result.non2xx).toBe(0);
    expect(sockets.size).toBe(7);
    expect(result.latency.max).toBeGreaterThan(0);
    expect(result.latency.p50).toBeLessThanOrEqual(result.latency.p99);
    expect(result.throughput.total).toBeGreaterThan(3000 * 'hello'.length);
  });

  it('cycles a list of requests and counts status codes and non-2xx', async () => {
    const bodies: string[] = [];
    const server = await track(
      httpServer((req, res) => {
        let body = '';
        req.on('data', (chunk) => {
          body += chunk;
        });
        req.on('end', () => {
          bodies.push(`${req.method} ${req.url} ${body}`);
          res.statusCode = req.url === '/missing' ? 404 : req.method === 'POST' ? 201 : 200;
          res.end();
        });
      }),
    );
    const result = await run({
      url: `${server.url}/`,
      amount: 300,
      connections: 1,
      requests: [
        { path: '/ok' },
        { path: '/missing' },
        { method: 'POST', path: '/items', body: '{"a":1}', headers: { 'content-type': 'application/json' } },
      ],
    });
    expect(result.statusCodes).toEqual({ '200': 100, '201': 100, '404': 100 });
    expect(result.non2xx).toBe(100);
    expect(bodies.filter((b) => b === 'POST /items {"a":1}')).toHaveLength(100);
  });

  it('pipelines requests and reads chunked bodies', async () => {
    let seen = 0;
    const server = await track(
      httpServer((_req, res) => {
        seen++;
        res.write('part one;');
        res.end('part two');
      }),
    );
    const result = await run({ url: `${server.url}/`, amount: 2000, connections: 4, pipelining: 8 });
    expect(result.requests.total).toBe(2000);
    expect(seen).toBe(2000);
    expect(result.errors).toBe(0);
  });

  it('reconnects after `Connection: close` and still sends exactly `amount`', async () => {
    let seen = 0;
    const server = await track(
      httpServer((_req, res) => {
        seen++;
        if (seen % 10 === 0) res.setHeader('connection', 'close');
        res.end('x');
      }),
    );
    const result = await run({ url: `${server.url}/`, amount: 500, connections: 2 });
    expect(result.requests.total).toBe(500);
    expect(result.errors).toBe(0);
    expect(seen).toBe(500);
    // Pipelined: the requests behind the closing response are sent again on a new connection.
    const pipelined = await run({ url: `${server.url}/`, amount: 500, connections: 2, pipelining: 4 });
    expect(pipelined.requests.total).toBe(500);
    expect(pipelined.errors).toBe(0);
  });

  it('expects no body after HEAD even when Content-Length says otherwise', async () => {
    const server = await track(
      httpServer((req, res) => {
        res.setHeader('content-length', '1000');
        if (req.method === 'HEAD') res.end();
        else res.end('y'.repeat(1000));
      }),
    );
    const result = await run({
      url: `${server.url}/`,
      amount: 400,
      connections: 2,
      pipelining: 4,
      requests: [{ method: 'HEAD' }, { method: 'GET' }],
    });
    expect(result.requests.total).toBe(400);
    expect(result.errors).toBe(0);
  });

  it('excludes the warm-up from the results', async () => {
    let seen = 0;
    const server = await track(
      httpServer((_req, res) => {
        seen++;
        res.end('x');
      }),
    );
    const result = await run({ url: `${server.url}/`, amount: 200, warmup: 0.3, connections: 2 });
    expect(result.requests.total).toBe(200);
    expect(seen).toBeGreaterThan(200);
  });

  it('stops on an abort signal and returns the partial result', async () => {
    const server = await track(httpServer((_req, res) => res.end('x')));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const result = await run({
      url: `${server.url}/`,
      duration: 60,
      connections: 2,
      signal: controller.signal,
    });
    expect(result.aborted).toBe(true);
    expect(result.duration).toBeLessThan(30);
    expect(result.requests.total).toBeGreaterThan(0);
  });

  it('spreads requests evenly in the open model and measures from the intended send time', async () => {
    const arrivals: number[] = [];
    const server = await track(
      httpServer((_req, res) => {
        arrivals.push(performance.now());
        res.end('x');
      }),
    );
    const result = await run({ url: `${server.url}/`, amount: 100, rate: 100, connections: 4 });
    expect(result.requests.total).toBe(100);
    // 100 requests at 100/s take about one second, not a burst.
    const span = Math.max(...arrivals) - Math.min(...arrivals);
    expect(span).toBeGreaterThan(800);
    expect(result.rate).toBe(100);
  });

  it('counts latency from the intended time when the server stalls (coordinated omission)', async () => {
    let n = 0;
    const server = await track(
      httpServer((_req, res) => {
        n++;
        // One response in the run stalls 500 ms; the schedule keeps going on the other connection.
        if (n === 20) setTimeout(() => res.end('x'), 500);
        else res.end('x');
      }),
    );
    const result = await run({ url: `${server.url}/`, amount: 100, rate: 50, connections: 1 });
    expect(result.requests.total).toBe(100);
    // With one connection, ~25 requests queue behind the stall: their latency counts the wait
    // from their intended send time, so p90 shows it (a closed-model count would see one slow request).
    expect(result.latency.max).toBeGreaterThanOrEqual(450);
    expect(result.latency.p90).toBeGreaterThan(100);
  });
});

describe('run() error kinds', () => {
  it('rejects with HP_LOAD_UNREACHABLE when nothing listens', async () => {
    const server = await tcpServer(() => {});
    const url = server.url;
    await server.close();
    const error = await run({ url: `${url}/`, amount: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HotpathLoadError);
    expect((error as HotpathLoadError).code).toBe('HP_LOAD_UNREACHABLE');
  });

  it('counts a server closing mid-response as an error, never a success', async () => {
    const server = await track(
      tcpServer((socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly a part');
        setTimeout(() => socket.destroy(), 5);
      }),
    );
    const result = await run({ url: `${server.url}/`, amount: 20, connections: 2 });
    expect(result.requests.total).toBe(0);
    expect(result.errors).toBe(20);
    expect((result.errorsByKind.closed ?? 0) + (result.errorsByKind.reset ?? 0)).toBe(20);
  });

  it('reads close-delimited bodies as successes', async () => {
    const server = await track(
      tcpServer((socket) => {
        socket.end('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody until close');
      }),
    );
    const result = await run({ url: `${server.url}/`, amount: 20, connections: 2 });
    expect(result.requests.total).toBe(20);
    expect(result.errors).toBe(0);
  });

  it('counts garbage as parse errors', async () => {
    const server = await track(tcpServer((socket) => socket.write('SSH-2.0-OpenSSH\r\n\r\n')));
    const result = await run({ url: `${server.url}/`, amount: 10, connections: 1 });
    expect(result.errorsByKind).toEqual({ parse: 10 });
    expect(result.requests.total).toBe(0);
  });

  it('counts requests without an answer as timeouts', async () => {
    const server = await track(tcpServer(() => {}));
    const result = await run({ url: `${server.url}/`, amount: 4, connections: 2, timeout: 0.2 });
    expect(result.errorsByKind).toEqual({ timeout: 4 });
  });

  it('counts a reset as a reset', async () => {
    const server = await track(tcpServer((socket) => socket.resetAndDestroy()));
    const result = await run({ url: `${server.url}/`, amount: 10, connections: 1 });
    expect(result.errors).toBe(10);
    expect(Object.keys(result.errorsByKind)).toEqual(['reset']);
  });
});

describe('run() against a server that never accepts', () => {
  it.skipIf(!existsSync('/usr/bin/python3'))(
    'ends by connect and request timeouts instead of hanging',
    async () => {
      // A listener with a backlog of 0 that never accepts: the kernel completes one handshake,
      // then drops further SYNs, so later connects hang until the client gives up on them.
      const child = spawn(
        '/usr/bin/python3',
        [
          '-c',
          'import socket,sys,time\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(120)',
        ],
        { stdio: ['ignore', 'pipe', 'ignore'] },
      );
      try {
        const port = await new Promise<number>((resolve) => {
          child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim())));
        });
        const result = await run({
          url: `http://127.0.0.1:${port}/`,
          amount: 6,
          connections: 4,
          timeout: 0.3,
        });
        expect(result.requests.total).toBe(0);
        expect(result.errors).toBe(6);
        expect((result.errorsByKind.timeout ?? 0) + (result.errorsByKind.connect ?? 0)).toBe(6);
      } finally {
        child.kill('SIGKILL');
      }
    },
  );
});
