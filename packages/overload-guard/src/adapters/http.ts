import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdapterContext } from './context.js';

/** A node:http request listener. */
export type HttpHandler<
  Req extends IncomingMessage = IncomingMessage,
  Res extends ServerResponse = ServerResponse,
> = (req: Req, res: Res) => void;

/** Wraps a node:http request listener: shed requests never reach `handler`. */
export function httpAdapter<Req extends IncomingMessage, Res extends ServerResponse>(
  guard: AdapterContext,
  handler: HttpHandler<Req, Res>,
): HttpHandler<Req, Res> {
  if (typeof handler !== 'function') {
    throw new TypeError(`guard.http(handler): expected a request listener function, got ${typeof handler}`);
  }
  return function guardedListener(this: unknown, req: Req, res: Res): void {
    if (guard.gate(req, res)) handler.call(this, req, res);
  };
}
