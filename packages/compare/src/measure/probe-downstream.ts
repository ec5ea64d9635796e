// The probe's record of what the server waits for (bundled into probe.cjs with probe.ts): every
// outgoing exchange over a TCP or Unix socket — what node:http, https, undici, fetch and the
// database and cache drivers (pg, ioredis, mysql2, memcache clients) all use — by endpoint.
//
// A call is one exchange: the socket is idle, a write starts a call, later writes join it until
// data arrives, and the call ends with the last data before the next write (or the socket's
// close, or the window's end). Pipelined writes answered together are one call. An HTTP
// client's socket is one socket like any other, so HTTP is counted once, by the same rule.
//
// Every socket a client connects (net.Socket.prototype.connect, which net.connect, tls.connect,
// http's agents and undici all reach) gets its own `write` and `emit` (module functions reading
// the socket's state: no closure per call). Where the call starts, the user's code that issued it
// is read from the stack (its first frame outside node_modules, `node:` and Node's internals,
// async frames included); http.request/get and fetch capture it when the user calls them, as
// the write comes later from the agent or undici (undici's `request:create` and
// `client:sendHeaders` channels carry it to the socket).
//
// Per incoming request (its async context: an AsyncLocalStorage run around the server's
// 'request' event, set up only once the process made its first outgoing call), the union of its
// calls' in-flight intervals and their sum. Never throws into the host.
import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import http from 'node:http';
import https from 'node:https';
import Module from 'node:module';
import { type Server, Socket } from 'node:net';
import {
  DOWNSTREAM_LIMITS,
  type DownstreamEndpoint,
  type DownstreamFunction,
  type DownstreamProtocol,
  type DownstreamStack,
  type DownstreamWindow,
  OTHER,
} from '../downstream-model.js';

/** Frames V8 records where a call starts: enough to get past a driver's own (pg: about 12). */
const STACK_LIMIT = 32;

/**
 * The least time between two stacks taken (ms): a stack costs 10–35 µs of CPU here (Node 20),
 * more than the call's own client work, so at most one per 2 ms is taken (≤ 1.8 % of a core);
 * each stands for the calls to its endpoint since the one before (its weight).
 */
export const STACK_INTERVAL_MS = 2;

const ANONYMOUS = '(anonymous)';
/** node-postgres's entry module, wherever it is installed (npm, pnpm's .pnpm/…). */
const PG_ENTRY = /[\\/]node_modules[\\/]pg[\\/]lib[\\/]index\.js$/;
const STATE = Symbol('hotpath.downstream');
const ORIGIN = Symbol('hotpath.downstream.origin');
const CONTEXT = Symbol('hotpath.downstream.request');
const SERVER_EMIT = Symbol('hotpath.downstream.emit');

/** One endpoint and its counters for the open window. */
class Endpoint {
  calls = 0;
  waitingMicros = 0;
  connections = 0;
  bytesOut = 0;
  bytesIn = 0;
  /** Calls started since the last one whose stack was taken. */
  sinceStack = 0;
  protocol: DownstreamProtocol | undefined;
  constructor(
    readonly key: string,
    readonly transport: 'tcp' | 'unix',
    readonly port: number,
  ) {
    this.protocol = protocolOfPort(port);
  }
}

/** An incoming request that made calls: its calls' intervals (ms, performance.now()), flat pairs. */
class RequestContext {
  calls = 0;
  sumMs = 0;
  spans: number[] = [];
  /** Sockets whose current call is this request's and not yet ended. */
  live: Tracked[] = [];
  done = false;
  listening = false;
  constructor(readonly response: http.ServerResponse | undefined) {}
}

/**
 * Who issued a call: the user's frames (function indices, outermost first; undefined when no
 * stack was taken for it) and the request.
 */
interface Origin {
  frames: number[] | undefined;
  context: RequestContext | undefined;
}

/** A client socket's state. */
class Tracked {
  detected = false;
  inCall = false;
  answered = false;
  /** performance.now() at the call's first write and at its last data. */
  start = 0;
  last = 0;
  /** The window the call started in (0: none open). */
  window = 0;
  fn = -1;
  stack = -1;
  /** The calls to the endpoint this call's stack stands for (0: no stack taken). */
  weight = 0;
  context: RequestContext | undefined = undefined;
  /** The origin an HTTP client captured for the call its next write starts. */
  pending: Origin | undefined = undefined;
  outMark = 0;
  inMark = 0;
  constructor(
    readonly endpoint: Endpoint,
    readonly write: Socket['write'],
    readonly emit: Socket['emit'],
  ) {}
}

type Emit = (this: unknown, event: string | symbol, ...args: unknown[]) => boolean;

type TrackedSocket = Socket & { [STATE]?: Tracked; _httpMessage?: { [ORIGIN]?: Origin } };

function protocolOfPort(port: number): DownstreamProtocol | undefined {
  if (port === 5432) return 'postgres';
  if (port === 6379) return 'redis';
  if (port === 11211) return 'memcache';
  if (port === 3306) return 'mysql';
  if (port === 80 || port === 8080) return 'http';
  if (port === 443) return 'https';
  return undefined;
}

function byteAt(chunk: unknown, i: number): number {
  if (typeof chunk === 'string') return i < chunk.length ? chunk.charCodeAt(i) & 0xff : -1;
  if (chunk instanceof Uint8Array) return i < chunk.length ? (chunk[i] as number) : -1;
  return -1;
}

/** The first four bytes as a big-endian number (-1 when shorter). */
function word(chunk: unknown, at: number): number {
  const a = byteAt(chunk, at);
  const d = byteAt(chunk, at + 3);
  if (a < 0 || d < 0) return -1;
  return ((a << 24) | (byteAt(chunk, at + 1) << 16) | (byteAt(chunk, at + 2) << 8) | d) >>> 0;
}

const ascii = (text: string) => word(text, 0);
const HTTP_METHODS = new Set(
  ['GET ', 'POST', 'PUT ', 'HEAD', 'DELE', 'PATC', 'OPTI', 'CONN', 'TRAC'].map(ascii),
);
const MEMCACHE_TEXT = new Set(
  ['get ', 'gets', 'set ', 'add ', 'repl', 'appe', 'prep', 'cas ', 'dele', 'incr', 'decr', 'touc', 'gat ']
    .concat(['gats', 'stat', 'vers', 'flus', 'mg ', 'ms ', 'md ', 'ma ', 'mn\r\n'])
    .map((command) => ascii(command.padEnd(4, ' ').slice(0, 4))),
);
const POSTGRES_STARTUP = new Set([0x00030000, 80877103, 80877104]);

/** The protocol a client's first write speaks, where its bytes say. */
function protocolOfWrite(chunk: unknown, encrypted: boolean): DownstreamProtocol | undefined {
  const head = word(chunk, 0);
  if (head < 0) return undefined;
  if (HTTP_METHODS.has(head)) return encrypted ? 'https' : 'http';
  if (POSTGRES_STARTUP.has(word(chunk, 4))) return 'postgres';
  const first = head >>> 24;
  const second = (head >>> 16) & 0xff;
  if (first === 0x2a && second >= 0x30 && second <= 0x39) return 'redis';
  if (first === 0x80 || MEMCACHE_TEXT.has(head)) return 'memcache';
  return undefined;
}

/** MySQL's server speaks first: a packet of sequence 0 whose payload opens with protocol 10. */
function protocolOfGreeting(chunk: unknown): DownstreamProtocol | undefined {
  return byteAt(chunk, 3) === 0 && byteAt(chunk, 4) === 0x0a ? 'mysql' : undefined;
}

/** The endpoint a connect call names: its arguments as net.Socket#connect takes them. */
function endpointOf(args: unknown[]): { key: string; transport: 'tcp' | 'unix'; port: number } {
  let first = args[0];
  if (Array.isArray(first)) first = first[0];
  let host: unknown = 'localhost';
  let port: unknown;
  if (first && typeof first === 'object') {
    const options = first as { path?: unknown; host?: unknown; port?: unknown };
    if (typeof options.path === 'string' && options.path)
      return { key: options.path, transport: 'unix', port: 0 };
    if (typeof options.host === 'string' && options.host) host = options.host;
    port = options.port;
  } else if (typeof first === 'string' && !/^\d+$/.test(first)) {
    return { key: first, transport: 'unix', port: 0 };
  } else {
    port = first;
    if (typeof args[1] === 'string' && args[1]) host = args[1];
  }
  const number = Number(port);
  const name = String(host);
  const key = `${name.includes(':') ? `[${name}]` : name}:${Number.isFinite(number) ? number : '?'}`;
  return { key, transport: 'tcp', port: number };
}

/** A frame of the user's code, as the stack gives it. */
interface CallSiteLike {
  getFileName(): string | undefined | null;
  getFunctionName(): string | null;
  getMethodName(): string | null;
  getTypeName(): string | null;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
  getEnclosingLineNumber?(): number | null;
  getEnclosingColumnNumber?(): number | null;
}

function rawCallSites(_error: Error, sites: CallSiteLike[]): CallSiteLike[] {
  return sites;
}

/** The length of the union of flat [start, end] pairs (sorted here, in place by pairs). */
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

/** The recorder: one per process, installed at the probe's load. */
export class DownstreamRecorder {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly live = new Set<TrackedSocket>();
  /** Functions by file, then by position (line × 2^20 + column). */
  private readonly functionIndex = new Map<string, Map<number, number>>();
  private readonly functions: { name: string; file: string; line: number; column: number }[] = [];
  private fnCalls: number[] = [];
  private fnWaiting: number[] = [];
  /** Stacks by a hash of their frames and endpoint; each hash's stacks listed. */
  private readonly stackIndex = new Map<number, number[]>();
  private readonly stacks: { frames: number[]; endpoint: Endpoint }[] = [];
  private stackCalls: number[] = [];
  private stackWaiting: number[] = [];
  private readonly endpointOrder: Endpoint[] = [];
  private store: AsyncLocalStorage<RequestContext> | undefined;
  private readonly servers: Server[] = [];
  private windowId = 0;
  private open = false;
  private requests = 0;
  private withCalls = 0;
  private requestCalls = 0;
  private unionMs = 0;
  private sumMs = 0;
  private readonly otherEndpoint = new Endpoint(OTHER, 'tcp', 0);
  private readonly probeFile: string;

  /**
   * @param contexts whether incoming requests get an async context (their union and sum of
   * waiting): an AsyncLocalStorage, which before Node 24's AsyncContextFrame runs a hook on every
   * promise made — HOTPATH_PROBE_WAITING=calls leaves it out.
   */
  constructor(
    probeFile: string,
    private readonly contexts = true,
  ) {
    this.probeFile = probeFile;
  }

  /** Patches the client side: net.Socket#connect, http(s).request/get, fetch; undici's channels. */
  install(): void {
    const recorder = this;
    const connect = Socket.prototype.connect;
    // biome-ignore lint/suspicious/noExplicitAny: connect has many overloads; passed through untouched.
    Socket.prototype.connect = function connectRecorded(this: TrackedSocket, ...args: any[]) {
      // connect() puts back the prototype's write (after an earlier end): the socket's own, after it
      const socket = connect.apply(this, args as Parameters<typeof connect>);
      try {
        if (!this[STATE]) recorder.track(this, args);
      } catch {
        // never break the client
      }
      return socket;
    } as typeof connect;
    for (const module of [http, https]) {
      for (const name of ['request', 'get'] as const) {
        const original = module[name] as (...args: unknown[]) => http.ClientRequest;
        const wrapped = function requestRecorded(this: unknown, ...args: unknown[]) {
          const origin = recorder.open ? recorder.origin(requestRecorded, recorder.stackDue()) : undefined;
          const request = original.apply(this, args) as http.ClientRequest & { [ORIGIN]?: Origin };
          if (origin) request[ORIGIN] = origin;
          return request;
        };
        (module as unknown as Record<string, unknown>)[name] = wrapped;
      }
    }
    this.installFetch();
  }

  private readonly originStore = new AsyncLocalStorage<Origin>();

  /**
   * A client function whose write comes later (from a queue, a pool, undici): called in an
   * origin of its own when the caller's stack holds user frames, so that the write finds them.
   */
  wrapDeferred<F extends (...args: never[]) => unknown>(original: F, always = false): F {
    const recorder = this;
    const originStore = this.originStore;
    const wrapped = function deferredRecorded(this: unknown, ...args: Parameters<F>) {
      if (!recorder.open) return original.apply(this, args);
      const origin = recorder.origin(deferredRecorded, recorder.stackDue());
      if (!always && !origin.frames?.length) return original.apply(this, args);
      return originStore.run(origin, callWith, original, this, args);
    };
    return wrapped as unknown as F;
  }

  /** Node's own fetch and node-postgres's query (pool.query defers the write to a later tick). */
  private installDeferred(): void {
    if (typeof globalThis.fetch === 'function') globalThis.fetch = this.wrapDeferred(globalThis.fetch, true);
    // Module#load runs for a CommonJS module whether it is required or imported from ESM.
    const prototype = (Module as unknown as { prototype?: { load?: (filename: string) => void } }).prototype;
    const load = prototype?.load;
    if (!prototype || typeof load !== 'function') return;
    const recorder = this;
    // each copy of node-postgres once (a module's file is loaded once)
    prototype.load = function loadRecorded(this: { exports?: unknown }, filename: string) {
      load.call(this, filename);
      if (typeof filename === 'string' && PG_ENTRY.test(filename)) {
        try {
          recorder.patchPg(this.exports);
        } catch {
          // a pg of another shape: its calls are recorded all the same, from the write's stack
        }
      }
    };
  }

  private patchPg(pg: unknown): void {
    for (const name of ['Pool', 'Client'] as const) {
      const prototype = (pg as Record<string, { prototype?: { query?: unknown } } | undefined>)?.[name]
        ?.prototype;
      if (prototype && typeof prototype.query === 'function')
        prototype.query = this.wrapDeferred(prototype.query as (...args: never[]) => unknown);
    }
  }

  /** fetch's write comes from undici much later: its origin travels with undici's request. */
  private installFetch(): void {
    const originStore = this.originStore;
    this.installDeferred();
    subscribe('undici:request:create', (message) => {
      try {
        const request = (message as { request?: { [ORIGIN]?: Origin } }).request;
        const origin = originStore.getStore();
        if (request && origin) request[ORIGIN] = origin;
      } catch {
        // not for us
      }
    });
    subscribe('undici:client:sendHeaders', (message) => {
      try {
        const { request, socket } = message as { request?: { [ORIGIN]?: Origin }; socket?: TrackedSocket };
        const state = socket?.[STATE];
        if (state && request?.[ORIGIN]) state.pending = request[ORIGIN];
      } catch {
        // not for us
      }
    });
  }

  /** The probe's own sockets (its control connection) are not the server's calls. */
  untrack(socket: Socket): void {
    const tracked = socket as TrackedSocket;
    if (!tracked[STATE]) return;
    tracked[STATE] = undefined;
    this.live.delete(tracked);
    Reflect.deleteProperty(socket, 'write');
    Reflect.deleteProperty(socket, 'emit');
  }

  /** The server whose requests are counted (and, once calls are made, given a context each). */
  serve(server: Server): void {
    const target = server as Server & { [SERVER_EMIT]?: Emit };
    if (target[SERVER_EMIT]) return;
    target[SERVER_EMIT] = server.emit as Emit;
    this.servers.push(server);
    const recorder = this;
    server.emit = function emitRecorded(
      this: typeof target,
      event: string | symbol,
      _request: unknown,
      response: unknown,
    ) {
      if (event === 'request') {
        if (recorder.open) recorder.requests++;
        const store = recorder.store;
        if (store)
          // biome-ignore lint/complexity/noArguments: every event of the server passes here; passed on without an array.
          return store.run(new RequestContext(response as http.ServerResponse), emitServer, this, arguments);
      }
      // biome-ignore lint/complexity/noArguments: as above.
      return (this[SERVER_EMIT] as Emit).apply(this, arguments as unknown as Parameters<Emit>);
    } as Server['emit'];
  }

  private track(socket: TrackedSocket, args: unknown[]): void {
    const { key, transport, port } = endpointOf(args);
    let endpoint = this.endpoints.get(key);
    if (!endpoint) {
      if (this.endpoints.size >= DOWNSTREAM_LIMITS.endpoints) endpoint = this.otherEndpoint;
      else {
        endpoint = new Endpoint(key.slice(0, DOWNSTREAM_LIMITS.text), transport, port);
        this.endpoints.set(key, endpoint);
        this.endpointOrder.push(endpoint);
      }
    }
    if (this.open) endpoint.connections++;
    const state = new Tracked(endpoint, socket.write, socket.emit);
    state.outMark = 0;
    state.inMark = 0;
    socket[STATE] = state;
    socket.write = writeRecorded as Socket['write'];
    socket.emit = emitRecorded as Socket['emit'];
    this.live.add(socket);
  }

  /** A write on a tracked socket: detection, then a new call unless one awaits its answer. */
  onWrite(socket: TrackedSocket, state: Tracked, chunk: unknown): void {
    if (!state.detected) {
      state.detected = true;
      const protocol = protocolOfWrite(chunk, (socket as { encrypted?: boolean }).encrypted === true);
      if (protocol && !state.endpoint.protocol) state.endpoint.protocol = protocol;
    }
    if (state.inCall && !state.answered) return;
    if (state.inCall) this.endCall(state);
    state.inCall = true;
    state.answered = false;
    state.start = performance.now();
    if (!this.store && this.contexts) this.enableContexts();
    if (!this.open) {
      state.window = 0;
      state.pending = undefined;
      return;
    }
    state.window = this.windowId;
    const origin =
      state.pending ??
      socket._httpMessage?.[ORIGIN] ??
      this.originStore.getStore() ??
      this.origin(writeRecorded as (...args: never[]) => unknown, this.stackDue());
    state.pending = undefined;
    const frames = origin.frames;
    const endpoint = state.endpoint;
    endpoint.sinceStack++;
    if (frames) {
      state.weight = endpoint.sinceStack;
      endpoint.sinceStack = 0;
      state.fn = this.issuing(frames);
      state.stack = this.stackOf(frames, endpoint);
    } else {
      state.weight = 0;
      state.fn = -1;
      state.stack = -1;
    }
    const context = origin.context ?? this.store?.getStore();
    if (context && !context.done) {
      state.context = context;
      context.calls++;
      context.live.push(state);
      if (!context.listening && context.response) {
        context.listening = true;
        const response = context.response as http.ServerResponse & { [CONTEXT]?: RequestContext };
        response[CONTEXT] = context;
        response.on('close', responseClosed);
      }
    }
  }

  onData(state: Tracked, chunk: unknown): void {
    if (!state.inCall) {
      if (!state.detected) {
        const protocol = protocolOfGreeting(chunk);
        if (protocol && !state.endpoint.protocol) state.endpoint.protocol = protocol;
      }
      return;
    }
    state.answered = true;
    state.last = performance.now();
  }

  onClose(socket: TrackedSocket, state: Tracked): void {
    if (state.inCall) this.endCall(state);
    this.countBytes(socket, state);
    this.live.delete(socket);
  }

  /** The call ends at its last data; an unanswered one (a write the peer never answered) is no call. */
  private endCall(state: Tracked): void {
    state.inCall = false;
    const context = state.context;
    state.context = undefined;
    if (context && !context.done) {
      const at = context.live.indexOf(state);
      if (at >= 0) context.live.splice(at, 1);
      if (state.answered) {
        context.spans.push(state.start, state.last);
        context.sumMs += state.last - state.start;
      }
    }
    if (!state.answered || !this.open || state.window !== this.windowId) return;
    const micros = (state.last - state.start) * 1000;
    state.endpoint.calls++;
    state.endpoint.waitingMicros += micros;
    const weight = state.weight;
    if (!weight) return;
    if (state.fn >= 0) {
      this.fnCalls[state.fn] = (this.fnCalls[state.fn] ?? 0) + weight;
      this.fnWaiting[state.fn] = (this.fnWaiting[state.fn] ?? 0) + micros * weight;
    }
    this.stackCalls[state.stack] = (this.stackCalls[state.stack] ?? 0) + weight;
    this.stackWaiting[state.stack] = (this.stackWaiting[state.stack] ?? 0) + micros * weight;
  }

  /** An incoming request ended: its union and sum (calls still awaiting their next write end at their last data). */
  requestEnded(context: RequestContext): void {
    if (context.done) return;
    context.done = true;
    const now = performance.now();
    for (const state of context.live) {
      if (state.context !== context) continue;
      const end = state.answered ? state.last : now;
      context.spans.push(state.start, end);
      context.sumMs += end - state.start;
    }
    context.live.length = 0;
    if (!this.open) return;
    this.withCalls++;
    this.requestCalls += context.calls;
    this.sumMs += context.sumMs;
    this.unionMs += unionLength(context.spans);
  }

  /** The socket's bytes since they were last counted, added to its endpoint's (with `count`). */
  private countBytes(socket: TrackedSocket, state: Tracked, count = this.open): void {
    const written = Number(socket.bytesWritten);
    const read = Number(socket.bytesRead);
    if (count) {
      if (Number.isFinite(written) && written > state.outMark)
        state.endpoint.bytesOut += written - state.outMark;
      if (Number.isFinite(read) && read > state.inMark) state.endpoint.bytesIn += read - state.inMark;
    }
    if (Number.isFinite(written)) state.outMark = written;
    if (Number.isFinite(read)) state.inMark = read;
  }

  /** Request contexts from now on: the first outgoing call was made. */
  private enableContexts(): void {
    this.store = new AsyncLocalStorage<RequestContext>();
  }

  /** Who issues a call now: the request, and with `withStack` the user's frames (async ones included). */
  origin(below: (...args: never[]) => unknown, withStack: boolean): Origin {
    return { frames: withStack ? this.userFrames(below) : undefined, context: this.store?.getStore() };
  }

  private stackAt = Number.NEGATIVE_INFINITY;

  /** Whether a stack may be taken now (STACK_INTERVAL_MS since the last); if so, the time is taken. */
  stackDue(): boolean {
    const now = performance.now();
    if (now - this.stackAt < STACK_INTERVAL_MS) return false;
    this.stackAt = now;
    return true;
  }

  private userFrames(below: (...args: never[]) => unknown): number[] {
    const prepare = Error.prepareStackTrace;
    const limit = Error.stackTraceLimit;
    let sites: CallSiteLike[] | undefined;
    try {
      Error.prepareStackTrace = rawCallSites as typeof Error.prepareStackTrace;
      Error.stackTraceLimit = STACK_LIMIT;
      const holder: { stack?: unknown } = {};
      Error.captureStackTrace(holder, below);
      sites = holder.stack as CallSiteLike[] | undefined;
    } catch {
      sites = undefined;
    } finally {
      Error.prepareStackTrace = prepare;
      Error.stackTraceLimit = limit;
    }
    const frames: number[] = [];
    if (!Array.isArray(sites)) return frames;
    // innermost first on the stack; the record keeps them outermost first
    for (let i = sites.length - 1; i >= 0 && frames.length < DOWNSTREAM_LIMITS.frames; i--) {
      const site = sites[i] as CallSiteLike;
      const file = site.getFileName();
      if (!file || !this.isUserFile(file)) continue;
      frames.push(this.functionOf(site, file));
    }
    return frames;
  }

  /** The function that issued a call: the innermost named user frame (else the innermost). */
  private issuing(frames: number[]): number {
    for (let i = frames.length - 1; i >= 0; i--) {
      const fn = frames[i] as number;
      if (this.functions[fn]?.name !== ANONYMOUS) return fn;
    }
    return frames.length ? (frames[frames.length - 1] as number) : -1;
  }

  private isUserFile(file: string): boolean {
    if (file.startsWith('node:') || file.startsWith('internal/') || file === this.probeFile) return false;
    return !file.includes('/node_modules/') && !file.includes('\\node_modules\\');
  }

  private functionOf(site: CallSiteLike, file: string): number {
    const line = site.getEnclosingLineNumber?.() ?? site.getLineNumber() ?? 0;
    const column = site.getEnclosingColumnNumber?.() ?? site.getColumnNumber() ?? 0;
    let byPosition = this.functionIndex.get(file);
    const position = line * 1_048_576 + column;
    const known = byPosition?.get(position);
    if (known !== undefined) return known;
    if (this.functions.length >= DOWNSTREAM_LIMITS.functions) return this.otherFunction();
    if (!byPosition) {
      byPosition = new Map();
      this.functionIndex.set(file, byPosition);
    }
    const type = site.getTypeName();
    const name =
      site.getFunctionName() ?? (site.getMethodName() ? `${type ?? ''}.${site.getMethodName()}` : null);
    const index = this.functions.length;
    this.functions.push({
      name: (name || ANONYMOUS).slice(0, DOWNSTREAM_LIMITS.text),
      file: file.slice(0, DOWNSTREAM_LIMITS.text),
      line,
      column,
    });
    byPosition.set(position, index);
    return index;
  }

  private otherFunction(): number {
    const key = this.functionIndex.get(OTHER)?.get(0);
    if (key !== undefined) return key;
    const index = this.functions.length;
    this.functions.push({ name: OTHER, file: OTHER, line: 0, column: 0 });
    this.functionIndex.set(OTHER, new Map([[0, index]]));
    return index;
  }

  private stackOf(frames: number[], endpoint: Endpoint): number {
    let hash = endpoint.key.length;
    for (const frame of frames) hash = (Math.imul(hash, 31) + frame + 1) | 0;
    const candidates = this.stackIndex.get(hash);
    if (candidates) {
      for (const index of candidates) {
        const stack = this.stacks[index] as { frames: number[]; endpoint: Endpoint };
        if (stack.endpoint === endpoint && sameFrames(stack.frames, frames)) return index;
      }
    }
    if (this.stacks.length >= DOWNSTREAM_LIMITS.stacks) return this.otherStack();
    const index = this.stacks.length;
    this.stacks.push({ frames, endpoint });
    if (candidates) candidates.push(index);
    else this.stackIndex.set(hash, [index]);
    return index;
  }

  private otherStack(): number {
    const candidates = this.stackIndex.get(-1);
    if (candidates?.[0] !== undefined) return candidates[0];
    const index = this.stacks.length;
    this.stacks.push({ frames: [this.otherFunction()], endpoint: this.otherEndpoint });
    this.stackIndex.set(-1, [index]);
    return index;
  }

  /** Opens a window: every counter from zero; calls under way when it opens are not its calls. */
  start(): void {
    this.windowId++;
    this.open = true;
    for (const endpoint of [...this.endpointOrder, this.otherEndpoint]) {
      endpoint.calls = 0;
      endpoint.waitingMicros = 0;
      endpoint.connections = 0;
      endpoint.bytesOut = 0;
      endpoint.bytesIn = 0;
      endpoint.sinceStack = 0;
    }
    this.stackAt = Number.NEGATIVE_INFINITY;
    this.fnCalls = [];
    this.fnWaiting = [];
    this.stackCalls = [];
    this.stackWaiting = [];
    this.requests = 0;
    this.withCalls = 0;
    this.requestCalls = 0;
    this.unionMs = 0;
    this.sumMs = 0;
    for (const socket of this.live) {
      const state = socket[STATE];
      if (state) this.countBytes(socket, state, false);
    }
  }

  /** Closes the window: answered calls end at their last data; the record as monitor.json holds it. */
  stop(): DownstreamWindow | undefined {
    if (!this.open) return undefined;
    for (const socket of this.live) {
      const state = socket[STATE];
      if (!state) continue;
      if (state.inCall && state.answered) this.endCall(state);
      this.countBytes(socket, state);
    }
    this.open = false;
    return this.result();
  }

  private result(): DownstreamWindow {
    const endpoints: DownstreamEndpoint[] = [];
    const endpointAt = new Map<Endpoint, number>();
    for (const endpoint of [...this.endpointOrder, this.otherEndpoint]) {
      if (!endpoint.calls && !endpoint.connections && !endpoint.bytesOut && !endpoint.bytesIn) continue;
      endpointAt.set(endpoint, endpoints.length);
      endpoints.push({
        endpoint: endpoint.key,
        transport: endpoint.transport,
        ...(endpoint.protocol ? { protocol: endpoint.protocol } : {}),
        calls: endpoint.calls,
        waitingMicros: Math.round(endpoint.waitingMicros),
        connections: endpoint.connections,
        bytesOut: endpoint.bytesOut,
        bytesIn: endpoint.bytesIn,
      });
    }
    // the stacks that had calls, and every function on them, sorted by waiting
    const used = new Set<number>();
    const stackRows: { frames: number[]; endpoint: Endpoint; calls: number; waiting: number }[] = [];
    this.stackCalls.forEach((calls, index) => {
      if (!calls) return;
      const stack = this.stacks[index] as { frames: number[]; endpoint: Endpoint };
      for (const frame of stack.frames) used.add(frame);
      stackRows.push({ ...stack, calls, waiting: this.stackWaiting[index] ?? 0 });
    });
    const order = [...used].sort((a, b) => (this.fnWaiting[b] ?? 0) - (this.fnWaiting[a] ?? 0));
    const renumber = new Map(order.map((fn, i) => [fn, i]));
    const functions: DownstreamFunction[] = order.map((fn) => ({
      ...(this.functions[fn] as { name: string; file: string; line: number; column: number }),
      calls: this.fnCalls[fn] ?? 0,
      waitingMicros: Math.round(this.fnWaiting[fn] ?? 0),
    }));
    const stacks: DownstreamStack[] = stackRows
      .sort((a, b) => b.waiting - a.waiting)
      .map((row) => ({
        frames: row.frames.map((fn) => renumber.get(fn) as number),
        endpoint: endpointAt.get(row.endpoint) ?? 0,
        calls: row.calls,
        waitingMicros: Math.round(row.waiting),
      }));
    return {
      requests: this.requests,
      endpoints,
      requestsWithCalls: {
        withCalls: this.withCalls,
        calls: this.requestCalls,
        unionMicros: Math.round(this.unionMs * 1000),
        sumMicros: Math.round(this.sumMs * 1000),
      },
      functions,
      stacks,
    };
  }
}

function sameFrames(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The one recorder of this process (the patched functions below reach it through here). */
let recorder: DownstreamRecorder | undefined;

function callWith(fn: (...args: never[]) => unknown, self: unknown, args: never[]): unknown {
  return fn.apply(self, args);
}

function emitServer(server: Server & { [SERVER_EMIT]?: Emit }, args: IArguments): boolean {
  return (server[SERVER_EMIT] as Emit).apply(server, args as unknown as Parameters<Emit>);
}

function responseClosed(this: http.ServerResponse & { [CONTEXT]?: RequestContext }): void {
  try {
    const context = this[CONTEXT];
    if (context) recorder?.requestEnded(context);
  } catch {
    // never break the server
  }
}

function writeRecorded(this: TrackedSocket, chunk: unknown): boolean {
  const state = this[STATE];
  // biome-ignore lint/complexity/noArguments: every socket write and event passes here; `arguments` is passed on without an array.
  if (!state) return Socket.prototype.write.apply(this, arguments as unknown as Parameters<Socket['write']>);
  try {
    recorder?.onWrite(this, state, chunk);
  } catch {
    // never break the client
  }
  // biome-ignore lint/complexity/noArguments: every socket write and event passes here; `arguments` is passed on without an array.
  return state.write.apply(this, arguments as unknown as Parameters<Socket['write']>);
}

function emitRecorded(this: TrackedSocket, event: string | symbol, chunk: unknown): boolean {
  const state = this[STATE];
  // biome-ignore lint/complexity/noArguments: every socket write and event passes here; `arguments` is passed on without an array.
  if (!state) return Socket.prototype.emit.apply(this, arguments as unknown as Parameters<Socket['emit']>);
  try {
    if (event === 'data') recorder?.onData(state, chunk);
    else if (event === 'close') recorder?.onClose(this, state);
  } catch {
    // never break the client
  }
  // biome-ignore lint/complexity/noArguments: every socket write and event passes here; `arguments` is passed on without an array.
  return state.emit.apply(this, arguments as unknown as Parameters<Socket['emit']>);
}

/**
 * Installs the recorder in this process (at the probe's load: a server's pool may connect before
 * it listens), unless HOTPATH_PROBE_WAITING=off; `calls`: without the requests' contexts (no
 * waiting per request). Undefined when off or when it cannot.
 */
export function installDownstream(probeFile: string): DownstreamRecorder | undefined {
  const level = process.env.HOTPATH_PROBE_WAITING;
  if (level === 'off') return undefined;
  if (recorder) return recorder;
  try {
    const created = new DownstreamRecorder(probeFile, level !== 'calls');
    created.install();
    recorder = created;
    return created;
  } catch {
    return undefined;
  }
}
