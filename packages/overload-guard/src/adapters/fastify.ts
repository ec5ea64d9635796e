import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdapterContext } from './context.js';

/** The parts of a Fastify request the plugin uses. */
export interface FastifyRequestLike {
  raw: IncomingMessage;
  url: string;
}

/** The parts of a Fastify reply the plugin uses. */
export interface FastifyReplyLike {
  raw: ServerResponse;
  code(statusCode: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  type(contentType: string): FastifyReplyLike;
  send(payload?: unknown): FastifyReplyLike;
  hijack(): FastifyReplyLike;
}

/** The parts of a Fastify instance the plugin uses. */
export interface FastifyInstanceLike {
  // biome-ignore lint/suspicious/noExplicitAny: fastify's own hook types are overloaded per hook name
  addHook(name: string, hook: (...args: any[]) => unknown): unknown;
  // biome-ignore lint/suspicious/noExplicitAny: fastify's own route options type
  route(options: any): unknown;
}

/**
 * `app.register(guard.fastify)` before the routes: an onRequest hook on every route added
 * afterwards, in any scope (not encapsulated), except routes that opt out.
 */
export type FastifyGuardPlugin = (
  instance: FastifyInstanceLike,
  options: unknown,
  done: (error?: Error) => void,
) => void;

/** Route-level opt-out: `{ config: { overloadGuard: false } }` in a route's options. */
function optedOut(config: unknown): boolean {
  return (
    typeof config === 'object' &&
    config !== null &&
    (config as { overloadGuard?: unknown }).overloadGuard === false
  );
}

/** A route's options as Fastify's onRoute hook passes them (the parts the plugin uses). */
interface FastifyRouteLike {
  config?: unknown;
  onRequest?: unknown;
}

export function fastifyAdapter(guard: AdapterContext): FastifyGuardPlugin {
  const shed = guard.response;
  const options = guard.options;
  const answerHealth = (reply: FastifyReplyLike): void => {
    const { statusCode, body } = guard.healthResponse();
    reply.code(statusCode).header('cache-control', 'no-store').type('application/json; charset=utf-8');
    if (statusCode !== 200) reply.header('retry-after', shed.retryAfter);
    reply.send(body);
  };
  const onRequest = (
    request: FastifyRequestLike,
    reply: FastifyReplyLike,
    done: (error?: Error) => void,
  ): void => {
    const decision = guard.decide(request.url, reply.raw);
    if (decision === 'pass') {
      done();
      return;
    }
    if (decision === 'health') {
      // a route of the app's own that Fastify matched for a spelling of the health path
      answerHealth(reply);
      return;
    }
    if (options.onShed) {
      reply.hijack();
      options.onShed(request.raw, reply.raw, guard.shedReason);
      return;
    }
    reply
      .code(shed.statusCode)
      .header('retry-after', shed.retryAfter)
      .header('cache-control', 'no-store')
      .type(shed.contentType)
      .send(shed.body);
  };
  const plugin: FastifyGuardPlugin = (instance, _options, done) => {
    if (options.healthPath !== undefined) {
      instance.route({
        method: ['GET', 'HEAD'],
        url: options.healthPath,
        config: { overloadGuard: false },
        handler: (_request: FastifyRequestLike, reply: FastifyReplyLike) => answerHealth(reply),
      });
    }
    // The hook goes onto each route as it is added, first in its onRequest list, so the route
    // opt-out is read once per route: `request.routeOptions` builds a new object on every read,
    // which cost a hello-world route about a fifth of its throughput when read per request.
    instance.addHook('onRoute', (route: FastifyRouteLike) => {
      if (optedOut(route.config)) return;
      const own = route.onRequest;
      route.onRequest = own === undefined ? [onRequest] : [onRequest, ...(Array.isArray(own) ? own : [own])];
    });
    done();
  };
  // what fastify-plugin would set: apply to the parent scope, with a readable name
  const meta = plugin as unknown as Record<symbol, unknown>;
  meta[Symbol.for('skip-override')] = true;
  meta[Symbol.for('fastify.display-name')] = '@hotpath/overload-guard';
  meta[Symbol.for('plugin-meta')] = { name: '@hotpath/overload-guard', fastify: '>=4' };
  return plugin;
}
