import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, HotpathGuardError, type OverloadGuard, type OverloadReason } from '../src/index.js';
import { get } from './http-client.js';

/**
 * Keeps the loop busy until this process has used `ms` of CPU (not wall time): the guard sheds
 * only when the turn really worked past half of maxEventLoopDelay of CPU, so on a contended
 * machine (CI) a wall-clock burn could leave three 60 ms requests under that floor.
 */
function burn(ms: number): void {
  const cpu = () => {
    const usage = process.cpuUsage();
    return usage.user + usage.system;
  };
  const end = cpu() + ms * 1000;
  while (cpu() < end) {
    // the loop cannot turn
  }
}

const cleanup: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

function track(guard: OverloadGuard): OverloadGuard {
  cleanup.push(() => guard.close());
  return guard;
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as { port: number }).port;
}

const hello = (_req: unknown, res: { end(body: string): void }) => res.end('hello');

describe('createGuard options', () => {
  it('applies defaults that never shed on their own', () => {
    const guard = track(createGuard());
    expect(guard.options).toMatchObject({
      maxEventLoopDelay: 100,
      maxEventLoopUtilization: 0,
      maxHeapUsedBytes: 0,
      maxRssBytes: 0,
      sampleInterval: 10,
      retryAfter: 1,
      statusCode: 503,
    });
    const status = guard.status();
    expect(status).toMatchObject({ overloaded: false, reason: null, healthy: true, shed: 0, closed: false });
    expect(status.inFlight).toBeNull();
    expect(status.rssBytes).toBeGreaterThan(status.heapUsedBytes);
  });

  it.each([
    [{ maxEventLoopDelay: -1 }, /invalid maxEventLoopDelay -1: expected 0 \(off\) or a positive number/],
    [
      { maxEventLoopUtilization: 1.5 },
      /invalid maxEventLoopUtilization 1.5: expected 0 \(off\) or a number in/,
    ],
    [{ sampleInterval: 0 }, /invalid sampleInterval 0: expected a number of milliseconds >= 1/],
    [{ retryAfter: 1.5 }, /invalid retryAfter 1.5: expected an integer >= 0/],
    [{ statusCode: 200 }, /invalid statusCode 200: expected an integer >= 400/],
    [{ healthCheck: true }, /invalid healthCheck true: expected a function/],
    [{ healthPath: 'health' }, /invalid healthPath "health": expected a path starting with '\/'/],
    [{ exclude: 'x' }, /invalid exclude "x": expected an array of paths/],
    [
      { maxEventLoopDelai: 5 },
      /unknown option "maxEventLoopDelai": expected only the documented option names/,
    ],
    [
      { concurrency: { initialLimit: 5, maxLimit: 2 } },
      /invalid concurrency .*minLimit <= initialLimit <= maxLimit/,
    ],
    [
      { concurrency: { policy: 'vegas' } },
      /invalid concurrency.policy "vegas": expected 'fixed', 'aimd' or 'gradient'/,
    ],
  ])('rejects %j naming the value and what was expected', (options, message) => {
    let error: unknown;
    try {
      createGuard(options as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(HotpathGuardError);
    expect((error as HotpathGuardError).code).toBe('HP_GUARD_INVALID_OPTION');
    expect((error as Error).message).toMatch(message);
  });
});

describe('per-request admission', () => {
  it('cuts a batch that arrived in one busy loop turn once the turn has run past maxEventLoopDelay', async () => {
    const guard = track(createGuard({ maxEventLoopDelay: 100 }));
    const port = await listen(
      createServer(
        guard.http((_req, res) => {
          burn(60);
          res.end('done');
        }),
      ),
    );
    const sockets: Socket[] = [];
    for (let i = 0; i < 6; i++) {
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      sockets.push(socket);
      cleanup.push(() => void socket.destroy());
    }
    const replies = sockets.map(
      (socket) =>
        new Promise<string>((resolve) => {
          let text = '';
          socket.on('data', (chunk: Buffer) => {
            text += chunk.toString('latin1');
            if (/\r\n\r\n[\s\S]*(done|HP_GUARD_OVERLOADED)/.test(text)) resolve(text);
          });
        }),
    );
    // all six requests are on the wire before the server's loop gets to read any of them
    for (const socket of sockets) socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const texts = await Promise.all(replies);
    const ok = texts.filter((text) => text.startsWith('HTTP/1.1 200'));
    const shed = texts.filter((text) => text.startsWith('HTTP/1.1 503'));
    // 60 ms each: at most two fit in 100 ms, the rest of the batch is shed at once (on a very
    // busy machine the loop may already lag, and even the first is shed)
    expect(ok.length).toBeLessThanOrEqual(2);
    expect(shed.length).toBe(6 - ok.length);
    for (const text of shed) {
      expect(text).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(text).toContain('"code":"HP_GUARD_OVERLOADED"');
    }
    expect(guard.status()).toMatchObject({ overloaded: true, reason: 'eventLoopDelay', shed: shed.length });
  });

  it('emits overloaded and recovered, and sheds while a health check fails', async () => {
    let healthy = true;
    const guard = track(
      createGuard({ healthCheck: () => healthy, healthCheckInterval: 20, recoveryTime: 50 }),
    );
    const port = await listen(createServer(guard.http(hello)));
    expect((await get(port)).status).toBe(200);

    const overloaded = once(guard, 'overloaded');
    healthy = false;
    expect(await overloaded).toEqual(['healthCheck']);
    const shed = await get(port);
    expect(shed.status).toBe(503);
    expect(shed.headers['retry-after']).toBe('1');
    expect(shed.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(shed.body)).toMatchObject({ statusCode: 503, code: 'HP_GUARD_OVERLOADED' });
    expect(guard.status()).toMatchObject({ overloaded: true, reason: 'healthCheck', healthy: false });

    const recovered = once(guard, 'recovered');
    healthy = true;
    await recovered;
    expect((await get(port)).status).toBe(200);
    expect(guard.status().overloaded).toBe(false);
  });

  it('treats a throwing or rejecting health check as unhealthy and reports it', async () => {
    const guard = track(
      createGuard({
        healthCheck: () => Promise.reject(new Error('database down')),
        healthCheckInterval: 20,
      }),
    );
    const [error] = (await once(guard, 'healthCheckError')) as [HotpathGuardError];
    expect(error.code).toBe('HP_GUARD_HEALTH_CHECK_FAILED');
    expect(error.message).toContain('database down');
    expect((error.cause as Error).message).toBe('database down');
    const [reason] = (await once(guard, 'overloaded')) as [OverloadReason];
    expect(reason).toBe('healthCheck');
  });

  it('sheds on a heap limit with a custom status and text body', async () => {
    const guard = track(
      createGuard({ maxHeapUsedBytes: 1, statusCode: 429, body: 'slow down', retryAfter: 7 }),
    );
    await once(guard, 'overloaded');
    const port = await listen(createServer(guard.http(hello)));
    const reply = await get(port);
    expect(reply).toMatchObject({ status: 429, body: 'slow down' });
    expect(reply.headers['retry-after']).toBe('7');
    expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(guard.status().reason).toBe('heapUsedBytes');
  });

  it('sheds on an RSS limit through a custom onShed handler', async () => {
    const reasons: string[] = [];
    const guard = track(
      createGuard({
        maxRssBytes: 1,
        onShed: (req, res, reason) => {
          reasons.push(`${req.url} ${reason}`);
          res.writeHead(503, { 'x-shed': reason });
          res.end('custom');
        },
      }),
    );
    await once(guard, 'overloaded');
    const port = await listen(createServer(guard.http(hello)));
    const reply = await get(port, '/a?b=1');
    expect(reply).toMatchObject({ status: 503, body: 'custom' });
    expect(reply.headers['x-shed']).toBe('rssBytes');
    expect(reasons).toEqual(['/a?b=1 rssBytes']);
  });

  it('never sheds excluded paths, and answers the health endpoint with its status', async () => {
    const guard = track(
      createGuard({ maxRssBytes: 1, exclude: ['/metrics', /^\/static\//], healthPath: '/health' }),
    );
    await once(guard, 'overloaded');
    const port = await listen(createServer(guard.http(hello)));
    expect((await get(port, '/metrics?x=1')).status).toBe(200);
    expect((await get(port, '/static/app.js')).status).toBe(200);
    expect((await get(port, '/other')).status).toBe(503);
    const health = await get(port, '/health');
    expect(health.status).toBe(503);
    expect(JSON.parse(health.body)).toMatchObject({ overloaded: true, reason: 'rssBytes' });

    const fine = track(createGuard({ healthPath: '/health' }));
    const finePort = await listen(createServer(fine.http(hello)));
    const ok = await get(finePort, '/health');
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ overloaded: false, shed: 0 });
  });

  it('after close() admits everything and refuses to build adapters', async () => {
    const guard = createGuard({ maxRssBytes: 1 });
    await once(guard, 'overloaded');
    const handler = guard.http(hello);
    guard.close();
    guard.close();
    const port = await listen(createServer(handler));
    expect((await get(port)).status).toBe(200);
    expect(guard.status().closed).toBe(true);
    expect(() => guard.express()).toThrow(expect.objectContaining({ code: 'HP_GUARD_CLOSED' }));
    expect(() => guard.http(hello)).toThrow(/guard.http\(\): the guard was closed/);
  });
});
