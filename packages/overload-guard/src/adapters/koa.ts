import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OverloadGuard } from '../guard.js';

/** The parts of a Koa context the middleware uses. */
export interface KoaContextLike {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  method: string;
  status: number;
  body: unknown;
  type: string;
  respond?: boolean;
  set(field: string, value: string): void;
}

/** A Koa (2 or 3) middleware. */
export type KoaMiddleware = (
  ctx: KoaContextLike,
  next: () => Promise<unknown>,
) => Promise<unknown> | undefined;

/** Middleware that sheds before downstream middleware runs; `app.use` it first. */
export function koaAdapter(guard: OverloadGuard): KoaMiddleware {
  const shed = guard.response;
  const options = guard.options;
  return function overloadGuard(ctx, next) {
    const rule = guard.matchPath(ctx.path);
    if (rule === 2) return next();
    if (rule === 1) {
      const { statusCode, body } = guard.healthResponse();
      ctx.status = statusCode;
      ctx.set('Cache-Control', 'no-store');
      if (statusCode !== 200) ctx.set('Retry-After', shed.retryAfter);
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = body;
      return undefined;
    }
    const reason = guard.core.admit();
    if (reason === null) {
      if (guard.core.concurrency !== undefined) guard.track(ctx.res);
      return next();
    }
    if (options.onShed) {
      ctx.respond = false;
      options.onShed(ctx.req, ctx.res, reason);
      return undefined;
    }
    ctx.status = shed.statusCode;
    ctx.set('Retry-After', shed.retryAfter);
    ctx.set('Cache-Control', 'no-store');
    ctx.type = shed.contentType;
    ctx.body = shed.body;
    return undefined;
  };
}
