import { once } from 'node:events';
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../src/concurrency-limit.js';
import { createGuard } from '../src/index.js';
import { get } from './http-client.js';

const policy = (overrides: Partial<ConstructorParameters<typeof ConcurrencyLimit>[0]>) => ({
  policy: 'fixed' as const,
  initialLimit: 4,
  minLimit: 1,
  maxLimit: 100,
  latencyThreshold: 50,
  backoffRatio: 0.5,
  ...overrides,
});

describe('ConcurrencyLimit', () => {
  it('fixed: admits up to the limit and frees a slot on release', () => {
    const limit = new ConcurrencyLimit(policy({ initialLimit: 2 }));
    expect([limit.tryAcquire(), limit.tryAcquire(), limit.tryAcquire()]).toEqual([true, true, false]);
    limit.release(1_000);
    expect(limit.inFlight).toBe(1);
    expect(limit.tryAcquire()).toBe(true);
    expect(limit.limit).toBe(2);
  });

  it('aimd: halves on a slow request or a shed, grows by one per limit-worth of fast ones', () => {
    const limit = new ConcurrencyLimit(policy({ policy: 'aimd', initialLimit: 8 }));
    limit.tryAcquire();
    limit.release(80);
    expect(limit.limit).toBe(4);
    limit.onShed();
    expect(limit.limit).toBe(2);
    for (let i = 0; i < 40; i++) {
      limit.tryAcquire();
      limit.tryAcquire();
      limit.release(5);
      limit.release(5);
    }
    expect(limit.limit).toBeGreaterThan(4);
    expect(limit.limit).toBeLessThan(20);
  });

  it('gradient: grows while latency is steady and shrinks when it climbs (queueing)', () => {
    const limit = new ConcurrencyLimit(policy({ policy: 'gradient', initialLimit: 10 }));
    for (let i = 0; i < 50; i++) {
      limit.tryAcquire();
      limit.release(10);
    }
    const grown = limit.limit;
    expect(grown).toBeGreaterThan(10);
    for (let i = 0; i < 50; i++) {
      limit.tryAcquire();
      limit.release(200);
    }
    expect(limit.limit).toBeLessThan(grown);
    expect(limit.limit).toBeGreaterThanOrEqual(1);
  });
});

describe('guard with a concurrency policy', () => {
  const closers: Array<() => void> = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });

  it('sheds requests beyond the fixed limit with reason concurrency, and frees slots when responses end', async () => {
    const guard = createGuard({ maxEventLoopDelay: 0, concurrency: { policy: 'fixed', initialLimit: 2 } });
    const server = createServer(
      guard.http((_req, res) => {
        setTimeout(() => res.end('slow'), 300);
      }),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(
      () => guard.close(),
      () => {
        server.closeAllConnections();
        server.close();
      },
    );
    const port = (server.address() as { port: number }).port;
    const reasons: string[] = [];
    guard.on('overloaded', (reason) => reasons.push(reason));

    const replies = await Promise.all([get(port), get(port), get(port), get(port)]);
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses).toEqual([200, 200, 503, 503]);
    expect(replies.find((reply) => reply.status === 503)?.headers['retry-after']).toBe('1');
    expect(reasons).toEqual(['concurrency']);
    expect(guard.status()).toMatchObject({ inFlight: 0, concurrencyLimit: 2, reason: 'concurrency' });
    expect((await get(port)).status).toBe(200);
  });
});
