// The probe's record of what the server waits for (bundled into probe.cjs with probe.ts): every
// outgoing exchange over a TCP or Unix socket — what node:http, https, undici, fetch and the
// database and cache drivers (pg, ioredis, mysql2, memcache clients) all use — by endpoint.
//
// A call is one exchange: the socket is idle, a write starts a call, later writes join it until
// data arrives, and the call ends with the last data before the next write (or the socket's
// close, or the window's end). Pipelined writes answered together are one call. An HTTP
// client's socket is one socket like any other, so HTTP is counted once, by the same rule. A
// multiplexed protocol (Redis: one connection carries every request's commands) is counted by
// command instead, each ended by its own reply (probe-downstream-resp).
//
// Every socket a client connects (net.Socket.prototype.connect, which net.connect, tls.connect,
// http's agents and undici all reach) gets its own `write` and `emit` (module functions reading
// the socket's state: no closure per call). Its parts: where calls go (probe-downstream-endpoints),
// who issued them (probe-downstream-clients: origins handed from the user's call to a later
// write; probe-downstream-code: the user's frames, functions and stacks), and the requests'
// waiting (probe-downstream-requests). Never throws into the host.
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Server, Socket } from 'node:net';
import { DOWNSTREAM_LIMITS, OTHER } from '../downstream-limits.js';
import type { DownstreamWindow } from '../downstream-model.js';
import { installOrigins, ORIGIN, type Origin, type OriginSource } from './probe-downstream-clients.js';
import { WaitingCode } from './probe-downstream-code.js';
import {
  Endpoint,
  endpointOf,
  endpointRows,
  protocolOfGreeting,
  protocolOfWrite,
  StackGroup,
} from './probe-downstream-endpoints.js';
import { RequestWaiting } from './probe-downstream-requests.js';
import { Call, Commands, MAX_OUTSTANDING } from './probe-downstream-resp.js';

const STATE = Symbol('hotpath.downstream');

/**
 * A client socket's state, and its call when calls are exchanges. A multiplexed protocol (Redis)
 * has `commands`: each command a call of its own, ended by its own reply.
 */
class Tracked extends Call {
  detected = false;
  inCall = false;
  /** The origin an HTTP client captured for the call its next write starts. */
  pending: Origin | undefined = undefined;
  outMark = 0;
  inMark = 0;
  commands: Commands | undefined = undefined;
  constructor(
    readonly endpoint: Endpoint,
    readonly write: Socket['write'],
    readonly emit: Socket['emit'],
  ) {
    super();
  }
}

type TrackedSocket = Socket & { [STATE]?: Tracked; _httpMessage?: { [ORIGIN]?: Origin } };

/** The recorder: one per process, installed at the probe's load. */
export class DownstreamRecorder implements OriginSource {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly live = new Set<TrackedSocket>();
  private readonly endpointOrder: Endpoint[] = [];
  /** Waiting on the requests' path. */
  private readonly waiting = new RequestWaiting(() => this.open);
  private windowId = 0;
  open = false;
  readonly originStore = new AsyncLocalStorage<Origin>();
  private readonly otherEndpoint = new Endpoint(OTHER, 'tcp', 0);
  /** The code that waits: its functions and stacks. */
  readonly code: WaitingCode;

  /**
   * @param contexts whether incoming requests get an async context (their union and sum of
   * waiting): an AsyncLocalStorage, which before Node 24's AsyncContextFrame runs a hook on every
   * promise made — HOTPATH_PROBE_WAITING=calls leaves it out.
   */
  constructor(
    probeFile: string,
    private readonly contexts = true,
  ) {
    this.code = new WaitingCode(probeFile, this.otherEndpoint);
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
    installOrigins(this);
  }

  stackDue(): boolean {
    return this.code.stackDue();
  }

  setPending(socket: unknown, origin: Origin): void {
    const state = (socket as TrackedSocket)[STATE];
    if (state) state.pending = origin;
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
    this.waiting.serve(server);
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
      if (protocol === 'redis') state.commands = new Commands();
    }
    if (state.commands) {
      this.onCommands(socket, state, state.commands, chunk);
      return;
    }
    if (state.inCall && !state.answered) return;
    if (state.inCall) this.endCall(state, state);
    state.inCall = true;
    this.begin(socket, state, state, performance.now(), undefined);
  }

  /** The commands a write starts, each a call (one origin for them all). */
  private onCommands(socket: TrackedSocket, state: Tracked, commands: Commands, chunk: unknown): void {
    commands.out.feed(chunk);
    const started = commands.out.started;
    if (started === 0) return;
    const now = performance.now();
    let origin: Origin | undefined;
    for (let i = 0; i < started; i++) {
      const call = new Call();
      origin = this.begin(socket, state, call, now, origin);
      commands.queue.push(call);
    }
    while (commands.queue.length > MAX_OUTSTANDING) this.endCall(state, commands.queue.shift() as Call);
  }

  /** A call starts now: its window, who issued it (`origin` when known) and its request; the origin. */
  private begin(
    socket: TrackedSocket,
    state: Tracked,
    call: Call,
    now: number,
    known: Origin | undefined,
  ): Origin | undefined {
    call.answered = false;
    call.start = now;
    if (!this.waiting.store && this.contexts) this.waiting.enable();
    if (!this.open) {
      call.window = 0;
      call.group = undefined;
      state.pending = undefined;
      return known;
    }
    call.window = this.windowId;
    const origin =
      known ??
      state.pending ??
      socket._httpMessage?.[ORIGIN] ??
      this.originStore.getStore() ??
      this.origin(writeRecorded as (...args: never[]) => unknown, this.stackDue());
    state.pending = undefined;
    const frames = origin.frames;
    const endpoint = state.endpoint;
    const group = endpoint.group;
    call.group = group;
    if (frames) {
      group.fn = this.code.issuing(frames);
      group.resumed = origin.resumed;
      group.stack = this.code.stackOf(frames, endpoint);
      endpoint.group = new StackGroup();
      endpoint.stacked = group;
      this.code.addHeld(group, group);
    }
    this.code.callStarted();
    const context = origin.context ?? this.waiting.store?.getStore();
    if (context && !context.done) this.waiting.callStarted(context, call);
    return origin;
  }

  onData(state: Tracked, chunk: unknown): void {
    const commands = state.commands;
    if (commands) {
      commands.in.feed(chunk);
      const now = performance.now();
      for (let i = commands.in.completed; i > 0 && commands.queue.length > 0; i--) {
        const call = commands.queue.shift() as Call;
        call.answered = true;
        call.last = now;
        this.endCall(state, call);
      }
      return;
    }
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
    if (state.inCall) this.endCall(state, state);
    if (state.commands) for (const call of state.commands.queue.splice(0)) this.endCall(state, call);
    this.countBytes(socket, state);
    this.live.delete(socket);
  }

  /** The call ends at its last data; an unanswered one (a write the peer never answered) is no call. */
  private endCall(state: Tracked, call: Call): void {
    if (call === state) state.inCall = false;
    // no request's context: a timer's job, a consumer, work after the response (contexts on only)
    const outside = this.contexts && call.context === undefined ? 1 : 0;
    this.waiting.callEnded(call);
    if (!call.answered || !this.open || call.window !== this.windowId) return;
    const micros = (call.last - call.start) * 1000;
    state.endpoint.calls++;
    state.endpoint.waitingMicros += micros;
    const group = call.group;
    if (!group) return;
    if (group.stack >= 0) this.code.add(group.fn, group.resumed, group.stack, 1, micros, outside);
    else {
      group.heldCalls++;
      group.heldMicros += micros;
      group.heldOutside += outside;
    }
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

  /** Who issues a call now: the request, and with `withStack` the user's frames (async ones included). */
  origin(below: (...args: never[]) => unknown, withStack: boolean): Origin {
    const context = this.waiting.store?.getStore();
    if (!withStack) return { frames: undefined, resumed: -1, context };
    const { frames, resumed } = this.code.userFrames(below);
    return { frames, resumed, context };
  }

  /** Opens a window: every counter from zero; calls under way when it opens are not its calls. */
  start(): void {
    this.windowId++;
    this.open = true;
    for (const endpoint of [...this.endpointOrder, this.otherEndpoint]) endpoint.reset();
    this.code.reset();
    this.waiting.reset();
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
      if (state.inCall && state.answered) this.endCall(state, state);
      this.countBytes(socket, state);
    }
    // the calls since an endpoint's last stack stand with it (else they were in no function's row)
    for (const { stacked, group } of [...this.endpointOrder, this.otherEndpoint])
      if (stacked) this.code.addHeld(stacked, group);
    this.open = false;
    return this.result();
  }

  private result(): DownstreamWindow {
    const { endpoints, endpointAt } = endpointRows([...this.endpointOrder, this.otherEndpoint]);
    const { functions, stacks } = this.code.rows(endpointAt);
    return {
      requests: this.waiting.requests,
      endpoints,
      requestsWithCalls: this.waiting.result(),
      functions,
      stacks,
    };
  }
}

/** The one recorder of this process (the patched functions below reach it through here). */
let recorder: DownstreamRecorder | undefined;

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
