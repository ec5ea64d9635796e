import { once } from 'node:events';
import type { Server } from 'node:http';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import Koa from 'koa';
import restify from 'restify';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, type GuardOptions, type OverloadGuard } from '../src/index.js';
import { get } from './http-client.js';

const cleanup: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
}

function portOf(server: Server): number {
  return (server.address() as { port: number }).port;
}

/** Starts the real framework with the guard mounted, routes '/', '/open' and '/opt-out'. */
type Start = (guard: OverloadGuard) => Promise<number>;

const frameworks: Record<string, Start> = {
  express: async (guard) => {
    const app = express();
    app.use(guard.express());
    for (const path of ['/', '/open', '/opt-out'])
      app.get(path, (_req, res) => void res.send(`express ${path}`));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup.push(() => closeServer(server));
    return portOf(server);
  },
  koa: async (guard) => {
    const app = new Koa();
    app.use(guard.koa());
    app.use((ctx) => {
      ctx.body = `koa ${ctx.path}`;
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup.push(() => closeServer(server));
    return portOf(server);
  },
  fastify: async (guard) => {
    const app: FastifyInstance = Fastify({ logger: false });
    await app.register(guard.fastify);
    app.get('/', async () => 'fastify /');
    app.get('/open', async () => 'fastify /open');
    app.get('/opt-out', { config: { overloadGuard: false } }, async () => 'fastify /opt-out');
    await app.listen({ port: 0, host: '127.0.0.1' });
    cleanup.push(() => app.close());
    return portOf(app.server);
  },
  restify: async (guard) => {
    const server = restify.createServer();
    server.pre(guard.restify());
    for (const path of ['/', '/open', '/opt-out']) {
      server.get(path, (_req, res, next) => {
        res.sendRaw(200, `restify ${path}`, { 'content-type': 'text/plain' });
        next();
      });
    }
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup.push(() => closeServer(server.server));
    return portOf(server.server);
  },
};

async function overloadedGuard(options: GuardOptions = {}): Promise<OverloadGuard> {
  const guard = createGuard({ maxRssBytes: 1, exclude: ['/open'], healthPath: '/health', ...options });
  cleanup.push(() => guard.close());
  await once(guard, 'overloaded');
  return guard;
}

describe.each(Object.entries(frameworks))('%s adapter against the real framework', (name, start) => {
  it('lets requests through while healthy', async () => {
    const guard = createGuard({ healthPath: '/health' });
    cleanup.push(() => guard.close());
    const port = await start(guard);
    const reply = await get(port, '/');
    expect(reply).toMatchObject({ status: 200, body: expect.stringContaining(`${name} /`) });
    const health = await get(port, '/health');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toMatchObject({ overloaded: false });
    expect(guard.status().admitted).toBeGreaterThanOrEqual(1);
  });

  it('sheds with 503, Retry-After and the JSON body; keeps excluded paths and the health endpoint', async () => {
    const guard = await overloadedGuard();
    const port = await start(guard);
    const shed = await get(port, '/');
    expect(shed.status).toBe(503);
    expect(shed.headers['retry-after']).toBe('1');
    expect(shed.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(shed.body)).toMatchObject({ code: 'HP_GUARD_OVERLOADED', statusCode: 503 });
    expect((await get(port, '/open')).status).toBe(200);
    const health = await get(port, '/health');
    expect(health.status).toBe(503);
    expect(health.headers['retry-after']).toBe('1');
    expect(JSON.parse(health.body)).toMatchObject({ overloaded: true, reason: 'rssBytes' });
    expect(guard.status().shed).toBeGreaterThanOrEqual(1);
  });

  it('hands shed requests to a custom onShed handler', async () => {
    const guard = await overloadedGuard({
      onShed: (_req, res, reason) => {
        res.writeHead(503, { 'content-type': 'text/plain', 'x-reason': reason });
        res.end(`busy (${reason})`);
      },
    });
    const port = await start(guard);
    const reply = await get(port, '/');
    expect(reply).toMatchObject({ status: 503, body: 'busy (rssBytes)' });
    expect(reply.headers['x-reason']).toBe('rssBytes');
  });
});

describe('fastify route opt-out', () => {
  it('never sheds a route whose config says overloadGuard: false', async () => {
    const guard = await overloadedGuard();
    const port = await frameworks.fastify!(guard);
    expect((await get(port, '/')).status).toBe(503);
    expect(await get(port, '/opt-out')).toMatchObject({ status: 200, body: 'fastify /opt-out' });
  });

  it("guards routes of encapsulated child plugins and runs before a route's own onRequest hooks", async () => {
    const guard = await overloadedGuard();
    const app = Fastify();
    cleanup.push(() => app.close());
    await app.register(guard.fastify);
    const ownHookRuns: string[] = [];
    await app.register(async (child) => {
      child.get('/child', async () => 'child');
      child.get(
        '/own-hook',
        {
          onRequest: (request, _reply, done) => {
            ownHookRuns.push(request.url);
            done();
          },
        },
        async () => 'own hook',
      );
      child.get('/child-open', { config: { overloadGuard: false } }, async () => 'child open');
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    expect((await get(port, '/child')).status).toBe(503);
    expect((await get(port, '/own-hook')).status).toBe(503);
    expect(ownHookRuns).toEqual([]); // shed before the route's own hook ran
    expect(await get(port, '/child-open')).toMatchObject({ status: 200, body: 'child open' });
  });
});
