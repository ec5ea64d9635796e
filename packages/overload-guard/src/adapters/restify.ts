import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdapterContext } from './context.js';

/** A restify handler (`server.pre(...)` or `server.use(...)`). */
export type RestifyHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next: (value?: false | Error) => void,
) => void;

/** Handler for `server.pre(guard.restify())`: sheds before routing; `next(false)` ends the chain. */
export function restifyAdapter(guard: AdapterContext): RestifyHandler {
  return function overloadGuard(req, res, next) {
    if (guard.gate(req, res)) next();
    else next(false);
  };
}
