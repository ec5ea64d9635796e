import type { Socket } from 'node:net';
import { processBinary } from './binary-protocol.js';
import type { BudgetedConnection, BufferBudget } from './buffer-budget.js';
import type { Cache } from './cache.js';
import { internalError } from './checked-index.js';
import { OutputBuffer } from './output-buffer.js';
import type { ConnectionSettings, PausedGet, Session } from './session.js';
import { type StatLines, statsLines } from './stats-report.js';
import { MAX_TOKENS, processText } from './text-protocol.js';

export type { ConnectionSettings } from './session.js';

const OUTPUT_BATCH_BYTES = 256 * 1024;
/** Size of the one input buffer every connection reads into (see readIntoSharedBuffer). */
const SHARED_INPUT_BYTES = 64 * 1024;
const PROTOCOL_UNKNOWN = 0;
const PROTOCOL_TEXT = 1;
const PROTOCOL_BINARY = 2;

/**
 * Connections with replies waiting for the end of this event-loop turn (see Connection.defer),
 * and whether a flush of them is scheduled.
 */
const deferred: Connection[] = [];
let flushScheduled = false;

/** Writes the replies of every connection that read this turn (a setImmediate callback). */
function flushDeferred(): void {
  flushScheduled = false;
  // a connection deferred while this runs is written by this loop too (the iterator reads the
  // length at every step)
  for (const conn of deferred) conn.flushTurn();
  deferred.length = 0;
}

/**
 * One client connection: input framing (chunks are joined only when a command can be
 * complete), protocol detection (binary when the first byte is 0x80), replies written in one
 * batch per read at the end of the event-loop turn, and backpressure (reading pauses while
 * output is over the cap). The protocol handlers see it only through the narrow `Session`
 * interface.
 */
export class Connection implements Session, BudgetedConnection {
  readonly cache: Cache;
  readonly settings: ConnectionSettings;
  /** What the shared buffer budget charges this connection (kept by the budget). */
  charged = 0;
  /** The one memory budget for the buffers of all connections of the server. */
  readonly budget: BufferBudget;
  readonly out = new OutputBuffer();
  readonly tokens = new Int32Array(MAX_TOKENS * 2);
  authenticated: boolean;
  closing = false;
  noreply = false;
  readonly pausedGet: PausedGet = { active: false, withCas: false, touch: false, exptime: 0 };
  /** Bytes to discard before parsing resumes (the data of a rejected value). */
  private swallow = 0;
  /** Bytes still missing before the buffered command can complete; 0 = waiting for a newline. */
  private need = 0;
  private protocol = PROTOCOL_UNKNOWN;
  private readonly socket: Socket;
  private chunks: Buffer[] = [];
  private chunkBytes = 0;
  private blocked = false;
  private clock = 0;
  /** Reads land in the shared input buffer: bytes kept past a read must be copied out of it. */
  private readonly transient: boolean;
  /** Writes go straight to the socket's handle when it is idle (see writeDirect); null: never. */
  private readonly direct: DirectWriteBinding | null;
  /** Bytes of a direct write the kernel did not take at once, still queued in libuv. */
  private directPending = 0;
  /** A write request object for direct writes, reused while every write completes at once. */
  private writeReq: WriteReq | undefined;
  /** This read's replies wait for the end of the event-loop turn (see defer). */
  private waiting = false;
  /** Commands this connection may still run in this turn (-R; Infinity without a limit). */
  private requestsLeft = Number.POSITIVE_INFINITY;
  /** A turn of its own is scheduled for input left when -R's count ran out. */
  private resumeScheduled = false;

  /**
   * Starts reading from the socket (which may have been created paused). With `sharedInput`,
   * reads go into one buffer all connections share when this Node allows it (see
   * readIntoSharedBuffer); otherwise each read arrives as a new Buffer through 'data'. What it
   * buffers is charged to `budget`, shared by every connection of the server, until it closes.
   */
  constructor(
    socket: Socket,
    cache: Cache,
    settings: ConnectionSettings,
    budget: BufferBudget,
    sharedInput = false,
    directWrite = false,
  ) {
    this.socket = socket;
    this.cache = cache;
    this.settings = settings;
    this.budget = budget;
    this.authenticated = settings.users === undefined;
    budget.add(this);
    socket.once('close', () => budget.remove(this));
    socket.setNoDelay(true);
    socket.on('drain', () => this.onDrain());
    this.transient =
      sharedInput && readIntoSharedBuffer(socket, (nread, input) => this.onData(input.subarray(0, nread)));
    if (!this.transient) socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.direct = directWrite ? directWriteBinding() : null;
    socket.resume();
  }

  now(): number {
    return this.clock;
  }

  setNoreply(noreply: boolean): void {
    this.noreply = noreply;
  }

  reply(text: string): void {
    if (!this.noreply) this.out.ascii(text);
  }

  replyBytes(bytes: Buffer): void {
    if (!this.noreply) this.out.bytes(bytes);
  }

  outputFull(): boolean {
    return this.out.pending >= OUTPUT_BATCH_BYTES;
  }

  mayRun(): boolean {
    if (this.closing || this.out.pending >= OUTPUT_BATCH_BYTES || this.requestsLeft <= 0) return false;
    this.requestsLeft--;
    return true;
  }

  waitFor(bytes: number): void {
    this.need = bytes;
  }

  closeAfterWrite(): void {
    this.closing = true;
  }

  closeSilently(reason: string): void {
    this.out.take(); // drop what this read queued: memcached answers nothing
    this.chunks = [];
    this.chunkBytes = 0;
    this.closing = true;
    this.socket.destroy();
    if (this.settings.verbosity > 0) this.settings.log(`closing connection: ${reason}`);
  }

  login(user: string, password: Buffer): boolean {
    const users = this.settings.users;
    if (users !== undefined && !users.check(user, password)) return false;
    this.authenticated = true;
    return true;
  }

  statsLines(group: string): StatLines | string | undefined {
    return statsLines(this, group, group === '' ? 1 : 2);
  }

  private onData(chunk: Buffer): void {
    this.cache.stats.bytesRead += chunk.length;
    if (this.closing) return;
    if (this.swallow > 0 && this.chunkBytes === 0) {
      if (chunk.length <= this.swallow) {
        this.swallow -= chunk.length;
        return;
      }
      chunk = chunk.subarray(this.swallow);
      this.swallow = 0;
    }
    if (this.chunkBytes === 0 && this.need === 0 && !this.blocked) {
      // nothing buffered: parse the chunk where it is (the common case, one request per read)
      this.process(chunk, !this.transient);
      return;
    }
    this.chunks.push(this.transient ? Buffer.from(chunk) : chunk);
    this.chunkBytes += chunk.length;
    this.recharge();
    if (this.closing) return;
    if (this.blocked) {
      this.checkInputCap();
      return;
    }
    if (this.need > 0) {
      this.need -= chunk.length;
      if (this.need > 0) {
        this.checkInputCap();
        return;
      }
    } else if (this.protocol === PROTOCOL_TEXT && chunk.indexOf(10) === -1) {
      this.checkLine();
      return;
    }
    this.run();
  }

  private onDrain(): void {
    this.recharge();
    if (!this.blocked || this.closing || this.directPending > 0) return;
    this.blocked = false;
    this.socket.resume();
    if (this.chunkBytes > 0) this.run();
  }

  private run(): void {
    const first = this.chunks[0];
    const buf =
      first !== undefined && this.chunks.length === 1 ? first : Buffer.concat(this.chunks, this.chunkBytes);
    this.chunks = [];
    this.chunkBytes = 0;
    this.process(buf, true);
  }

  /**
   * Runs the commands in buf (nothing else is buffered) and keeps what is left of it: a view
   * when buf is ours to keep, a copy when it is the shared input buffer. Replies are written at
   * the end of the turn, or at once when they fill a batch. Reading pauses as soon as the socket
   * holds more unsent output than the cap, checked after every write, so a client that never
   * reads its replies cannot grow the server's memory by more than one read's output.
   */
  private process(buf: Buffer, owned: boolean): void {
    if (this.protocol === PROTOCOL_UNKNOWN) {
      const forced = this.settings.protocol;
      this.protocol =
        forced === 'binary' || (forced === 'auto' && buf[0] === 0x80) ? PROTOCOL_BINARY : PROTOCOL_TEXT;
    }
    this.clock = Date.now();
    const limit = this.settings.maxReqsPerEvent;
    this.requestsLeft = limit === 0 ? Number.POSITIVE_INFINITY : limit;
    let pos = 0;
    let starved = false;
    for (;;) {
      this.need = 0;
      pos = this.protocol === PROTOCOL_BINARY ? processBinary(this, buf, pos) : processText(this, buf, pos);
      if (pos > buf.length) {
        // the handler rejected a value whose bytes run past this read: skip them as they come
        this.swallow = pos - buf.length;
        pos = buf.length;
      }
      starved = this.requestsLeft <= 0 && pos < buf.length;
      const full = this.outputFull();
      if (!full && !this.closing) {
        // everything this read held is done (or -R's count is): reply at the end of the turn
        this.defer();
        break;
      }
      this.flush();
      if (this.closing || this.overCap() || pos >= buf.length || starved) break;
    }
    if (this.closing) {
      if (!this.socket.destroyed) this.socket.end();
      return;
    }
    if (pos < buf.length) {
      const rest = owned ? buf.subarray(pos) : Buffer.from(buf.subarray(pos));
      this.chunks.push(rest);
      this.chunkBytes = rest.length;
      if (starved) this.resumeLater();
      else if (this.need === 0 && this.protocol === PROTOCOL_TEXT && !this.blocked) this.checkLine();
      else this.checkInputCap();
    }
    // what was buffered is consumed, or more is kept: tell the budget (on the common path,
    // nothing buffered before or after, there is nothing to tell)
    if (!this.closing && (this.chunkBytes !== 0 || this.charged !== 0)) this.recharge();
  }

  /** Runs the input left by -R's count in a later turn, after other connections had theirs. */
  private resumeLater(): void {
    this.checkInputCap();
    if (this.resumeScheduled || this.closing) return;
    this.resumeScheduled = true;
    setImmediate(() => {
      this.resumeScheduled = false;
      if (!this.blocked && !this.closing && this.chunkBytes > 0 && this.need === 0) this.run();
    });
  }

  /**
   * Leaves this read's replies for the end of the event-loop turn, after every connection that
   * is ready has been read, as Redis writes its replies before it next waits for events. A
   * client with many connections then gets its replies in one burst and wakes once for them,
   * instead of once per reply; each connection still gets one write per read.
   */
  private defer(): void {
    if (this.waiting || this.out.pending === 0) return;
    this.waiting = true;
    deferred.push(this);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flushDeferred);
    }
  }

  /** Writes the replies defer left, then applies the output cap. */
  flushTurn(): void {
    if (!this.waiting) return;
    if (this.socket.destroyed) {
      this.waiting = false;
      this.out.take();
      return;
    }
    this.flush();
    this.overCap();
  }

  /**
   * Reports what this connection holds to the shared budget (which may close it, or others),
   * then pauses reading while the socket holds more unsent output than the connection's cap;
   * returns whether reading is paused (or the connection closed).
   */
  private overCap(): boolean {
    const unsent = this.socket.writableLength + this.directPending;
    if (unsent + this.chunkBytes !== this.charged) {
      this.budget.charge(this, unsent + this.chunkBytes);
      if (this.closing) return true;
    }
    if (this.blocked || (unsent <= this.settings.maxOutputBytes && !this.waitsUnderPressure())) {
      return this.blocked;
    }
    this.blocked = true;
    this.socket.pause();
    return true;
  }

  /**
   * Whether this connection should stop reading until its replies are sent although it is under
   * its own output cap: half the shared budget is spent, and it has replies the peer is not
   * taking (a write still pending, so a drain or a completion will resume it).
   */
  private waitsUnderPressure(): boolean {
    return (this.directPending > 0 || this.socket.writableNeedDrain) && this.budget.pressed();
  }

  /** Reports this connection's buffered input and unsent output to the shared budget. */
  private recharge(): void {
    const bytes = this.bufferedBytes();
    if (bytes !== this.charged) this.budget.charge(this, bytes);
  }

  bufferedBytes(): number {
    return this.chunkBytes + this.socket.writableLength + this.directPending;
  }

  /** The shared budget is spent and this connection holds the most: close it, dropping its buffers. */
  closeForMemory(): void {
    this.out.take();
    this.chunks = [];
    this.chunkBytes = 0;
    this.closing = true;
    this.socket.destroy();
    if (this.settings.verbosity > 0)
      this.settings.log('closing connection: connection buffer memory limit reached');
  }

  /** Writes everything queued as one batch. */
  private flush(): void {
    this.waiting = false;
    const parts = this.out.take();
    if (parts === undefined) return;
    let bytes = 0;
    if (Array.isArray(parts)) for (const part of parts) bytes += part.length;
    else bytes = parts.length;
    this.cache.stats.bytesWritten += bytes;
    if (
      this.direct !== null &&
      this.directPending === 0 &&
      this.socket.writableLength === 0 &&
      this.writeDirect(this.direct, parts, bytes)
    ) {
      if (this.directPending === 0) this.out.written();
      return;
    }
    if (!Array.isArray(parts)) {
      this.socket.write(parts);
    } else {
      this.socket.cork();
      for (const part of parts) this.socket.write(part);
      this.socket.uncork();
    }
    if (this.socket.writableLength === 0 && this.directPending === 0) this.out.written();
  }

  /**
   * Hands parts to the socket's handle as the stream would (one writeBuffer or writev, which
   * libuv tries to send at once), without the Writable machinery's per-write state, callback and
   * tick. Only used while the stream has nothing queued, so the order of bytes holds. When the
   * kernel does not take everything, libuv queues the rest; the stream's next writes queue
   * behind it in libuv, and directPending counts the bytes for backpressure until it completes.
   * Returns false (nothing written) when the socket has no handle; the stream path reports that.
   */
  private writeDirect(binding: DirectWriteBinding, parts: Uint8Array | Uint8Array[], bytes: number): boolean {
    const handle = (this.socket as unknown as { _handle?: DirectHandle | null })._handle;
    if (handle == null || this.socket.destroyed) return false;
    const req = this.writeReq ?? new binding.WriteWrap();
    const err = Array.isArray(parts) ? handle.writev(req, parts, true) : handle.writeBuffer(req, parts);
    if (err !== 0) {
      this.writeReq = req;
      this.closing = true;
      this.socket.destroy();
      return true;
    }
    if (binding.state[binding.kLastWriteWasAsync] === 0) {
      this.writeReq = req;
      return true;
    }
    // libuv holds the request and the buffers until the write completes
    this.writeReq = undefined;
    this.directPending = bytes;
    req.buffer = parts;
    req.oncomplete = (status: number) => this.onDirectWritten(status);
    return true;
  }

  private onDirectWritten(status: number): void {
    this.directPending = 0;
    if (status < 0) {
      this.closing = true;
      this.socket.destroy();
      return;
    }
    this.recharge();
    if (this.socket.writableLength === 0) this.out.written();
    // resume unless the stream still holds enough to emit 'drain' (which resumes it then)
    if (this.blocked && (this.socket.writableLength === 0 || !this.socket.writableNeedDrain)) this.onDrain();
  }

  /**
   * A text line is buffered without its newline: past 2 KB memcached closes the connection
   * without a reply, unless the line is a get/gets (long key lists), which may grow to the input
   * cap. Before the client has logged in, no line may pass 2 KB, a get's neither (memcached's
   * login reader knows no exception either).
   */
  private checkLine(): void {
    if (this.chunkBytes <= this.settings.maxLineBytes) return;
    const head = this.chunks[0];
    if (head === undefined) throw internalError(`${this.chunkBytes} bytes buffered in no chunk`);
    let i = 0;
    while (i < head.length && head[i] === 32 && i <= 100) i++;
    const isGet =
      this.authenticated &&
      i <= 100 &&
      head[i] === 103 &&
      head[i + 1] === 101 &&
      head[i + 2] === 116 &&
      (head[i + 3] === 32 || (head[i + 3] === 115 && head[i + 4] === 32));
    if (isGet) {
      this.checkInputCap();
      return;
    }
    this.closeSilently(`line without a newline over ${this.settings.maxLineBytes} bytes`);
  }

  private checkInputCap(): void {
    if (this.chunkBytes > this.settings.maxInputBytes) this.fail('SERVER_ERROR input buffer full\r\n');
  }

  /** Replies with an error and closes; the input buffered so far is dropped. */
  private fail(message: string): void {
    if (this.protocol !== PROTOCOL_BINARY) this.out.ascii(message);
    this.chunks = [];
    this.chunkBytes = 0;
    this.closing = true;
    this.flush();
    this.socket.end();
    if (this.settings.verbosity > 0) this.settings.log(`closing connection: ${message.trim()}`);
  }

  destroy(): void {
    this.closing = true;
    this.socket.destroy();
  }
}

/** The socket internals behind `net.connect({ onread })`, found on the first socket; null when absent. */
let onreadKeys: { buffer: symbol; callback: symbol } | null | undefined;
let sharedInputBuffer: Buffer | undefined;

/**
 * Makes a socket read into one buffer shared by every connection, as `net.connect`'s documented
 * `onread` option does for client sockets: no Buffer is allocated, and no stream machinery
 * runs, per read. Node offers no such option for the sockets a server accepts, so this sets the
 * same fields on them (found by their symbols' names). Sharing one buffer is safe because each
 * read is handled (and anything kept is copied out) before the next read starts. Returns false,
 * leaving the socket untouched, when this Node does not have those internals.
 */
export function readIntoSharedBuffer(
  socket: Socket,
  onRead: (nread: number, input: Buffer) => void,
): boolean {
  const handle = (socket as unknown as { _handle?: { useUserBuffer?: unknown } })._handle;
  if (typeof handle?.useUserBuffer !== 'function') return false;
  if (onreadKeys === undefined) {
    const symbols = Object.getOwnPropertySymbols(socket);
    const buffer = symbols.find((symbol) => symbol.description === 'kBuffer');
    const callback = symbols.find((symbol) => symbol.description === 'kBufferCb');
    onreadKeys = buffer !== undefined && callback !== undefined ? { buffer, callback } : null;
  }
  if (onreadKeys === null) return false;
  const fields = socket as unknown as Record<symbol, unknown>;
  if (fields[onreadKeys.buffer] !== null || fields[onreadKeys.callback] !== null) return false;
  sharedInputBuffer ??= Buffer.allocUnsafeSlow(SHARED_INPUT_BYTES);
  fields[onreadKeys.buffer] = sharedInputBuffer;
  fields[onreadKeys.callback] = onRead;
  (handle.useUserBuffer as (buffer: Uint8Array) => void).call(handle, sharedInputBuffer);
  return true;
}

/** A libuv write request (WriteWrap); oncomplete is called when an asynchronous write ends. */
interface WriteReq {
  buffer?: unknown;
  oncomplete?: (status: number) => void;
}

/** The write methods of a stream handle (TCPWrap, PipeWrap). */
interface DirectHandle {
  writeBuffer(req: WriteReq, data: Uint8Array): number;
  writev(req: WriteReq, chunks: Uint8Array[], allBuffers: boolean): number;
}

interface DirectWriteBinding {
  WriteWrap: new () => WriteReq;
  state: Int32Array;
  kLastWriteWasAsync: number;
}

let directWrite: DirectWriteBinding | null | undefined;

/** Whether this Node lets connections write to their handles directly (see directWriteBinding). */
export function directWriteAvailable(): boolean {
  return directWriteBinding() !== null;
}

/**
 * What writing to a handle directly needs, from the `stream_wrap` binding Node's own sockets
 * write through (the request constructor and the shared state that says whether the last write
 * went asynchronous); null when this Node does not offer them, and connections use the stream.
 */
function directWriteBinding(): DirectWriteBinding | null {
  if (directWrite !== undefined) return directWrite;
  directWrite = null;
  try {
    const legacy = (process as unknown as { binding?: (name: string) => Record<string, unknown> }).binding;
    const b = legacy?.call(process, 'stream_wrap');
    if (
      typeof b?.WriteWrap === 'function' &&
      b.streamBaseState instanceof Int32Array &&
      typeof b.kLastWriteWasAsync === 'number'
    ) {
      directWrite = {
        WriteWrap: b.WriteWrap as new () => WriteReq,
        state: b.streamBaseState,
        kLastWriteWasAsync: b.kLastWriteWasAsync,
      };
    }
  } catch {
    directWrite = null;
  }
  return directWrite;
}
