import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { type ExpressMiddleware, expressAdapter } from './adapters/express.js';
import { type FastifyGuardPlugin, fastifyAdapter } from './adapters/fastify.js';
import { type HttpHandler, httpAdapter } from './adapters/http.js';
import { type KoaMiddleware, koaAdapter } from './adapters/koa.js';
import { type RestifyHandler, restifyAdapter } from './adapters/restify.js';
import { AdmissionController, type AdmissionListener } from './admission.js';
import { HotpathGuardError } from './errors.js';
import {
  type GuardOptions,
  guardOptionsSchema,
  type OverloadReason,
  type ResolvedGuardOptions,
} from './guard-options.js';
import { buildShedResponse, type ShedResponse, writeShed } from './shed-response.js';
import { parseOptions } from './validate.js';

/** What `guard.status()` returns: the guard's view of the process right now. */
export interface GuardStatus {
  /** True from the first shed (or failing sampled limit) until `recoveryTime` ms pass without one. */
  overloaded: boolean;
  /** The limit that tripped most recently (null if none ever did). */
  reason: OverloadReason | null;
  /** Lag of the most recent heartbeat, in ms. */
  eventLoopDelay: number;
  /** Utilisation over the sliding `utilizationWindow`, 0..1. */
  eventLoopUtilization: number;
  heapUsedBytes: number;
  rssBytes: number;
  /** Result of the last custom health check (true when none is configured). */
  healthy: boolean;
  /** Requests admitted and shed since the guard was created. */
  admitted: number;
  shed: number;
  /** Requests in flight and the current limit, when a concurrency policy is configured. */
  inFlight: number | null;
  concurrencyLimit: number | null;
  closed: boolean;
}

/** Events: 'overloaded' (reason), 'recovered' (), 'healthCheckError' (HotpathGuardError). */
export interface GuardEventMap {
  overloaded: [reason: OverloadReason];
  recovered: [];
  healthCheckError: [error: HotpathGuardError];
}

const PASS = 0;
const HEALTH = 1;
const EXCLUDED = 2;

/**
 * Admission control for HTTP servers. Created by `createGuard`; the adapters (`http`,
 * `express`, `koa`, `fastify`, `restify`) share one decision core.
 */
export class OverloadGuard extends EventEmitter<GuardEventMap> {
  /** Validated options with defaults applied. */
  readonly options: ResolvedGuardOptions;
  /** @internal */ readonly core: AdmissionController;
  /** @internal */ readonly response: ShedResponse;
  private readonly excludedPaths: Set<string>;
  private readonly excludedPatterns: RegExp[];
  /** @internal Whether any path is excluded or answered as health. */
  readonly hasPathRules: boolean;
  private readonly onResponseClose: (this: ServerResponse) => void;
  private readonly startSymbol = Symbol('overload-guard start');

  constructor(options: GuardOptions = {}) {
    super();
    this.options = parseOptions(guardOptionsSchema, options, 'createGuard');
    const listener: AdmissionListener = {
      onOverloaded: (reason) => this.emit('overloaded', reason),
      onRecovered: () => this.emit('recovered'),
      onHealthCheckError: (error) => {
        if (this.listenerCount('healthCheckError') > 0) this.emit('healthCheckError', error);
      },
    };
    this.core = new AdmissionController(this.options, listener);
    this.response = buildShedResponse(this.options);
    this.excludedPaths = new Set(this.options.exclude.filter((rule) => typeof rule === 'string'));
    this.excludedPatterns = this.options.exclude.filter((rule) => rule instanceof RegExp);
    this.hasPathRules = this.options.exclude.length > 0 || this.options.healthPath !== undefined;
    const core = this.core;
    const start = this.startSymbol;
    this.onResponseClose = function onResponseClose(this: ServerResponse) {
      const startedAt = (this as unknown as Record<symbol, number>)[start];
      core.concurrency?.release(performance.now() - startedAt);
    };
    this.fastify = fastifyAdapter(this);
  }

  /** `app.register(guard.fastify)`: a Fastify plugin (onRequest hook, health route, route opt-out). */
  readonly fastify: FastifyGuardPlugin;

  /** Wraps a node:http request listener: `http.createServer(guard.http(handler))`. */
  http<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse>(
    handler: HttpHandler<Req, Res>,
  ): HttpHandler<Req, Res> {
    this.assertOpen('http');
    return httpAdapter(this, handler);
  }

  /** Express/Connect middleware: `app.use(guard.express())` before other middleware. */
  express(): ExpressMiddleware {
    this.assertOpen('express');
    return expressAdapter(this);
  }

  /** Koa middleware: `app.use(guard.koa())` first. */
  koa(): KoaMiddleware {
    this.assertOpen('koa');
    return koaAdapter(this);
  }

  /** Restify handler: `server.pre(guard.restify())`. */
  restify(): RestifyHandler {
    this.assertOpen('restify');
    return restifyAdapter(this);
  }

  /** A snapshot of the guard's state (reads memory now). */
  status(): GuardStatus {
    const core = this.core;
    if (!core.closed) core.readMemory();
    return {
      overloaded: core.overloaded,
      reason: core.lastReason,
      eventLoopDelay: core.rawLag,
      eventLoopUtilization: core.utilization,
      heapUsedBytes: core.heapUsedBytes,
      rssBytes: core.rssBytes,
      healthy: core.healthy,
      admitted: core.admitted,
      shed: core.shed,
      inFlight: core.concurrency ? core.concurrency.inFlight : null,
      concurrencyLimit: core.concurrency ? Math.floor(core.concurrency.limit) : null,
      closed: core.closed,
    };
  }

  /** Stops the heartbeat and health-check timers; the adapters then admit everything. */
  close(): void {
    this.core.close();
  }

  /**
   * The whole decision for adapters that see node's request/response: true lets the request
   * through; false means it was answered (shed, or the health endpoint).
   * @internal
   */
  gate(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.hasPathRules) {
      const rule = this.matchPath(req.url ?? '/');
      if (rule === EXCLUDED) return true;
      if (rule === HEALTH) {
        this.writeHealth(res);
        return false;
      }
    }
    const reason = this.core.admit();
    if (reason === null) {
      if (this.core.concurrency !== undefined) this.track(res);
      return true;
    }
    if (this.options.onShed) this.options.onShed(req, res, reason);
    else writeShed(res, this.response);
    return false;
  }

  /** @internal 0 pass, 1 health endpoint, 2 excluded. */
  matchPath(url: string): number {
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (path === this.options.healthPath) return HEALTH;
    if (this.excludedPaths.has(path)) return EXCLUDED;
    for (const pattern of this.excludedPatterns) if (pattern.test(path)) return EXCLUDED;
    return PASS;
  }

  /** @internal Counts an admitted request in flight until its response closes. */
  track(res: ServerResponse): void {
    (res as unknown as Record<symbol, number>)[this.startSymbol] = performance.now();
    res.on('close', this.onResponseClose);
  }

  /** @internal Status code and JSON body of the health endpoint. */
  healthResponse(): { statusCode: number; body: string } {
    const status = this.status();
    return { statusCode: status.overloaded ? this.options.statusCode : 200, body: JSON.stringify(status) };
  }

  /** @internal */
  assertOpen(adapter: string): void {
    if (this.core.closed) {
      throw new HotpathGuardError(
        'HP_GUARD_CLOSED',
        `guard.${adapter}(): the guard was closed; create a new one`,
      );
    }
  }

  private writeHealth(res: ServerResponse): void {
    const { statusCode, body } = this.healthResponse();
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
    };
    if (statusCode !== 200) headers['retry-after'] = this.response.retryAfter;
    res.writeHead(statusCode, headers);
    res.end(body);
  }
}

/** Creates a guard; options are validated (HP_GUARD_INVALID_OPTION names the bad one). */
export function createGuard(options: GuardOptions = {}): OverloadGuard {
  return new OverloadGuard(options);
}
