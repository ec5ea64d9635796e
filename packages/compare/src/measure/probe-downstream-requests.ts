// Waiting on the requests' path (bundled into probe.cjs with probe-downstream.ts): each incoming
// request of the server gets an async context (an AsyncLocalStorage run around its 'request'
// event, set up only once the process made its first outgoing call), its calls are noted in it,
// and when its response closes, the union of their in-flight intervals and their sum are added to
// the window's. The server's requests are counted here too.
import { AsyncLocalStorage } from 'node:async_hooks';
import type http from 'node:http';
import type { Server } from 'node:net';
import type { DownstreamRequests } from '../downstream-model.js';

const CONTEXT = Symbol('hotpath.downstream.request');
const SERVER_EMIT = Symbol('hotpath.downstream.emit');

type Emit = (this: unknown, event: string | symbol, ...args: unknown[]) => boolean;

/** A call as a request sees it: when it started and its last data so far (performance.now(), ms). */
export interface CallSpan {
  start: number;
  last: number;
  answered: boolean;
  context: RequestContext | undefined;
}

/** An incoming request that made calls: its ended calls' intervals (ms), flat pairs. */
export class RequestContext {
  calls = 0;
  sumMs = 0;
  spans: number[] = [];
  /** Calls of this request not yet ended. */
  live: CallSpan[] = [];
  done = false;
  listening = false;
  constructor(
    readonly waiting: RequestWaiting,
    readonly response: http.ServerResponse | undefined,
  ) {}
}

/** The length of the union of flat [start, end] pairs. */
export function unionLength(spans: number[]): number {
  const n = spans.length / 2;
  const order: number[] = [];
  for (let i = 0; i < n; i++) order.push(i);
  order.sort((a, b) => (spans[2 * a] as number) - (spans[2 * b] as number));
  let total = 0;
  let from = Number.NEGATIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  for (const i of order) {
    const start = spans[2 * i] as number;
    const end = spans[2 * i + 1] as number;
    if (start > to) {
      if (to > from) total += to - from;
      from = start;
      to = end;
    } else if (end > to) to = end;
  }
  if (to > from) total += to - from;
  return total;
}

/** The requests' side of the record: their count, their contexts, their waiting in the window. */
export class RequestWaiting {
  /** The requests' contexts, once enabled. */
  store: AsyncLocalStorage<RequestContext> | undefined;
  requests = 0;
  private withCalls = 0;
  private calls = 0;
  private unionMs = 0;
  private sumMs = 0;

  /** @param isOpen whether a window is open (the counts are the window's). */
  constructor(private readonly isOpen: () => boolean) {}

  /** Request contexts from now on (the first outgoing call was made). */
  enable(): void {
    this.store ??= new AsyncLocalStorage<RequestContext>();
  }

  /** The server whose requests are counted (and, once enabled, given a context each). */
  serve(server: Server): void {
    const target = server as Server & { [SERVER_EMIT]?: Emit };
    if (target[SERVER_EMIT]) return;
    target[SERVER_EMIT] = server.emit as Emit;
    const waiting = this;
    server.emit = function emitRecorded(
      this: typeof target,
      event: string | symbol,
      _request: unknown,
      response: unknown,
    ) {
      if (event === 'request') {
        if (waiting.isOpen()) waiting.requests++;
        const store = waiting.store;
        if (store) {
          const context = new RequestContext(waiting, response as http.ServerResponse);
          // biome-ignore lint/complexity/noArguments: every event of the server passes here; passed on without an array.
          return store.run(context, emitServer, this, arguments);
        }
      }
      // biome-ignore lint/complexity/noArguments: as above.
      return (this[SERVER_EMIT] as Emit).apply(this, arguments as unknown as Parameters<Emit>);
    } as Server['emit'];
  }

  /** A call of `context`'s request started. */
  callStarted(context: RequestContext, call: CallSpan): void {
    call.context = context;
    context.calls++;
    context.live.push(call);
    if (!context.listening && context.response) {
      context.listening = true;
      const response = context.response as http.ServerResponse & { [CONTEXT]?: RequestContext };
      response[CONTEXT] = context;
      response.on('close', responseClosed);
    }
  }

  /** A call ended (at its last data when answered). */
  callEnded(call: CallSpan): void {
    const context = call.context;
    call.context = undefined;
    if (!context || context.done) return;
    const at = context.live.indexOf(call);
    if (at >= 0) context.live.splice(at, 1);
    if (call.answered) {
      context.spans.push(call.start, call.last);
      context.sumMs += call.last - call.start;
    }
  }

  /** A request ended: its union and sum (calls not ended yet end at their last data). */
  ended(context: RequestContext): void {
    if (context.done) return;
    context.done = true;
    const now = performance.now();
    for (const call of context.live) {
      if (call.context !== context) continue;
      const end = call.answered ? call.last : now;
      context.spans.push(call.start, end);
      context.sumMs += end - call.start;
    }
    context.live.length = 0;
    if (!this.isOpen()) return;
    this.withCalls++;
    this.calls += context.calls;
    this.sumMs += context.sumMs;
    this.unionMs += unionLength(context.spans);
  }

  reset(): void {
    this.requests = 0;
    this.withCalls = 0;
    this.calls = 0;
    this.unionMs = 0;
    this.sumMs = 0;
  }

  result(): DownstreamRequests {
    return {
      withCalls: this.withCalls,
      calls: this.calls,
      unionMicros: Math.round(this.unionMs * 1000),
      sumMicros: Math.round(this.sumMs * 1000),
    };
  }
}

function emitServer(server: Server & { [SERVER_EMIT]?: Emit }, args: IArguments): boolean {
  return (server[SERVER_EMIT] as Emit).apply(server, args as unknown as Parameters<Emit>);
}

function responseClosed(this: http.ServerResponse & { [CONTEXT]?: RequestContext }): void {
  try {
    const context = this[CONTEXT];
    if (context) context.waiting.ended(context);
  } catch {
    // never break the server
  }
}
