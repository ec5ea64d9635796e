import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import Koa from 'koa';
import restify from 'restify';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, type GuardOptions, type OverloadGuard } from '../src/index.js';
import { get, rawGet } from './http-client.js';

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

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(() => closeServer(server));
  return portOf(server);
}

const frameworks = {
  'node:http': (guard) => listen(createServer(guard.http((req, res) => res.end(`node:http ${req.url}`)))),
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
} satisfies Record<string, Start>;

async function overloadedGuard(options: GuardOptions = {}): Promise<OverloadGuard> {
  const guard = createGuard({ maxRssBytes: 1, exclude: ['/open'], healthPath: '/health', ...options });
  cleanup.push(() => guard.close());
  await once(guard, 'overloaded');
  return guard;
}

describe.each(Object.entries(frameworks))('%s adapter against the real framework', (name, start) => {
  const label = name === 'node:http' ? 'node:http' : name;
  it('lets requests through while healthy', async () => {
    const guard = createGuard({ healthPath: '/health' });
    cleanup.push(() => guard.close());
    const port = await start(guard);
    const reply = await get(port, '/');
    expect(reply).toMatchObject({ status: 200, body: expect.stringContaining(`${label} /`) });
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
    const port = await frameworks.fastify(guard);
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

/** A Fastify app with its router told to ignore trailing and repeated slashes. */
const lenientFastify: Start = async (guard) => {
  const app: FastifyInstance = Fastify({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true });
  await app.register(guard.fastify);
  app.get('/', async () => 'fastify /');
  app.get('/open', async () => 'fastify /open');
  await app.listen({ port: 0, host: '127.0.0.1' });
  cleanup.push(() => app.close());
  return portOf(app.server);
};

// Spellings of '/health' and of the exempt '/open' that routers resolve to the same route. Sent
// on raw sockets, so absolute-form targets and '//' reach the server byte for byte.
const SPELLINGS = ['?probe=1', '/', '//', '//?probe=1', 'absolute', 'absolute/?probe=1', 'double'] as const;
function spell(path: string, how: (typeof SPELLINGS)[number]): string {
  switch (how) {
    case 'absolute':
      return `http://127.0.0.1${path}`;
    case 'absolute/?probe=1':
      return `http://127.0.0.1${path}/?probe=1`;
    case 'double':
      return `/${path}`;
    default:
      return `${path}${how}`;
  }
}

// Which spellings each framework's own router sends to the route (the others it answers 404):
// Express and restify route a trailing slash (restify not), Fastify neither unless told to.
const routedByFramework: Record<string, ReadonlyArray<(typeof SPELLINGS)[number]>> = {
  'node:http': SPELLINGS,
  express: ['?probe=1', '/', 'absolute', 'absolute/?probe=1'],
  koa: SPELLINGS,
  fastify: ['?probe=1', 'absolute'],
  'fastify, lenient router': SPELLINGS,
  restify: ['?probe=1', 'absolute'],
};

describe.each(Object.entries({ ...frameworks, 'fastify, lenient router': lenientFastify }))(
  '%s: health and exempt paths as the router matches them',
  (name, start) => {
    it.each(SPELLINGS)(
      "'%s' never turns the health endpoint or an exempt route into a shed 503",
      async (how) => {
        const guard = await overloadedGuard();
        const port = await start(guard);
        const routes = routedByFramework[name];
        if (!routes) throw new Error(`routedByFramework has no entry for ${name}`);
        const routed = routes.includes(how);
        // the guard's health endpoint (answered by the guard: 503 with its status, since it sheds)
        const health = await rawGet(port, spell('/health', how));
        expect(health.body).not.toContain('HP_GUARD_OVERLOADED');
        if (name.startsWith('fastify') && !routed) expect(health.status).toBe(404);
        else {
          expect(health.status).toBe(503);
          expect(JSON.parse(health.body)).toMatchObject({ overloaded: true, reason: 'rssBytes' });
        }
        // an app route in `exclude`
        const open = await rawGet(port, spell('/open', how));
        expect(open.body).not.toContain('HP_GUARD_OVERLOADED');
        if (routed) expect(open).toMatchObject({ status: 200, body: expect.stringContaining('/open') });
        else expect(open.status).toBe(404);
        // and the guard still sheds other routes, in origin-form and absolute-form alike
        const other = await rawGet(
          port,
          how.startsWith('absolute') ? 'http://127.0.0.1/?probe=1' : '/?probe=1',
        );
        expect(other.status).toBe(503);
        expect(other.body).toContain('HP_GUARD_OVERLOADED');
      },
    );
  },
);
