import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import type { ConnectionOwner, LoadConnection } from './connection.js';
import { HotpathLoadError, type LoadErrorCode } from './errors.js';
import {
  CLIENT_PREFACE,
  FLAG_ACK,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FLAG_PADDED,
  FLAG_PRIORITY,
  FRAME_CONTINUATION,
  FRAME_DATA,
  FRAME_GOAWAY,
  FRAME_HEADER_SIZE,
  FRAME_HEADERS,
  FRAME_PING,
  FRAME_RST_STREAM,
  FRAME_SETTINGS,
  FRAME_WINDOW_UPDATE,
  FrameReader,
  type FrameSink,
  frameProblem,
  H2_CANCEL,
  H2_COMPRESSION_ERROR,
  H2_ENHANCE_YOUR_CALM,
  H2_FLOW_CONTROL_ERROR,
  H2_FRAME_SIZE_ERROR,
  H2_PROTOCOL_ERROR,
  H2_REFUSED_STREAM,
  h2ErrorName,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_HEADER_TABLE_SIZE,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_FRAME_SIZE,
  SETTINGS_MAX_HEADER_LIST_SIZE,
  settingsFrame,
  sizeProblem,
  writeFrameHeader,
} from './h2-frames.js';
import { FrameWriter } from './h2-writer.js';
import { type HeaderField, HPACK_ERROR_TOO_LARGE, HpackDecoder, HpackEncoder } from './hpack.js';
import {
  ERROR_CLOSED,
  ERROR_GRPC,
  ERROR_OTHER,
  ERROR_PARSE,
  ERROR_REFUSED,
  ERROR_RESET,
  ERROR_STREAM,
  ERROR_TIMEOUT,
} from './recorder.js';
import { tlsOnread } from './tls-read.js';

/** The requests an HTTP/2 connection cycles through, as header fields and bodies. */
export interface H2RequestPlan {
  fields: HeaderField[][];
  /** Per request: its body, or null. */
  bodies: (Buffer | null)[];
  /** gRPC calls: a response is a success only with grpc-status 0 in its trailers. */
  grpc: boolean;
}

/** gRPC status codes by number (grpc/doc/statuscodes.md). */
const GRPC_CODES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/** Limits against a hostile server (see the README's "Hostile servers"). */
export const H2_LIMITS = {
  /** Header list bytes (names + values + 32 per field), and header block bytes. */
  headerList: 64 * 1024,
  /** CONTINUATION frames in one header block. */
  continuations: 128,
  /** PING and SETTINGS frames between two completed responses. */
  controlFrames: 1000,
  /** Header blocks (informational heads, trailers) on one stream. */
  headerBlocks: 8,
} as const;

/**
 * In the closed model, the requests a read freed wait (1 ms at most: FrameWriter.hold) while more
 * than this share of the connection's streams are still in flight, so that each write carries
 * several requests: one read for the server (and over TLS one record to decrypt), not two or three.
 */
const HOLD_WHILE_IN_FLIGHT = 0.5;

/** Our receive windows: a stream's (announced in SETTINGS) and the connection's. */
const STREAM_WINDOW = 1 << 20;
const CONNECTION_WINDOW = 1 << 24;
const DEFAULT_WINDOW = 65_535;
const MAX_WINDOW = 2 ** 31 - 1;
/** After this many stream ids a connection is replaced (ids end at 2^31-1). */
const LAST_STREAM_ID = 2 ** 31 - 1;

const OUR_SETTINGS = Buffer.concat([
  CLIENT_PREFACE,
  settingsFrame([
    [SETTINGS_ENABLE_PUSH, 0],
    [SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW],
    [SETTINGS_MAX_HEADER_LIST_SIZE, H2_LIMITS.headerList],
  ]),
  windowUpdateFrame(0, CONNECTION_WINDOW - DEFAULT_WINDOW),
]);

function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const out = Buffer.alloc(FRAME_HEADER_SIZE + 4);
  writeFrameHeader(out, 0, 4, FRAME_WINDOW_UPDATE, 0, streamId);
  out.writeUInt32BE(increment, FRAME_HEADER_SIZE);
  return out;
}

function noop(): void {}

/**
 * One HTTP/2 connection (h2c with prior knowledge, or TLS with ALPN h2) behind the same seam as
 * the HTTP/1.1 `Connection`: up to `pipelining` concurrent streams (and no more than the
 * server's MAX_CONCURRENT_STREAMS), request header blocks encoded once per connection, frames
 * written into one buffer per connection and sent in one write per turn, responses read by a
 * frame reader that never keeps DATA payloads.
 */
export class H2Connection implements LoadConnection, FrameSink {
  private socket: Socket | TLSSocket | null = null;
  private readonly writer = new FrameWriter();
  private readonly reader: FrameReader;
  private decoder = new HpackDecoder(4096, H2_LIMITS.headerList);
  private readonly cap: number;
  // Per stream slot (a stream's slot is (id >> 1) % cap; ids skip a slot still in use).
  private readonly slotId: Int32Array;
  private readonly intended: Float64Array;
  private readonly sentAt: Float64Array;
  private readonly measured: Uint8Array;
  private readonly status: Int16Array;
  private readonly headerBlocks: Uint8Array;
  private readonly recvUnacked: Int32Array;
  private readonly sendWindow: Float64Array;
  /** Request body: which request's body, and how much of it is sent (-1: none pending). */
  private readonly bodyOf: Int32Array;
  private readonly bodySent: Int32Array;
  private pendingBodies = 0;
  private size = 0;
  private nextStreamId = 1;
  private nextRequest: number;
  private sentOnConnection = 0;
  private firstBlocks: Buffer[] = [];
  private repeatBlocks: Buffer[] = [];
  // Connection state.
  private tcpConnected = false;
  private ready = false;
  private connectedBefore = false;
  private stopped = false;
  private goingAway = false;
  private reopen = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private connectStartedAt = 0;
  private arrival = 0;
  private lastErrorKind = -1;
  private lastError: NodeJS.ErrnoException | null = null;
  private tlsSession: Buffer | undefined = undefined;
  private peerMaxStreams = 0;
  /** Since when the server has allowed no streams (SETTINGS_MAX_CONCURRENT_STREAMS 0). */
  private noStreamsSince = 0;
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrameSize = 16_384;
  private peerTableSize = 4096;
  private connSendWindow = DEFAULT_WINDOW;
  private connRecvUnacked = 0;
  private controlFrames = 0;
  // A header block split over CONTINUATION frames.
  private block: Buffer | null = null;
  private blockLength = 0;
  private blockStream = 0;
  private blockEndStream = false;
  private blockFrames = 0;

  constructor(
    private readonly owner: ConnectionOwner,
    readonly index: number,
    private readonly plan: H2RequestPlan,
  ) {
    const cap = owner.pipelining;
    this.cap = cap;
    this.slotId = new Int32Array(cap);
    this.intended = new Float64Array(cap);
    this.sentAt = new Float64Array(cap);
    this.measured = new Uint8Array(cap);
    this.status = new Int16Array(cap);
    this.headerBlocks = new Uint8Array(cap);
    this.recvUnacked = new Int32Array(cap);
    this.sendWindow = new Float64Array(cap);
    this.bodyOf = new Int32Array(cap).fill(-1);
    this.bodySent = new Int32Array(cap);
    this.nextRequest = index % plan.fields.length;
    this.reader = new FrameReader(this);
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
    this.tcpConnected = false;
    this.ready = false;
    this.goingAway = false;
    this.lastErrorKind = -1;
    this.lastError = null;
    this.reader.reset();
    this.decoder = new HpackDecoder(4096, H2_LIMITS.headerList);
    this.nextStreamId = 1;
    this.sentOnConnection = 0;
    this.peerMaxStreams = this.cap;
    this.peerInitialWindow = DEFAULT_WINDOW;
    this.peerMaxFrameSize = 16_384;
    this.peerTableSize = 4096;
    this.connSendWindow = DEFAULT_WINDOW;
    this.connRecvUnacked = 0;
    this.controlFrames = 0;
    this.blockStream = 0;
    this.blockLength = 0;
    this.connectStartedAt = performance.now();
    const tls = this.owner.tls;
    if (tls === null) {
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
        host: this.owner.host,
        port: this.owner.port,
        ...(this.owner.socketPath === null ? {} : { path: this.owner.socketPath }),
        servername: tls.servername,
        rejectUnauthorized: tls.rejectUnauthorized,
        ca: tls.ca,
        session: this.tlsSession,
        // http/1.1 offered too, so that a server without h2 says so (HP_LOAD_H2_ALPN) instead of
        // failing the handshake with an alert.
        ALPNProtocols: ['h2', 'http/1.1'],
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

  // ---- sending ----

  /** Opens streams while the run allows and the server's limit has room; one write. */
  fill(now: number = performance.now()): void {
    const limit = Math.min(this.peerMaxStreams, this.cap);
    if (this.ready && !this.stopped && !this.goingAway && this.socket !== null) {
      const owner = this.owner;
      const count = this.plan.fields.length;
      while (this.size < limit) {
        if (this.nextStreamId > LAST_STREAM_ID - 2 * this.cap) {
          // Out of stream ids: finish what is in flight, then a new connection.
          this.goingAway = true;
          break;
        }
        const intended = owner.take(now);
        if (intended < 0) break;
        let id = this.nextStreamId;
        let slot = (id >>> 1) % this.cap;
        while (this.slotId[slot] !== 0) {
          id += 2;
          slot = slot + 1 === this.cap ? 0 : slot + 1;
        }
        this.nextStreamId = id + 2;
        const request = this.nextRequest;
        this.nextRequest = request + 1 === count ? 0 : request + 1;
        const block = this.sentOnConnection < count ? this.firstBlocks[request] : this.repeatBlocks[request];
        this.sentOnConnection++;
        const body = this.plan.bodies[request] ?? null;
        this.slotId[slot] = id;
        this.intended[slot] = intended;
        this.sentAt[slot] = now;
        this.measured[slot] = owner.takenMeasured ? 1 : 0;
        this.status[slot] = 0;
        this.headerBlocks[slot] = 0;
        this.recvUnacked[slot] = 0;
        this.sendWindow[slot] = this.peerInitialWindow;
        this.size++;
        this.writer.headers(id, block as Buffer, body === null, this.peerMaxFrameSize);
        if (body !== null) {
          this.bodyOf[slot] = request;
          this.bodySent[slot] = 0;
          this.pendingBodies++;
          this.sendBody(slot);
        }
      }
    }
    if (this.owner.paced) {
      // requests at their intended times: over TLS still one record for a read's responses
      if (this.owner.tls === null) this.writer.flush();
      else this.writer.flushSoon();
    } else if (this.size - this.writer.requests <= limit * HOLD_WHILE_IN_FLIGHT) {
      this.writer.flushSoon(); // one write for all a loop turn's reads freed (flushSoon)
    } else {
      this.writer.hold(); // most streams still in flight: their responses free more requests
    }
  }

  /** Sends as much of a stream's body as both windows allow. */
  private sendBody(slot: number): void {
    const body = this.plan.bodies[this.bodyOf[slot] as number] as Buffer;
    const id = this.slotId[slot] as number;
    let sent = this.bodySent[slot] as number;
    while (sent < body.length) {
      const window = Math.min(this.connSendWindow, this.sendWindow[slot] as number);
      const take = Math.min(body.length - sent, window, this.peerMaxFrameSize);
      if (take <= 0) break;
      this.writer.data(id, body, sent, take, sent + take === body.length);
      sent += take;
      this.connSendWindow -= take;
      this.sendWindow[slot] = (this.sendWindow[slot] as number) - take;
    }
    this.bodySent[slot] = sent;
    if (sent === body.length) {
      this.bodyOf[slot] = -1;
      this.pendingBodies--;
    }
  }

  // ---- the engine's timers ----

  connectingSince(): number {
    return this.socket !== null && !this.ready && !this.stopped ? this.connectStartedAt : -1;
  }

  connectTimedOut(): void {
    const handshake = this.tcpConnected;
    this.drop();
    this.owner.connectFailed(this, { error: null, handshake });
  }

  oldestSentAt(): number {
    // A server that allows no streams holds the run like a request that gets no answer.
    if (this.size === 0) return this.ready && this.peerMaxStreams === 0 ? this.noStreamsSince : -1;
    let oldest = -1;
    for (let slot = 0; slot < this.cap; slot++) {
      if (this.slotId[slot] === 0) continue;
      const sent = this.sentAt[slot] as number;
      if (oldest < 0 || sent < oldest) oldest = sent;
    }
    return oldest;
  }

  /** Cancels (RST_STREAM CANCEL) the streams older than the timeout; the connection stays. */
  timeOut(timeoutMs: number): void {
    const now = performance.now();
    if (this.size === 0 && this.ready && this.peerMaxStreams === 0) {
      // SETTINGS_MAX_CONCURRENT_STREAMS 0 for a whole timeout: one request fails, and a new
      // connection tries again (so a run with an amount still ends).
      const intended = this.owner.take(now);
      if (intended >= 0)
        this.owner.error(
          ERROR_REFUSED,
          this.owner.takenMeasured,
          `HP_LOAD_H2_REFUSED: the server allowed no streams (SETTINGS_MAX_CONCURRENT_STREAMS 0) for ${timeoutMs / 1000} s`,
        );
      this.restart();
      return;
    }
    for (let slot = 0; slot < this.cap; slot++) {
      const id = this.slotId[slot] as number;
      if (id === 0 || now - (this.sentAt[slot] as number) <= timeoutMs) continue;
      const waitingOnWindow = this.bodyOf[slot] !== -1;
      this.writer.u32(FRAME_RST_STREAM, id, H2_CANCEL);
      const measured = this.measured[slot] === 1;
      this.free(slot);
      this.owner.error(
        ERROR_TIMEOUT,
        measured,
        waitingOnWindow
          ? `HP_LOAD_H2_WINDOW: the request body was still waiting on the server's flow-control window after ${timeoutMs / 1000} s`
          : `no response within ${timeoutMs / 1000} s`,
      );
    }
    if (this.afterStreamsEnd()) this.restart();
    else this.fill(now);
  }

  /** Outside a read: a connection that has ended its streams after GOAWAY starts over now. */
  private restart(): void {
    this.reopen = false;
    this.writer.flush();
    this.drop();
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.reader.halted = true;
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.drop();
  }

  retryLater(delayMs: number): void {
    if (this.stopped || this.reconnectTimer !== null) return;
    this.reconnectTimer = setTimeout(this.open, delayMs);
  }

  // ---- frames from the server ----

  onFrameTooLarge(type: number, length: number): void {
    this.connectionError(
      'HP_LOAD_H2_PROTOCOL',
      H2_FRAME_SIZE_ERROR,
      `a frame of type ${type} with ${length} bytes, over the ${this.reader.maxFrameSize}-byte limit`,
    );
  }

  onDataFrame(streamId: number, flags: number, length: number): void {
    if (this.badFrame(FRAME_DATA, flags, streamId, length)) return;
    if (length > 0) {
      this.connRecvUnacked += length;
      if (this.connRecvUnacked >= CONNECTION_WINDOW / 2) {
        this.writer.u32(FRAME_WINDOW_UPDATE, 0, this.connRecvUnacked);
        this.connRecvUnacked = 0;
      }
    }
    const slot = (streamId >>> 1) % this.cap;
    if (this.slotId[slot] !== streamId) return; // a stream already ended here (cancelled): ignored
    if (this.status[slot] === 0) {
      this.connectionError(
        'HP_LOAD_H2_PROTOCOL',
        H2_PROTOCOL_ERROR,
        `DATA before HEADERS on stream ${streamId}`,
      );
      return;
    }
    if (flags & FLAG_END_STREAM) {
      // A gRPC response ends with trailers; one that ends in DATA has no grpc-status.
      if (this.plan.grpc && this.status[slot] === 200) this.grpcEnd(slot, -1);
      else this.complete(slot);
      return;
    }
    const unacked = (this.recvUnacked[slot] as number) + length;
    if (unacked >= STREAM_WINDOW / 2) {
      this.writer.u32(FRAME_WINDOW_UPDATE, streamId, unacked);
      this.recvUnacked[slot] = 0;
    } else this.recvUnacked[slot] = unacked;
  }

  onFrame(type: number, flags: number, streamId: number, payload: Buffer, start: number, end: number): void {
    if (this.badFrame(type, flags, streamId, end - start)) return;
    switch (type) {
      case FRAME_HEADERS: {
        this.onHeaders(flags, streamId, payload, start, end);
        return;
      }
      case FRAME_CONTINUATION: {
        this.onContinuation(flags, streamId, payload, start, end);
        return;
      }
      case FRAME_SETTINGS: {
        this.onSettings(flags, payload, start, end);
        return;
      }
      case FRAME_PING:
        if (flags & FLAG_ACK) return;
        if (this.countControl()) this.writer.frame(FRAME_PING, FLAG_ACK, 0, payload, start, end);
        return;
      case FRAME_RST_STREAM: {
        this.onRstStream(streamId, payload, start);
        return;
      }
      case FRAME_GOAWAY: {
        this.onGoaway(payload, start);
        return;
      }
      case FRAME_WINDOW_UPDATE: {
        this.onWindowUpdate(streamId, payload, start);
        return;
      }
      default:
        // PRIORITY and unknown frame types are ignored (RFC 9113 section 4.1).
        return;
    }
  }

  /**
   * A frame that breaks the rules for its type (frameProblem), or any frame but CONTINUATION
   * inside a header block: the connection ends (true).
   */
  private badFrame(type: number, flags: number, streamId: number, length: number): boolean {
    let problem: string | null;
    if (this.blockStream !== 0 && type !== FRAME_CONTINUATION)
      problem = `another frame inside the header block of stream ${this.blockStream} (CONTINUATION expected)`;
    else problem = frameProblem(type, flags, streamId, length);
    if (problem === null) return false;
    const code = sizeProblem(problem) ? H2_FRAME_SIZE_ERROR : H2_PROTOCOL_ERROR;
    this.connectionError('HP_LOAD_H2_PROTOCOL', code, problem);
    return true;
  }

  /** Counts a PING or SETTINGS; false (and the connection dropped) past the flood limit. */
  private countControl(): boolean {
    this.controlFrames++;
    if (this.controlFrames <= H2_LIMITS.controlFrames) return true;
    this.connectionError(
      'HP_LOAD_H2_FLOOD',
      H2_ENHANCE_YOUR_CALM,
      `more than ${H2_LIMITS.controlFrames} PING/SETTINGS frames between two responses`,
    );
    return false;
  }

  private onHeaders(flags: number, streamId: number, payload: Buffer, start: number, end: number): void {
    if ((streamId & 1) === 0 || streamId >= this.nextStreamId) {
      this.connectionError(
        'HP_LOAD_H2_PROTOCOL',
        H2_PROTOCOL_ERROR,
        `HEADERS on stream ${streamId}, not one this client opened`,
      );
      return;
    }
    let from = start;
    let to = end;
    if (flags & FLAG_PADDED) {
      const pad = payload[from++] ?? 0;
      to -= pad;
    }
    if (flags & FLAG_PRIORITY) from += 5;
    if (from > to) {
      this.connectionError('HP_LOAD_H2_PROTOCOL', H2_PROTOCOL_ERROR, 'HEADERS padding longer than the frame');
      return;
    }
    const endStream = (flags & FLAG_END_STREAM) !== 0;
    if (flags & FLAG_END_HEADERS) {
      this.headerBlock(streamId, payload, from, to, endStream);
      return;
    }
    this.blockStream = streamId;
    this.blockEndStream = endStream;
    this.blockLength = 0;
    this.blockFrames = 0;
    this.appendBlock(payload, from, to);
  }

  private onContinuation(flags: number, streamId: number, payload: Buffer, start: number, end: number): void {
    if (this.blockStream === 0 || streamId !== this.blockStream) {
      this.connectionError(
        'HP_LOAD_H2_PROTOCOL',
        H2_PROTOCOL_ERROR,
        `CONTINUATION on stream ${streamId} outside a header block`,
      );
      return;
    }
    this.blockFrames++;
    if (this.blockFrames > H2_LIMITS.continuations) {
      this.connectionError(
        'HP_LOAD_H2_HEADERS_TOO_LARGE',
        H2_ENHANCE_YOUR_CALM,
        `a header block in more than ${H2_LIMITS.continuations} CONTINUATION frames`,
      );
      return;
    }
    if (!this.appendBlock(payload, start, end)) return;
    if (flags & FLAG_END_HEADERS) {
      const id = this.blockStream;
      this.blockStream = 0;
      this.headerBlock(id, this.block as Buffer, 0, this.blockLength, this.blockEndStream);
    }
  }

  private appendBlock(payload: Buffer, start: number, end: number): boolean {
    const length = end - start;
    if (this.blockLength + length > H2_LIMITS.headerList) {
      this.connectionError(
        'HP_LOAD_H2_HEADERS_TOO_LARGE',
        H2_ENHANCE_YOUR_CALM,
        `a header block over ${H2_LIMITS.headerList} bytes`,
      );
      return false;
    }
    if (this.block === null || this.block.length < this.blockLength + length) {
      const grown = Buffer.allocUnsafe(
        Math.min(H2_LIMITS.headerList, Math.max(4096, (this.blockLength + length) * 2)),
      );
      if (this.block !== null) this.block.copy(grown, 0, 0, this.blockLength);
      this.block = grown;
    }
    payload.copy(this.block, this.blockLength, start, end);
    this.blockLength += length;
    return true;
  }

  /** A complete header block: decoded always (the HPACK table is the connection's). */
  private headerBlock(streamId: number, block: Buffer, start: number, end: number, endStream: boolean): void {
    const decoder = this.decoder;
    if (!decoder.decode(block, start, end)) {
      if (decoder.error === HPACK_ERROR_TOO_LARGE) {
        this.connectionError(
          'HP_LOAD_H2_HEADERS_TOO_LARGE',
          H2_ENHANCE_YOUR_CALM,
          `a response header list over ${H2_LIMITS.headerList} bytes`,
        );
        return;
      }
      this.connectionError('HP_LOAD_H2_PROTOCOL', H2_COMPRESSION_ERROR, 'a header block HPACK cannot decode');
      return;
    }
    const slot = (streamId >>> 1) % this.cap;
    if (this.slotId[slot] !== streamId) return;
    const blocks = (this.headerBlocks[slot] as number) + 1;
    this.headerBlocks[slot] = blocks;
    if (blocks > H2_LIMITS.headerBlocks) {
      this.streamFailed(
        slot,
        ERROR_PARSE,
        `HP_LOAD_H2_FLOOD: more than ${H2_LIMITS.headerBlocks} header blocks on one stream`,
        H2_ENHANCE_YOUR_CALM,
      );
      return;
    }
    if (this.status[slot] === 0) {
      const status = decoder.status;
      if (status === 0) {
        this.streamFailed(
          slot,
          ERROR_PARSE,
          'HP_LOAD_H2_PROTOCOL: a response without :status',
          H2_PROTOCOL_ERROR,
        );
        return;
      }
      if (status < 200) {
        // An informational head (100 Continue, 103 Early Hints): the final one follows.
        if (endStream) {
          this.streamFailed(
            slot,
            ERROR_PARSE,
            'HP_LOAD_H2_PROTOCOL: a stream ended on an informational head',
            H2_PROTOCOL_ERROR,
          );
          return;
        }
        return;
      }
      this.status[slot] = status;
    }
    if (!endStream) return;
    if (this.plan.grpc && this.status[slot] === 200) this.grpcEnd(slot, decoder.grpcStatus);
    else this.complete(slot);
  }

  /** A gRPC call's end: grpc-status 0 is a response, anything else (or none) a `grpc` error. */
  private grpcEnd(slot: number, code: number): void {
    if (code === 0) {
      this.complete(slot);
      return;
    }
    const measured = this.measured[slot] === 1;
    this.free(slot);
    this.controlFrames = 0;
    this.owner.error(
      ERROR_GRPC,
      measured,
      code < 0
        ? 'HP_LOAD_GRPC_STATUS: a gRPC response without grpc-status'
        : `HP_LOAD_GRPC_STATUS: grpc-status ${code} (${GRPC_CODES[code] ?? 'not a standard code'})`,
    );
    this.afterStreamsEnd();
  }

  private onSettings(flags: number, payload: Buffer, start: number, end: number): void {
    if (flags & FLAG_ACK) return;
    if (!this.countControl()) return;
    for (let at = start; at < end; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (id === SETTINGS_HEADER_TABLE_SIZE) {
        // Blocks already built index into a table of the old size: a server that shrinks it
        // mid-connection gets its streams finished, then a new connection built for the new size.
        if (this.ready && value < Math.min(this.peerTableSize, 4096)) this.goingAway = true;
        this.peerTableSize = value;
      } else if (id === SETTINGS_MAX_CONCURRENT_STREAMS) {
        if (value === 0 && this.peerMaxStreams !== 0) this.noStreamsSince = performance.now();
        this.peerMaxStreams = value;
      } else if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) {
          this.connectionError(
            'HP_LOAD_H2_PROTOCOL',
            H2_FLOW_CONTROL_ERROR,
            `SETTINGS_INITIAL_WINDOW_SIZE ${value}`,
          );
          return;
        }
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (let slot = 0; slot < this.cap; slot++)
          if (this.slotId[slot] !== 0) this.sendWindow[slot] = (this.sendWindow[slot] as number) + delta;
      } else if (id === SETTINGS_MAX_FRAME_SIZE) {
        if (value < 16_384 || value > 16_777_215) {
          this.connectionError('HP_LOAD_H2_PROTOCOL', H2_PROTOCOL_ERROR, `SETTINGS_MAX_FRAME_SIZE ${value}`);
          return;
        }
        this.peerMaxFrameSize = value;
      } else if (id === SETTINGS_ENABLE_PUSH && value > 1) {
        this.connectionError('HP_LOAD_H2_PROTOCOL', H2_PROTOCOL_ERROR, `SETTINGS_ENABLE_PUSH ${value}`);
        return;
      }
    }
    this.writer.frame(FRAME_SETTINGS, FLAG_ACK, 0, payload, start, start);
    if (this.goingAway) this.afterStreamsEnd();
    if (!this.ready) this.becomeReady();
    else if (this.pendingBodies > 0) this.resumeBodies();
  }

  private onRstStream(streamId: number, payload: Buffer, start: number): void {
    const slot = (streamId >>> 1) % this.cap;
    if (this.slotId[slot] !== streamId) return;
    const code = payload.readUInt32BE(start);
    const measured = this.measured[slot] === 1;
    this.free(slot);
    if (code === H2_REFUSED_STREAM)
      this.owner.error(
        ERROR_REFUSED,
        measured,
        'HP_LOAD_H2_REFUSED: the server refused a stream (RST_STREAM REFUSED_STREAM)',
      );
    else
      this.owner.error(
        ERROR_STREAM,
        measured,
        `HP_LOAD_H2_STREAM_RESET: the server reset a stream (RST_STREAM ${h2ErrorName(code)})`,
      );
  }

  private onGoaway(payload: Buffer, start: number): void {
    const last = payload.readUInt32BE(start) & 0x7fffffff;
    this.goingAway = true;
    // Streams above the last one the server processes were never processed: refused.
    for (let slot = 0; slot < this.cap; slot++) {
      const id = this.slotId[slot] as number;
      if (id === 0 || id <= last) continue;
      const measured = this.measured[slot] === 1;
      this.free(slot);
      this.owner.error(
        ERROR_REFUSED,
        measured,
        'HP_LOAD_H2_REFUSED: the server refused a stream (GOAWAY below its id)',
      );
    }
    this.afterStreamsEnd();
  }

  private onWindowUpdate(streamId: number, payload: Buffer, start: number): void {
    const increment = payload.readUInt32BE(start) & 0x7fffffff;
    if (increment === 0) {
      this.connectionError('HP_LOAD_H2_PROTOCOL', H2_PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0');
      return;
    }
    if (streamId === 0) {
      this.connSendWindow += increment;
      if (this.connSendWindow > MAX_WINDOW) {
        this.connectionError(
          'HP_LOAD_H2_PROTOCOL',
          H2_FLOW_CONTROL_ERROR,
          'the connection window past 2^31-1',
        );
        return;
      }
    } else {
      const slot = (streamId >>> 1) % this.cap;
      if (this.slotId[slot] !== streamId) return;
      this.sendWindow[slot] = (this.sendWindow[slot] as number) + increment;
    }
    if (this.pendingBodies > 0) this.resumeBodies();
  }

  private resumeBodies(): void {
    for (let slot = 0; slot < this.cap && this.pendingBodies > 0; slot++)
      if (this.slotId[slot] !== 0 && this.bodyOf[slot] !== -1) this.sendBody(slot);
  }

  private becomeReady(): void {
    this.ready = true;
    // Request header blocks for this connection, in the order its requests go out: the first
    // round indexes the fields, later ones refer to them. A server that asks for a smaller
    // table than the default gets a size update first.
    const tableSize = Math.min(this.peerTableSize, 4096);
    const encoder = new HpackEncoder(tableSize);
    const count = this.plan.fields.length;
    this.firstBlocks = new Array<Buffer>(count);
    this.repeatBlocks = new Array<Buffer>(count);
    for (let i = 0; i < count; i++) {
      const request = (this.nextRequest + i) % count;
      let block = encoder.encode(this.plan.fields[request] as HeaderField[]);
      if (i === 0 && tableSize < 4096) block = Buffer.concat([sizeUpdate(tableSize), block]);
      this.firstBlocks[request] = block;
    }
    for (let i = 0; i < count; i++)
      this.repeatBlocks[i] = encoder.encode(this.plan.fields[i] as HeaderField[]);
    const socket = this.socket;
    const first = !this.connectedBefore;
    this.connectedBefore = true;
    this.owner.connected(this.owner.tls !== null && (socket as TLSSocket).isSessionReused(), first);
    this.fill();
  }

  // ---- stream and connection ends ----

  private free(slot: number): void {
    this.slotId[slot] = 0;
    if (this.bodyOf[slot] !== -1) {
      this.bodyOf[slot] = -1;
      this.pendingBodies--;
    }
    this.size--;
  }

  private complete(slot: number): void {
    const measured = this.measured[slot] === 1;
    const latency = this.arrival - (this.intended[slot] as number);
    const status = this.status[slot] as number;
    this.free(slot);
    this.controlFrames = 0;
    this.owner.response(status, latency, measured);
    this.afterStreamsEnd();
  }

  private streamFailed(slot: number, kind: number, message: string, code: number): void {
    const id = this.slotId[slot] as number;
    const measured = this.measured[slot] === 1;
    this.writer.u32(FRAME_RST_STREAM, id, code);
    this.free(slot);
    this.owner.error(kind, measured, message);
  }

  /** After GOAWAY (or out of ids): once no stream is left, a new connection. */
  private afterStreamsEnd(): boolean {
    if (!this.goingAway || this.size > 0 || this.stopped || this.socket === null) return false;
    this.reader.halted = true;
    this.reopen = true;
    return true;
  }

  private connectionError(code: LoadErrorCode, h2Code: number, message: string): void {
    if (this.socket === null) return;
    this.reader.halted = true;
    this.writer.goaway(h2Code);
    this.writer.flush();
    this.failInFlight(ERROR_PARSE, `${code}: ${message}`);
    this.drop();
    this.reopen = true;
  }

  private failInFlight(kind: number, message: string): void {
    for (let slot = 0; slot < this.cap && this.size > 0; slot++) {
      if (this.slotId[slot] === 0) continue;
      const measured = this.measured[slot] === 1;
      this.free(slot);
      this.owner.error(kind, measured, message);
    }
  }

  // ---- socket events ----

  private onConnect(): void {
    const socket = this.socket;
    if (socket === null) return;
    if (this.owner.tls !== null) {
      const alpn = (socket as TLSSocket).alpnProtocol;
      if (alpn !== 'h2') {
        this.owner.abortWith(
          new HotpathLoadError(
            'HP_LOAD_H2_ALPN',
            `the server at ${this.owner.host}:${this.owner.port} did not agree to HTTP/2 in the TLS handshake (ALPN ${alpn === false || alpn === null || alpn === undefined ? 'none' : JSON.stringify(alpn)}): expected "h2"`,
          ),
        );
        return;
      }
    }
    this.tcpConnected = true;
    this.writer.attach(socket, this.owner.directWrites && this.owner.tls === null);
    this.writer.raw(OUR_SETTINGS);
    this.writer.flush();
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
    this.reader.execute(buffer, length);
    if (this.reopen) this.restart();
    else this.fill(arrival);
    return true;
  }

  private onError(error: NodeJS.ErrnoException): void {
    this.lastError = error;
    const code = error.code ?? '';
    if (!this.ready) this.lastErrorKind = -1;
    else if (code === 'ECONNRESET' || code === 'EPIPE') this.lastErrorKind = ERROR_RESET;
    else this.lastErrorKind = ERROR_OTHER;
  }

  private onClose(): void {
    this.socket = null;
    this.writer.detach();
    if (this.stopped) return;
    if (!this.ready) {
      this.owner.connectFailed(this, { error: this.lastError, handshake: this.tcpConnected });
      return;
    }
    this.ready = false;
    if (this.size > 0) {
      if (this.lastErrorKind === -1)
        this.failInFlight(ERROR_CLOSED, 'the server closed the connection before the response was complete');
      else this.failInFlight(this.lastErrorKind, this.lastError?.message ?? 'socket error');
    }
    this.reopen = false;
    this.open();
  }

  private drop(): void {
    const socket = this.socket;
    this.socket = null;
    this.writer.detach();
    this.ready = false;
    if (socket === null) return;
    socket.removeAllListeners();
    socket.on('error', noop);
    socket.destroy();
  }
}

function sizeUpdate(size: number): Buffer {
  const out: number[] = [];
  if (size < 31) out.push(0x20 | size);
  else {
    out.push(0x3f);
    let rest = size - 31;
    while (rest >= 128) {
      out.push((rest % 128) + 128);
      rest = Math.floor(rest / 128);
    }
    out.push(rest);
  }
  return Buffer.from(out);
}
