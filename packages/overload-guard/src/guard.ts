import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Decision } from './adapters/context.js';
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
import { PathRules } from './path-rules.js';
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

/**
 * Admission control for HTTP servers. Created by `createGuard`; the adapters (`http`,
 * `express`, `koa`, `fastify`, `restify`) share one decision core, which they reach through the
 * narrow `AdapterContext` (adapters/context.ts) that this class satisfies.
 */
export class OverloadGuard extends EventEmitter<GuardEventMap> {
  /** Validated options with defaults applied. */
  readonly options: ResolvedGuardOptions;
  /** @internal */ readonly core: AdmissionController;
  /** @internal */ readonly response: ShedResponse;
  /** @internal The health path and the exempt paths. */
  readonly paths: PathRules;
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
    this.paths = new PathRules(this.options.healthPath, this.options.exclude);
    const core = this.core;
    const start = this.startSymbol;
    this.onResponseClose = function onResponseClose(this: ServerResponse) {
      // track() sets the start before it adds this listener; without one the latency is unknown (0)
      const startedAt = (this as unknown as Partial<Record<symbol, number>>)[start];
      core.concurrency?.release(startedAt === undefined ? 0 : performance.now() - startedAt);
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
   * The admission decision, the one place it is made: `target` is the raw request target
   * (`req.url`), `res` node's response (counted in flight when a concurrency limit is set and
   * the request passes the limits).
   * @internal
   */
  decide(target: string, res: ServerResponse): Decision {
    if (!this.paths.empty) {
      const rule = this.paths.match(target);
      if (rule === 'excluded') return 'pass';
      if (rule === 'health') return 'health';
    }
    return this.admit(res);
  }

  /** The limits' part of `decide`, for a request no path rule applies to. */
  private admit(res: ServerResponse): 'pass' | 'shed' {
    const core = this.core;
    if (core.admit() !== null) return 'shed';
    if (core.concurrency !== undefined) this.track(res);
    return 'pass';
  }

  /** @internal Why the last `shed` decision shed (valid right after it). */
  get shedReason(): OverloadReason {
    return this.core.lastReason ?? 'eventLoopDelay';
  }

  /**
   * `decide` translated for adapters that hand over node's own request and response (node:http,
   * Express, Restify): true lets the request through; false means it was answered here.
   * @internal
   */
  gate(req: IncomingMessage, res: ServerResponse): boolean {
    // the target is read (and matched) only when health or exempt paths are configured
    const decision = this.paths.empty ? this.admit(res) : this.decide(req.url ?? '/', res);
    if (decision === 'pass') return true;
    if (decision === 'health') this.writeHealth(res);
    else if (this.options.onShed) this.options.onShed(req, res, this.shedReason);
    else writeShed(res, this.response);
    return false;
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
