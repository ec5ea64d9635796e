// Who issued a call, where the write comes later than the user's call (bundled into probe.cjs
// with probe-downstream.ts): http.request/get and fetch, whose agent or undici writes on a later
// tick, and node-postgres's query, which its pool writes on a later tick. Each is wrapped to take
// the caller's origin (the request's context, and the stack when one is due) and hand it to the
// write: on the ClientRequest (the socket's `_httpMessage`), through undici's `request:create` and
// `client:sendHeaders` channels, or in an AsyncLocalStorage around the call.
import { type AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import http from 'node:http';
import https from 'node:https';
import Module from 'node:module';
import type { RequestContext } from './probe-downstream-requests.js';

export const ORIGIN = Symbol('hotpath.downstream.origin');

/** node-postgres's entry module, wherever it is installed (npm, pnpm's .pnpm/…). */
const PG_ENTRY = /[\\/]node_modules[\\/]pg[\\/]lib[\\/]index\.js$/;

/**
 * Who issued a call: the user's frames (function indices, outermost first; undefined when no
 * stack was taken for it) and the request.
 */
export interface Origin {
  frames: number[] | undefined;
  /** The function that resumed from an await to make the call (a function index; -1: none). */
  resumed: number;
  context: RequestContext | undefined;
}

/** What the wrappers need of the recorder. */
export interface OriginSource {
  /** A window is open (outside one, nothing is taken). */
  readonly open: boolean;
  readonly originStore: AsyncLocalStorage<Origin>;
  /** Whether a stack may be taken now. */
  stackDue(): boolean;
  origin(below: (...args: never[]) => unknown, withStack: boolean): Origin;
  /** The origin of the call the socket's next write starts. */
  setPending(socket: unknown, origin: Origin): void;
}

function callWith(fn: (...args: never[]) => unknown, self: unknown, args: never[]): unknown {
  return fn.apply(self, args);
}

/**
 * A client function whose write comes later: called in an origin of its own (always, or unless a
 * stack was taken and held no user frame), so that the write finds it. With no stack due at the
 * call, the write must not take one either: in a driver's own callbacks it would find none of the
 * user's frames, and every call it stood for would be in no function's row.
 */
function wrapDeferred<F extends (...args: never[]) => unknown>(
  source: OriginSource,
  original: F,
  always = false,
): F {
  const wrapped = function deferredRecorded(this: unknown, ...args: Parameters<F>) {
    if (!source.open) return original.apply(this, args);
    const withStack = source.stackDue();
    // called by an outer wrapped call (a pool's query calls its client's): the outer origin holds
    if (!withStack && source.originStore.getStore() !== undefined) return original.apply(this, args);
    const origin = source.origin(deferredRecorded, withStack);
    if (!always && origin.frames?.length === 0) return original.apply(this, args);
    return source.originStore.run(origin, callWith, original, this, args);
  };
  return wrapped as unknown as F;
}

function patchPg(source: OriginSource, pg: unknown): void {
  for (const name of ['Pool', 'Client'] as const) {
    const prototype = (pg as Record<string, { prototype?: { query?: unknown } } | undefined>)?.[name]
      ?.prototype;
    if (prototype && typeof prototype.query === 'function')
      prototype.query = wrapDeferred(source, prototype.query as (...args: never[]) => unknown);
  }
  // A busy pool queues the caller's callback and runs it when another query releases a client,
  // in that query's async context: the write would be another request's (under 50 connections on a
  // pool of 4, waiting per request read 48 µs where each request waited 19 ms). Bound to the
  // caller's context (its request and its origin), the callback writes as the caller.
  const pool = (pg as { Pool?: { prototype?: { connect?: unknown } } })?.Pool?.prototype;
  const connect = pool?.connect;
  if (pool && typeof connect === 'function')
    pool.connect = function connectBound(this: unknown, callback?: unknown, ...rest: unknown[]) {
      const bound = typeof callback === 'function' ? AsyncResource.bind(callback as () => void) : callback;
      return (connect as (...args: unknown[]) => unknown).call(this, bound, ...rest);
    };
}

/** node-postgres's query, wrapped where it loads: Module#load runs for it whether required or imported. */
function installPg(source: OriginSource): void {
  const prototype = (Module as unknown as { prototype?: { load?: (filename: string) => void } }).prototype;
  const load = prototype?.load;
  if (!prototype || typeof load !== 'function') return;
  // each copy of node-postgres once (a module's file is loaded once)
  prototype.load = function loadRecorded(this: { exports?: unknown }, filename: string) {
    load.call(this, filename);
    if (typeof filename === 'string' && PG_ENTRY.test(filename)) {
      try {
        patchPg(source, this.exports);
      } catch {
        // a pg of another shape: its calls are recorded all the same, from the write's stack
      }
    }
  };
}

/** fetch: its origin travels with undici's request to the socket that writes it. */
function installFetch(source: OriginSource): void {
  if (typeof globalThis.fetch === 'function') globalThis.fetch = wrapDeferred(source, globalThis.fetch, true);
  subscribe('undici:request:create', (message) => {
    try {
      const request = (message as { request?: { [ORIGIN]?: Origin } }).request;
      const origin = source.originStore.getStore();
      if (request && origin) request[ORIGIN] = origin;
    } catch {
      // not for us
    }
  });
  subscribe('undici:client:sendHeaders', (message) => {
    try {
      const { request, socket } = message as { request?: { [ORIGIN]?: Origin }; socket?: unknown };
      if (socket && request?.[ORIGIN]) source.setPending(socket, request[ORIGIN]);
    } catch {
      // not for us
    }
  });
}

/** Wraps http(s).request/get, fetch and node-postgres's query to hand their caller's origin to the write. */
export function installOrigins(source: OriginSource): void {
  for (const module of [http, https]) {
    for (const name of ['request', 'get'] as const) {
      const original = module[name] as (...args: unknown[]) => http.ClientRequest;
      const wrapped = function requestRecorded(this: unknown, ...args: unknown[]) {
        const origin = source.open ? source.origin(requestRecorded, source.stackDue()) : undefined;
        const request = original.apply(this, args) as http.ClientRequest & { [ORIGIN]?: Origin };
        if (origin) request[ORIGIN] = origin;
        return request;
      };
      (module as unknown as Record<string, unknown>)[name] = wrapped;
    }
  }
  installFetch(source);
  installPg(source);
}
