import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdapterContext } from './context.js';

/** An Express (4 or 5) middleware; also fits Connect and Polka. */
export type ExpressMiddleware = (
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/** Middleware that sheds before the rest of the stack runs; mount it first. */
export function expressAdapter(guard: AdapterContext): ExpressMiddleware {
  return function overloadGuard(req, res, next) {
    if (guard.gate(req, res)) next();
  };
}
