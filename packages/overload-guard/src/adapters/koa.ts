import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdapterContext } from './context.js';

/** The parts of a Koa context the middleware uses. */
export interface KoaContextLike {
  req: IncomingMessage;
  res: ServerResponse;
  /** The raw request target (`req.url`). */
  url: string;
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
export function koaAdapter(guard: AdapterContext): KoaMiddleware {
  const shed = guard.response;
  const options = guard.options;
  return function overloadGuard(ctx, next) {
    const decision = guard.decide(ctx.url, ctx.res);
    if (decision === 'pass') return next();
    if (decision === 'health') {
      const { statusCode, body } = guard.healthResponse();
      ctx.status = statusCode;
      ctx.set('Cache-Control', 'no-store');
      if (statusCode !== 200) ctx.set('Retry-After', shed.retryAfter);
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = body;
      return undefined;
    }
    if (options.onShed) {
      ctx.respond = false;
      options.onShed(ctx.req, ctx.res, guard.shedReason);
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
