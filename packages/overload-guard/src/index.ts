export type { ExpressMiddleware } from './adapters/express.js';
export type {
  FastifyGuardPlugin,
  FastifyInstanceLike,
  FastifyReplyLike,
  FastifyRequestLike,
} from './adapters/fastify.js';
export type { HttpHandler } from './adapters/http.js';
export type { KoaContextLike, KoaMiddleware } from './adapters/koa.js';
export type { RestifyHandler } from './adapters/restify.js';
export type { GuardErrorCode } from './errors.js';
export { GUARD_ERROR_CODES, HotpathGuardError } from './errors.js';
export type { GuardEventMap, GuardStatus } from './guard.js';
export { createGuard, OverloadGuard } from './guard.js';
export type { ConcurrencyOptions, GuardOptions, OverloadReason, ShedHandler } from './guard-options.js';
export type {
  EventLoopDelayStats,
  Monitor,
  MonitorOptions,
  MonitorSample,
  MonitorSnapshot,
} from './monitor.js';
export { createMonitor } from './monitor.js';
