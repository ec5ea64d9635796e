import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import { getSystemErrorName } from 'node:util';
import { directWriter } from './direct-write.js';
import { HotpathLoadError } from './errors.js';
import type { TlsSettings } from './options.js';
import {
  ERROR_BODY,
  ERROR_CLOSED,
  ERROR_CONNECT,
  ERROR_OTHER,
  ERROR_PARSE,
  ERROR_RESET,
  ERROR_TIMEOUT,
} from './recorder.js';
import { tlsOnread } from './tls-read.js';
import type { ResponseSink, WireParser } from './wire.js';

/** What a connection needs from the run that owns it. */
export interface RequestSet {
  requests: Buffer[];
  /** Per request: the response has no body (HTTP HEAD). */
  noBody: boolean[];
}

export interface BuiltRequest {
  request: Buffer;
  noBody: boolean;
}

export interface ConnectionOwner {
  readonly host: string;
  readonly port: number;
  /** Unix domain socket to connect to instead of host:port, or null. */
  readonly socketPath: string | null;
  /** TLS settings (https://), or null for plain TCP. */
  readonly tls: TlsSettings | null;
  /** The ready requests this connection cycles through. */
  requestsFor(connection: number): RequestSet;
  /** Per-request callback (slow path: serialises every request), or null. */
  readonly buildRequest: ((connection: number, sequence: number) => BuiltRequest) | null;
  readonly pipelining: number;
  /** The fixed-rate model: requests go at their intended times (false: the closed model). */
  readonly paced: boolean;
  createParser(sink: ResponseSink): WireParser;
  /** Intended send time (ms, performance clock) of the next request, or -1 when none may go now. */
  take(now: number): number;
  /** Whether the request just taken is measured (false during warm-up). */
  readonly takenMeasured: boolean;
  /** A taken request was not answered and must be sent again (the server closed gracefully). */
  giveBack(intended: number, measured: boolean): void;
  response(status: number, latencyMs: number, measured: boolean): void;
  /** A request failed; `message` says how (the first one of each kind is kept). */
  error(kind: number, measured: boolean, message: string): void;
  /** A connection is ready; `resumed`: its TLS session was resumed (false for plain TCP). */
  /** `first`: this connection's first connect of the run (not a reconnect). */
  connected(resumed: boolean, first: boolean): void;
  /** A connect failed; `failure` is what the socket reported, `handshake` if TCP connected but TLS did not. */
  connectFailed(connection: LoadConnection, failure: ConnectFailure): void;
  /** A user callback threw: the run ends with that error. */
  abortWith(error: unknown): void;
  received(bytes: number): void;
  /** One read buffer shared by the connections of this thread (reads are handled synchronously). */
  readonly readBuffer: Buffer;
  /** Plain TCP with one request in flight may write past the Writable stream (see direct-write). */
  readonly directWrites: boolean;
}

/**
 * What the engine drives: one connection of any protocol (HTTP/1.1 and memcache: `Connection`;
 * HTTP/2: `H2Connection`). The engine opens it, lets it send (`fill`), watches its timers and
 * stops it; the connection reports every outcome to its `ConnectionOwner`.
 */
export interface LoadConnection {
  readonly inFlight: number;
  open(): void;
  /** Sends what the run allows now. */
  fill(now?: number): void;
  /** When the connect now under way started, or -1 when none is. */
  connectingSince(): number;
  connectTimedOut(): void;
  /** Time the oldest request in flight was written, or -1. */
  oldestSentAt(): number;
  /** Requests in flight longer than the timeout fail (and the connection recovers). */
  timeOut(timeoutMs: number): void;
  stop(): void;
  /** Schedules a new connect after a failed one. */
  retryLater(delayMs: number): void;
}

/** Why a connect failed: the socket error, and whether it was the TLS handshake (TCP had connected). */
export interface ConnectFailure {
  error: NodeJS.ErrnoException | null;
  handshake: boolean;
}

function noop(): void {}

/**
 * One keep-alive connection: writes ready request Buffers (up to `pipelining` in flight),
 * matches responses to requests in order, reconnects when the server closes.
 */
const BODY_MISMATCH = 'response body differs from the expected body (--expect-body)';

export class Connection implements LoadConnection, ResponseSink {
  private socket: Socket | TLSSocket | null = null;
  /** Writes a request on the socket's handle, past its Writable; null: use socket.write. */
  private write: ((data: Uint8Array) => number) | null = null;
  private readonly parser: WireParser;
  private readonly intended: Float64Array;
  private readonly sentAt: Float64Array;
  private readonly measured: Uint8Array;
  private readonly requestIndex: Int32Array;
  private readonly slotNoBody: Uint8Array;
  private readonly requests: Buffer[];
  private readonly noBodies: boolean[];
  private sequence = 0;
  private head = 0;
  private size = 0;
  private nextRequest: number;
  private isConnected = false;
  /** Connected at least once in this run (a later connect is a reconnect). */
  private connectedBefore = false;
  private stopped = false;
  private lastErrorKind = -1;
  private lastError: NodeJS.ErrnoException | null = null;
  private tcpConnected = false;
  /** The last TLS session the server gave this connection, offered again on reconnect. */
  private tlsSession: Buffer | undefined = undefined;
  private arrival = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reopen = false;
  private connectStartedAt = 0;

  constructor(
    private readonly owner: ConnectionOwner,
    private readonly index: number,
  ) {
    const cap = owner.pipelining;
    this.intended = new Float64Array(cap);
    this.sentAt = new Float64Array(cap);
    this.measured = new Uint8Array(cap);
    this.requestIndex = new Int32Array(cap);
    this.slotNoBody = new Uint8Array(cap);
    const set = owner.requestsFor(index);
    this.requests = set.requests;
    this.noBodies = set.noBody;
    this.nextRequest = index % set.requests.length;
    this.parser = owner.createParser(this);
    this.onConnect = this.onConnect.bind(this);
    this.onTcpConnect = this.onTcpConnect.bind(this);
    this.onSession = this.onSession.bind(this);
    this.onData = this.onData.bind(this);
    this.onRead = this.onRead.bind(this);
    this.onError = this.onError.bind(this);
    this.onClose = this.onClose.bind(this);
    this.open = this.open.bind(this);
  }

  get inFlight(): number {
    return this.size;
  }

  open(): void {
    this.reconnectTimer = null;
    if (this.stopped) return;
    this.isConnected = false;
    this.tcpConnected = false;
    this.lastErrorKind = -1;
    this.lastError = null;
    this.parser.reset();
    this.connectStartedAt = performance.now();
    const tls = this.owner.tls;
    if (tls === null) {
      // `onread` hands us bytes in one reused buffer, without the stream machinery per read.
      const where =
        this.owner.socketPath === null
          ? { host: this.owner.host, port: this.owner.port }
          : { path: this.owner.socketPath };
      const socket = connect({
        ...where,
        noDelay: true,
        onread: { buffer: this.owner.readBuffer, callback: this.onRead },
      });
      this.socket = socket;
      socket.on('connect', this.onConnect);
    } else {
      const socket = connectTls({
        // With a socket path the host still names the server (SNI, certificate check).
        host: this.owner.host,
        port: this.owner.port,
        ...(this.owner.socketPath === null ? {} : { path: this.owner.socketPath }),
        servername: tls.servername,
        rejectUnauthorized: tls.rejectUnauthorized,
        ca: tls.ca,
        session: this.tlsSession,
        ...tlsOnread(this.owner.readBuffer, this.onRead),
      });
      socket.setNoDelay(true);
      this.socket = socket;
      socket.on('connect', this.onTcpConnect);
      socket.on('secureConnect', this.onConnect);
      socket.on('session', this.onSession);
      socket.on('data', this.onData);
    }
    this.socket.on('error', this.onError);
    this.socket.on('close', this.onClose);
  }

  /** Sends what the run allows, up to the pipelining depth, in one corked write. */
  fill(now: number = performance.now()): void {
    const socket = this.socket;
    if (!this.isConnected || this.stopped || socket === null || this.size >= this.intended.length) return;
    const owner = this.owner;
    const cap = this.intended.length;
    let corked = false;
    while (this.size < cap) {
      const intended = owner.take(now);
      if (intended < 0) break;
      const slot = (this.head + this.size) % cap;
      const index = this.nextRequest;
      this.nextRequest = index + 1 === this.requests.length ? 0 : index + 1;
      let request: Buffer;
      let noBody: boolean;
      if (owner.buildRequest === null) {
        // The set is never empty (options.ts and protocol.ts refuse that) and nextRequest
        // cycles through it, so this check, one comparison beside a socket write, never fails.
        const ready = this.requests[index];
        if (ready === undefined) {
          owner.abortWith(
            new HotpathLoadError(
              'HP_LOAD_INVALID_REQUEST',
              `connection ${this.index} has no request ${index}`,
            ),
          );
          break;
        }
        request = ready;
        noBody = this.noBodies[index] === true;
      } else {
        try {
          const built = owner.buildRequest(this.index, this.sequence++);
          request = built.request;
          noBody = built.noBody;
        } catch (error) {
          owner.abortWith(error);
          break;
        }
      }
      this.intended[slot] = intended;
      this.sentAt[slot] = now;
      this.measured[slot] = owner.takenMeasured ? 1 : 0;
      this.requestIndex[slot] = index;
      this.slotNoBody[slot] = noBody ? 1 : 0;
      if (this.size === 0) this.parser.noBody = noBody;
      this.size++;
      const write = this.write;
      if (write !== null && write(request) === 0) continue;
      if (!corked && this.size < cap) {
        socket.cork();
        corked = true;
      }
      socket.write(request);
    }
    if (corked) socket.uncork();
  }

  /** When the connect now under way started, or -1 when none is. */
  connectingSince(): number {
    return this.socket !== null && !this.isConnected && !this.stopped ? this.connectStartedAt : -1;
  }

  /** A connect took longer than the timeout (e.g. SYNs dropped): give up on it like a refused one. */
  connectTimedOut(): void {
    const handshake = this.tcpConnected;
    this.drop();
    this.owner.connectFailed(this, { error: null, handshake });
  }

  /** Time the oldest request in flight was written, or -1. */
  oldestSentAt(): number {
    return this.size === 0 ? -1 : (this.sentAt[this.head] ?? -1);
  }

  /** Every request in flight timed out: count them and start over on a new socket. */
  timeOut(timeoutMs: number): void {
    this.failInFlight(ERROR_TIMEOUT, `no response within ${timeoutMs / 1000} s`);
    this.drop();
    this.open();
  }

  /** Ends the connection for good (run finished). */
  stop(): void {
    this.stopped = true;
    this.parser.halted = true;
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.drop();
  }

  onResponse(status: number, close: boolean, bodyMismatch = false): void {
    const slot = this.head;
    const intended = this.intended[slot]; // a number: slots are below the ring's length
    if (this.size === 0 || intended === undefined) {
      this.onParseError('response without a request');
      return;
    }
    const cap = this.intended.length;
    this.head = slot + 1 === cap ? 0 : slot + 1;
    this.size--;
    if (this.size > 0) this.parser.noBody = this.slotNoBody[this.head] === 1;
    if (bodyMismatch) this.owner.error(ERROR_BODY, this.measured[slot] === 1, BODY_MISMATCH);
    else this.owner.response(status, this.arrival - intended, this.measured[slot] === 1);
    if (close && !this.stopped) {
      // Graceful close: the requests behind this one were never handled; send them again.
      this.parser.halted = true;
      this.giveBackInFlight();
      this.drop();
      this.reopen = true;
    }
  }

  onParseError(reason: string): void {
    this.parser.halted = true;
    this.failInFlight(ERROR_PARSE, reason);
    this.drop();
    this.reopen = true;
  }

  private onConnect(): void {
    this.isConnected = true;
    const socket = this.socket;
    if (this.owner.directWrites && socket !== null && this.owner.tls === null) {
      this.write = directWriter(socket, (code) => {
        // a write queued in libuv failed later: end this socket as the stream would have
        const name = getSystemErrorName(code);
        socket.destroy(
          Object.assign(new Error(`write ${name}`), { errno: code, code: name, syscall: 'write' }),
        );
      });
    }
    const first = !this.connectedBefore;
    this.connectedBefore = true;
    this.owner.connected(this.owner.tls !== null && (socket as TLSSocket).isSessionReused(), first);
    this.fill();
  }

  private onTcpConnect(): void {
    this.tcpConnected = true;
  }

  private onSession(session: Buffer): void {
    this.tlsSession = session;
  }

  /** Only where tls.connect ignores `onread` (see tlsOnread). */
  private onData(chunk: Buffer): void {
    this.onRead(chunk.length, chunk);
  }

  private onRead(length: number, buffer: Buffer): boolean {
    const arrival = performance.now();
    this.arrival = arrival;
    this.owner.received(length);
    this.parser.execute(buffer, length);
    if (this.reopen) {
      // The parser was halted mid-chunk; a fresh socket starts only now.
      this.reopen = false;
      this.open();
    } else if (this.isConnected) this.fill(arrival);
    return true;
  }

  private onError(error: NodeJS.ErrnoException): void {
    this.lastError = error;
    const code = error.code ?? '';
    if (!this.isConnected) this.lastErrorKind = ERROR_CONNECT;
    else if (code === 'ECONNRESET' || code === 'EPIPE') this.lastErrorKind = ERROR_RESET;
    else this.lastErrorKind = ERROR_OTHER;
  }

  private onClose(): void {
    this.socket = null;
    this.write = null;
    if (this.stopped) return;
    if (!this.isConnected) {
      this.owner.connectFailed(this, { error: this.lastError, handshake: this.tcpConnected });
      return;
    }
    this.isConnected = false;
    if (this.size > 0) {
      this.arrival = performance.now();
      this.parser.finishOnClose();
      if (this.size > 0) {
        if (this.lastErrorKind === -1)
          this.failInFlight(
            ERROR_CLOSED,
            'the server closed the connection before the response was complete',
          );
        else this.failInFlight(this.lastErrorKind, this.lastError?.message ?? 'socket error');
      }
    }
    this.reopen = false;
    this.open();
  }

  /** Schedules a new connect after a failed one. */
  retryLater(delayMs: number): void {
    if (this.stopped || this.reconnectTimer !== null) return;
    this.reconnectTimer = setTimeout(this.open, delayMs);
  }

  private failInFlight(kind: number, message: string): void {
    const cap = this.intended.length;
    while (this.size > 0) {
      const slot = this.head;
      this.head = slot + 1 === cap ? 0 : slot + 1;
      this.size--;
      this.owner.error(kind, this.measured[slot] === 1, message);
    }
    this.head = 0;
  }

  private giveBackInFlight(): void {
    const cap = this.intended.length;
    // Keep the cycle of requests in step: the first unanswered request goes out again next.
    if (this.size > 0) this.nextRequest = this.requestIndex[this.head] ?? this.nextRequest;
    while (this.size > 0) {
      const slot = this.head;
      this.head = slot + 1 === cap ? 0 : slot + 1;
      this.size--;
      // (slots are below the ring's length; an unknown intended time would mean "now")
      this.owner.giveBack(this.intended[slot] ?? performance.now(), this.measured[slot] === 1);
    }
    this.head = 0;
  }

  private drop(): void {
    const socket = this.socket;
    this.socket = null;
    this.write = null;
    this.isConnected = false;
    if (socket === null) return;
    socket.removeAllListeners();
    socket.on('error', noop);
    socket.destroy();
  }
}
