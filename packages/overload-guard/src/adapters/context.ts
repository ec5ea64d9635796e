import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OverloadReason, ShedHandler } from '../guard-options.js';
import type { ShedResponse } from '../shed-response.js';

/**
 * The admission decision for one request, which every adapter translates into its framework's
 * terms: `pass` (call the next handler), `health` (answer the health endpoint: `healthResponse()`),
 * `shed` (answer `onShed` or the prepared 503; the reason is `shedReason`).
 */
export type Decision = 'pass' | 'health' | 'shed';

/**
 * Everything an adapter may ask of the guard, and nothing more. The guard hands itself over as
 * this (it is the one implementation), so an adapter never imports the guard's module and the
 * guard's insides (its monitor, limits, timers, events) stay out of the adapters' reach.
 */
export interface AdapterContext {
  /** The two options an adapter acts on: a custom shed answer, and the health path to route. */
  readonly options: { readonly onShed?: ShedHandler; readonly healthPath?: string };
  /** The prepared shed answer: status, `Retry-After` seconds, content type, body. */
  readonly response: ShedResponse;
  /** Why the last `shed` decision shed (valid right after it). */
  readonly shedReason: OverloadReason;
  /**
   * Should this request be shed? `target` is the raw request target; a request that passes the
   * limits is recorded in flight until `res` closes (when a concurrency limit is set).
   */
  decide(target: string, res: ServerResponse): Decision;
  /**
   * `decide` for adapters that hand over node's own request and response: true lets the request
   * through; false means it was answered (health, `onShed` or the 503).
   */
  gate(req: IncomingMessage, res: ServerResponse): boolean;
  /** Status code and JSON body of the health endpoint. */
  healthResponse(): { statusCode: number; body: string };
}
