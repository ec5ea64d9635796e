import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { acceptQueue, isLoopback } from './accept-queue.js';
import type {
  BuiltRequest,
  ConnectFailure,
  ConnectionOwner,
  LoadConnection,
  RequestSet,
} from './connection.js';
import { HotpathLoadError } from './errors.js';
import type { ResolvedOptions, TlsSettings } from './options.js';
import { ERROR_CONNECT, Recorder } from './recorder.js';
import type { ResponseSink, WireParser } from './wire.js';

/** One second of progress, emitted as 'tick'. */
export interface Tick {
  /** 1-based second of the measured window. */
  second: number;
  requests: number;
  bytes: number;
  errors: number;
}

/** What the engine emits: 'tick' each measured second, 'warmup' each second of warm-up. */
export interface EngineEvents {
  tick: [Tick];
  warmup: [Tick];
}

export interface EngineOutcome {
  recorder: Recorder;
  /** Measured seconds. */
  duration: number;
  aborted: boolean;
  /** Wall-clock start of the measured window (ms since epoch). */
  startedAt: number;
  /** The run stopped because `bailout` requests failed. */
  bailedOut: boolean;
}

/** How the engine talks a protocol: the ready requests and a parser factory. */
export interface Protocol {
  /** The requests each connection cycles through (serialised once per connection). */
  requestsFor(connection: number): RequestSet;
  /** Optional per-request callback: a fresh request each time (slow path). */
  buildRequest: ((connection: number, sequence: number) => BuiltRequest) | null;
  createParser(sink: ResponseSink): WireParser;
  /** A connection speaking this protocol. */
  createConnection(owner: ConnectionOwner, index: number): LoadConnection;
}

const PHASE_CONNECTING = 0;
/**
 * With connectFirst, where the server's accept queue cannot be seen (see settle): how long after
 * the last connection is up the clocks start, so that a server that accepts one connection per
 * turn of its event loop has accepted them all (an idle one takes a few microseconds per turn).
 */
export const CONNECT_SETTLE_MS = 20;
/** How often connectFirst looks at a local server's accept queue (see settle). */
const ACCEPT_POLL_MS = 1;
const PHASE_WARMUP = 1;
const PHASE_MEASURE = 2;
/** After `duration` with `drain`: nothing new is sent; the requests in flight are still counted. */
const PHASE_DRAIN = 3;
const PHASE_DONE = 4;

/**
 * Runs one load test in this thread: owns the connections, decides when each request may
 * go (closed model: as soon as a connection is free; open model: on an even schedule), and
 * ends on duration, amount, abort, or an unreachable target.
 */
export class LoadEngine extends EventEmitter<EngineEvents> implements ConnectionOwner {
  readonly host: string;
  readonly port: number;
  readonly socketPath: string | null;
  readonly tls: TlsSettings | null;
  readonly pipelining: number;
  readonly buildRequest: ((connection: number, sequence: number) => BuiltRequest) | null;
  readonly recorder = new Recorder();
  readonly readBuffer = Buffer.allocUnsafe(64 * 1024);
  /**
   * One request in flight per connection (HTTP/1.1), or HTTP/2: writes go straight to the socket's handle
   * (direct-write.ts) where this Node allows it. HOTPATH_LOAD_STREAM_WRITES=1 turns it off.
   */
  readonly directWrites: boolean;
  takenMeasured = false;

  private readonly connections: LoadConnection[] = [];
  private phase = PHASE_CONNECTING;
  private reserved = 0;
  private readonly amount: number;
  private readonly interval: number;
  private scheduleStart = 0;
  private issued = 0;
  private readonly retryQueue: number[] = [];
  private measureStart = 0;
  private measureStartWall = 0;
  private measureEnd = 0;
  private everConnected = false;
  /** Connections that have connected at least once (connectFirst waits for all of them). */
  private connectedOnce = 0;
  private connectWait: NodeJS.Timeout | null = null;
  private connectFailures = 0;
  private aborted = false;
  private bailedOut = false;
  /** Responses and failures of the warm-up second in progress (for 'warmup' progress events). */
  private warmupResponses = 0;
  private warmupErrors = 0;
  private readonly timers: NodeJS.Timeout[] = [];
  private dispatchTimer: NodeJS.Timeout | null = null;
  private drainCheck: NodeJS.Immediate | null = null;
  private rotate = 0;
  private resolve!: (outcome: EngineOutcome) => void;
  private reject!: (error: Error) => void;
  readonly done: Promise<EngineOutcome>;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly protocol: Protocol,
    private readonly signal?: AbortSignal,
  ) {
    super();
    this.host = options.target.host;
    this.port = options.target.port;
    this.socketPath = options.socketPath;
    this.tls = options.target.kind === 'http' ? options.target.tls : null;
    this.buildRequest = protocol.buildRequest;
    this.pipelining = options.pipelining;
    // HTTP/2 writes all its frames in one buffer per turn, whatever the streams per connection.
    const http2 = options.target.kind === 'http' && options.target.http2;
    this.directWrites = (options.pipelining === 1 || http2) && process.env.HOTPATH_LOAD_STREAM_WRITES !== '1';
    this.amount = options.amount ?? Number.POSITIVE_INFINITY;
    this.interval = options.rate === undefined ? 0 : 1000 / options.rate;
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.onAbort = this.onAbort.bind(this);
    this.dispatch = this.dispatch.bind(this);
  }

  requestsFor(connection: number): RequestSet {
    return this.protocol.requestsFor(connection);
  }

  createParser(sink: ResponseSink): WireParser {
    return this.protocol.createParser(sink);
  }

  start(): Promise<EngineOutcome> {
    if (this.phase === PHASE_DONE) return this.done;
    if (this.signal?.aborted) {
      this.aborted = true;
      this.finish();
      return this.done;
    }
    try {
      // setupConnection hooks run here; one that throws ends the run before any socket opens.
      for (let i = 0; i < this.options.connections; i++)
        this.connections.push(this.protocol.createConnection(this, i));
    } catch (error) {
      this.abortWith(error);
      return this.done;
    }
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (this.options.connectFirst) {
      // nothing is sent until every connection is up (or the connect timeout has passed)
      this.connectWait = setTimeout(() => this.beginClocks(), this.options.timeout * 1000);
      this.timers.push(this.connectWait);
      for (const connection of this.connections) connection.open();
    } else {
      this.beginClocks();
      for (const connection of this.connections) connection.open();
      if (this.interval > 0) this.dispatch();
    }
    const timeoutMs = this.options.timeout * 1000;
    const scan = Math.max(20, Math.min(250, timeoutMs / 4));
    this.timers.push(setInterval(() => this.checkTimeouts(timeoutMs), scan));
    return this.done;
  }

  /** Starts the warm-up (or the measurement) and the open model's schedule; once. */
  private beginClocks(): void {
    if (this.phase !== PHASE_CONNECTING) return;
    if (this.connectWait !== null) clearTimeout(this.connectWait);
    this.connectWait = null;
    this.scheduleStart = performance.now();
    if (this.options.warmup > 0) {
      this.phase = PHASE_WARMUP;
      // The progress interval goes first: at a whole-second warm-up its last second fires
      // before the timer that begins the measurement.
      let second = 0;
      const warmupTicks = setInterval(() => {
        if (this.phase !== PHASE_WARMUP) {
          clearInterval(warmupTicks);
          return;
        }
        second++;
        const tick: Tick = { second, requests: this.warmupResponses, bytes: 0, errors: this.warmupErrors };
        this.warmupResponses = 0;
        this.warmupErrors = 0;
        this.emit('warmup', tick);
      }, 1000);
      this.timers.push(warmupTicks);
      this.timers.push(setTimeout(() => this.beginMeasure(), this.options.warmup * 1000));
    } else {
      this.beginMeasure();
    }
    if (!this.options.connectFirst) return;
    for (const connection of this.connections) connection.fill();
    if (this.interval > 0) this.dispatch();
  }

  /** Stops now; the result holds what was measured so far. */
  stop(): void {
    if (this.phase === PHASE_DONE) return;
    this.aborted = true;
    this.finish();
  }

  // ---- ConnectionOwner: called by connections on the hot path ----

  get paced(): boolean {
    return this.interval > 0;
  }

  take(now: number): number {
    if (this.phase >= PHASE_DRAIN || this.phase === PHASE_CONNECTING) return -1;
    const measuring = this.phase === PHASE_MEASURE;
    if (measuring && this.reserved >= this.amount) return -1;
    let intended = now;
    if (this.interval > 0) {
      const retry = this.retryQueue.shift();
      if (retry !== undefined) {
        intended = retry;
      } else {
        intended = this.scheduleStart + this.issued * this.interval;
        if (intended > now) return -1;
        this.issued++;
      }
    }
    if (measuring) this.reserved++;
    this.takenMeasured = measuring;
    return intended;
  }

  giveBack(intended: number, measured: boolean): void {
    if (measured) this.reserved--;
    if (this.interval > 0) this.retryQueue.push(intended);
    if (this.phase === PHASE_DRAIN) this.checkDrained();
  }

  response(status: number, latencyMs: number, measured: boolean): void {
    if (!measured) {
      this.warmupResponses++;
      // a warm-up request still in flight when the drain began: the drain waits for it too
      if (this.phase === PHASE_DRAIN) this.checkDrained();
      return;
    }
    if (this.phase === PHASE_DONE) return;
    this.recorder.response(status, Math.round(latencyMs * 1000));
    if (this.recorder.outcomes >= this.amount) this.finish();
    else if (this.phase === PHASE_DRAIN) this.checkDrained();
  }

  error(kind: number, measured: boolean, message: string): void {
    if (!measured) {
      this.warmupErrors++;
      if (this.phase === PHASE_DRAIN) this.checkDrained();
      return;
    }
    if (this.phase === PHASE_DONE) return;
    this.recorder.error(kind, message);
    if (this.recorder.errors >= this.options.bailout) {
      this.bailedOut = true;
      this.finish();
    } else if (this.recorder.outcomes >= this.amount) this.finish();
    else if (this.phase === PHASE_DRAIN) this.checkDrained();
  }

  received(bytes: number): void {
    if (this.phase === PHASE_MEASURE || this.phase === PHASE_DRAIN) this.recorder.received(bytes);
  }

  connected(resumed: boolean, first: boolean): void {
    this.everConnected = true;
    this.recorder.connected(resumed);
    if (!first || this.phase !== PHASE_CONNECTING) return;
    this.connectedOnce++;
    if (this.connectedOnce === this.connections.length && this.connectWait !== null) {
      clearTimeout(this.connectWait);
      this.connectWait = null;
      void this.settle();
    }
  }

  /**
   * With connectFirst, once every connection is up: the clocks start when the server has accepted
   * them all. A server on this machine's loopback (Linux): as soon as its accept queue is empty
   * (see accept-queue.ts), however long a busy server or a loaded machine keeps it from its turns
   * (at most `timeout`); elsewhere CONNECT_SETTLE_MS later.
   */
  private async settle(): Promise<void> {
    const deadline = performance.now() + this.options.timeout * 1000;
    while (this.socketPath === null && isLoopback(this.host)) {
      const waiting = await acceptQueue(this.port);
      if (this.phase !== PHASE_CONNECTING || waiting === undefined) break;
      if (waiting === 0 || performance.now() >= deadline) return this.beginClocks();
      await delay(ACCEPT_POLL_MS);
    }
    if (this.phase !== PHASE_CONNECTING) return;
    this.connectWait = setTimeout(() => this.beginClocks(), CONNECT_SETTLE_MS);
    this.timers.push(this.connectWait);
  }

  connectFailed(connection: LoadConnection, failure: ConnectFailure): void {
    if (this.phase === PHASE_DONE) return;
    if (!this.everConnected) {
      this.connectFailures++;
      if (this.connectFailures >= this.connections.length) {
        this.fail(connectError(this.host, this.port, failure, this.options.timeout, this.socketPath));
        return;
      }
      connection.retryLater(50);
      return;
    }
    // A failed reconnect is one failed request: it counts toward the amount, so a run whose
    // target went away still ends.
    if (this.phase === PHASE_MEASURE && this.reserved < this.amount) {
      this.reserved++;
      this.error(
        ERROR_CONNECT,
        true,
        `connect to ${this.socketPath ?? `${this.host}:${this.port}`}: ${connectFailureReason(failure, this.options.timeout)}`,
      );
    }
    connection.retryLater(20);
  }

  abortWith(error: unknown): void {
    this.fail(
      error instanceof Error ? error : new HotpathLoadError('HP_LOAD_INVALID_REQUEST', String(error)),
    );
  }

  // ---- phases and timers ----

  private beginMeasure(): void {
    if (this.phase === PHASE_DONE) return;
    this.phase = PHASE_MEASURE;
    this.recorder.recording = true;
    this.measureStart = performance.now();
    this.measureStartWall = Date.now();
    let second = 0;
    this.timers.push(
      setInterval(() => {
        const sample = this.recorder.sampleSecond();
        second++;
        this.emit('tick', { second, ...sample } satisfies Tick);
      }, 1000),
    );
    if (this.options.duration !== undefined) {
      this.timers.push(
        setTimeout(
          () => (this.options.drain ? this.beginDrain() : this.finish()),
          this.options.duration * 1000,
        ),
      );
    }
  }

  /** `drain`: the duration is over; what is in flight is awaited (timeouts still apply). */
  private beginDrain(): void {
    if (this.phase !== PHASE_MEASURE) return;
    this.phase = PHASE_DRAIN;
    this.checkDrained();
  }

  /**
   * Ends a drain once no request is in flight. Deferred to the next turn of the event loop: a
   * connection updates its own count after telling the engine (and a reply may carry several).
   */
  private checkDrained(): void {
    if (this.drainCheck !== null) return;
    this.drainCheck = setImmediate(() => {
      this.drainCheck = null;
      if (this.phase !== PHASE_DRAIN) return;
      if (this.connections.every((c) => c.inFlight === 0)) this.finish();
    });
  }

  /** Open model: hands due requests to connections with room, then sleeps until the next is due. */
  private dispatch(): void {
    this.dispatchTimer = null;
    if (this.phase === PHASE_DONE) return;
    const connections = this.connections;
    const n = connections.length;
    const start = this.rotate;
    this.rotate = start + 1 === n ? 0 : start + 1;
    const now = performance.now();
    for (let i = 0; i < n; i++) {
      connections[(start + i) % n]?.fill(now);
    }
    const next = this.scheduleStart + this.issued * this.interval;
    const wait = next - now;
    this.dispatchTimer = setTimeout(this.dispatch, wait > 1 ? Math.floor(wait) : 1);
  }

  private checkTimeouts(timeoutMs: number): void {
    const now = performance.now();
    for (const connection of this.connections) {
      const connecting = connection.connectingSince();
      if (connecting >= 0 && now - connecting > timeoutMs) {
        connection.connectTimedOut();
        continue;
      }
      const sent = connection.oldestSentAt();
      if (sent >= 0 && now - sent > timeoutMs) connection.timeOut(timeoutMs);
    }
  }

  private onAbort(): void {
    this.aborted = true;
    this.finish();
  }

  private cleanup(): void {
    this.phase = PHASE_DONE;
    this.recorder.recording = false;
    if (this.drainCheck !== null) clearImmediate(this.drainCheck);
    this.signal?.removeEventListener('abort', this.onAbort);
    for (const timer of this.timers) clearTimeout(timer);
    if (this.dispatchTimer !== null) clearTimeout(this.dispatchTimer);
    for (const connection of this.connections) connection.stop();
  }

  private fail(error: Error): void {
    if (this.phase === PHASE_DONE) return;
    this.cleanup();
    this.reject(error);
  }

  private finish(): void {
    if (this.phase === PHASE_DONE) return;
    const measured = this.phase === PHASE_MEASURE || this.phase === PHASE_DRAIN;
    this.measureEnd = performance.now();
    // The last whole second may end a hair after the duration timer fires: close it too.
    const seconds = (this.measureEnd - this.measureStart) / 1000;
    if (measured && this.recorder.requestsPerSecond.length + 1 <= seconds + 0.05) {
      const sample = this.recorder.sampleSecond();
      this.emit('tick', { second: this.recorder.requestsPerSecond.length, ...sample } satisfies Tick);
    }
    this.cleanup();
    this.resolve({
      recorder: this.recorder,
      duration: measured ? (this.measureEnd - this.measureStart) / 1000 : 0,
      aborted: this.aborted,
      startedAt: this.measureStartWall,
      bailedOut: this.bailedOut,
    });
  }
}

/** Why a connect failed, in a few words, e.g. "connection refused (ECONNREFUSED)". */
export function connectFailureReason(failure: ConnectFailure, timeoutSeconds: number): string {
  const error = failure.error;
  if (error === null)
    return failure.handshake
      ? `no TLS handshake within ${timeoutSeconds} s`
      : `no connection within ${timeoutSeconds} s`;
  if (failure.handshake) return `TLS handshake failed: ${error.message}`;
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED') return 'connection refused (ECONNREFUSED)';
  if (code === 'ECONNRESET') return 'connection reset (ECONNRESET)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `host name not resolved (${code})`;
  if (code === 'ETIMEDOUT') return 'timed out (ETIMEDOUT)';
  return error.message;
}

/** The error a run fails with when no connection could be opened at its start. */
function connectError(
  host: string,
  port: number,
  failure: ConnectFailure,
  timeoutSeconds: number,
  socketPath: string | null,
): HotpathLoadError {
  const error = failure.error;
  const where = socketPath ?? `${host}:${port}`;
  if (failure.handshake && error !== null) {
    const untrusted = /certificate|CERT|self.signed|altname/i.test(`${error.code ?? ''} ${error.message}`);
    return new HotpathLoadError(
      'HP_LOAD_TLS',
      `TLS handshake with ${where} failed: ${error.message}${
        untrusted ? ' (certificate not trusted: pass --ca FILE with its issuer, or leave out --verify)' : ''
      }`,
      { cause: error },
    );
  }
  return new HotpathLoadError(
    'HP_LOAD_UNREACHABLE',
    `cannot connect to ${where}: ${connectFailureReason(failure, timeoutSeconds)}`,
    { cause: error ?? undefined },
  );
}
