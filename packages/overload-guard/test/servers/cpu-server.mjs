// A server whose route burns CPU synchronously, for the overload tests and the bench.
// Imports the BUILT package by its name (proves the exports map). Reports its port over IPC
// (or prints it when started without IPC).
//   node cpu-server.mjs --framework http|express|koa|fastify|restify|overload-protection|under-pressure
//                       [--guard] [--cpu 10] [--options '{"maxEventLoopDelay":100}'] [--defer] [--hook]
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { createGuard } from '@hotpath/overload-guard';

const require = createRequire(import.meta.url);
const { values } = parseArgs({
  options: {
    framework: { type: 'string', default: 'http' },
    guard: { type: 'boolean', default: false },
    cpu: { type: 'string', default: '10' },
    options: { type: 'string', default: '{}' },
    // http only: do the CPU work in a later loop turn (setImmediate) instead of in the handler
    defer: { type: 'boolean', default: false },
    // fastify only: the app has an onRequest hook of its own (an empty one), as most apps do
    hook: { type: 'boolean', default: false },
  },
});
const cpuMs = Number(values.cpu);
const guard = values.guard ? createGuard(JSON.parse(values.options)) : undefined;
const body = 'ok\n';

// every route but /ping burns cpuMs (the load generator primes its connections on /ping)
function burn(url) {
  if (cpuMs <= 0 || url === '/ping') return;
  const end = performance.now() + cpuMs;
  while (performance.now() < end) {
    // the event loop is blocked for cpuMs
  }
}

function ready(port) {
  if (process.send) process.send({ port });
  else console.log(`listening on ${port}`);
}

process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));

async function main() {
  switch (values.framework) {
    case 'http': {
      const respond = (req, res) => {
        burn(req.url);
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
        res.end(body);
      };
      const handler = values.defer ? (req, res) => setImmediate(respond, req, res) : respond;
      const server = createServer(guard ? guard.http(handler) : handler);
      server.listen(0, '127.0.0.1', () => ready(server.address().port));
      return;
    }
    case 'overload-protection': {
      const protect = require('overload-protection')('http', {
        production: true,
        clientRetrySecs: 1,
        sampleInterval: 10,
        maxEventLoopDelay: 50,
        maxHeapUsedBytes: 0,
        maxRssBytes: 0,
        errorPropagationMode: false,
        logging: false,
      });
      const server = createServer((req, res) => {
        if (protect(req, res) === true) return;
        burn(req.url);
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
        res.end(body);
      });
      server.listen(0, '127.0.0.1', () => ready(server.address().port));
      return;
    }
    case 'express': {
      const express = require('express');
      const app = express();
      if (guard) app.use(guard.express());
      app.get(['/', '/ping'], (req, res) => {
        burn(req.url);
        res.type('text/plain').send(body);
      });
      const server = app.listen(0, '127.0.0.1', () => ready(server.address().port));
      return;
    }
    case 'koa': {
      const Koa = require('koa');
      const app = new Koa();
      if (guard) app.use(guard.koa());
      app.use((ctx) => {
        burn(ctx.url);
        ctx.body = body;
      });
      const server = app.listen(0, '127.0.0.1', () => ready(server.address().port));
      return;
    }
    case 'fastify':
    case 'under-pressure': {
      const app = require('fastify')({ logger: false });
      if (values.hook) app.addHook('onRequest', (_request, _reply, done) => done());
      if (guard) await app.register(guard.fastify);
      if (values.framework === 'under-pressure') {
        await app.register(require('@fastify/under-pressure'), {
          maxEventLoopDelay: 50,
          sampleInterval: 10,
          retryAfter: 1,
        });
      }
      const route = (request, reply) => {
        burn(request.url);
        reply.type('text/plain').send(body);
      };
      app.get('/', route);
      app.get('/ping', route);
      await app.listen({ port: 0, host: '127.0.0.1' });
      ready(app.server.address().port);
      return;
    }
    case 'restify': {
      const restify = require('restify');
      const server = restify.createServer({ handleUncaughtExceptions: false });
      if (guard) server.pre(guard.restify());
      const route = (req, res, next) => {
        burn(req.url);
        res.sendRaw(200, body, { 'content-type': 'text/plain' });
        next();
      };
      server.get('/', route);
      server.get('/ping', route);
      server.listen(0, '127.0.0.1', () => ready(server.address().port));
      return;
    }
    default:
      console.error(`cpu-server: unknown --framework ${JSON.stringify(values.framework)}`);
      process.exit(2);
  }
}

main();
