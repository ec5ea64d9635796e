import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { getSystemErrorName } from 'node:util';
import { directWriter, lastDirectWriteQueued } from './direct-write.js';
import {
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FRAME_CONTINUATION,
  FRAME_DATA,
  FRAME_GOAWAY,
  FRAME_HEADER_SIZE,
  FRAME_HEADERS,
  writeFrameHeader,
} from './h2-frames.js';

/** Writers whose frames wait for the end of the loop's poll phase (flushSoon), and the spare list. */
let soon: FrameWriter[] = [];
let spare: FrameWriter[] = [];
/** Writers holding their requests (hold), and the one timer that bounds the wait for all of them. */
let held: FrameWriter[] = [];
let heldTimer: ReturnType<typeof setTimeout> | null = null;
/** The longest a held request waits for company (setTimeout's 1 ms). */
const HOLD_MS = 1;

function onHoldTimer(): void {
  heldTimer = null;
  const writers = held;
  held = [];
  for (let i = 0; i < writers.length; i++) (writers[i] as FrameWriter).flushHeld();
}

function flushAllSoon(): void {
  const writers = soon;
  soon = spare;
  spare = writers;
  for (let i = 0; i < writers.length; i++) (writers[i] as FrameWriter).flushQueued();
  writers.length = 0;
}

/**
 * The frames one HTTP/2 connection sends in a turn, written into one buffer and flushed in one
 * write. Over plain TCP the write goes straight to the socket's handle (direct-write.ts): a write
 * libuv completes at once leaves the buffer free for the next frames; one it has to queue keeps
 * the buffer, and the writer takes a new one. Through the stream (TLS, or no direct writes),
 * each flush copies its bytes (pooled when small) and the buffer is reused at once.
 */
export class FrameWriter {
  private out = Buffer.allocUnsafe(16 * 1024);
  private length = 0;
  private queued = false;
  private holding = false;
  /** Requests (HEADERS frames) written since the last flush. */
  requests = 0;
  private socket: Socket | TLSSocket | null = null;
  private write: ((data: Uint8Array) => number) | null = null;

  /** A new socket: nothing pending; `direct`: write past its Writable where Node allows it. */
  attach(socket: Socket | TLSSocket, direct: boolean): void {
    this.socket = socket;
    this.length = 0;
    this.write = direct
      ? directWriter(socket, (code) => {
          // a write queued in libuv failed later: end this socket as the stream would have
          const name = getSystemErrorName(code);
          socket.destroy(
            Object.assign(new Error(`write ${name}`), { errno: code, code: name, syscall: 'write' }),
          );
        })
      : null;
  }

  detach(): void {
    this.socket = null;
    this.write = null;
    this.length = 0;
    this.requests = 0;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.out.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.length + bytes));
    this.out.copy(grown, 0, 0, this.length);
    this.out = grown;
  }

  /** Bytes as they are (the connection preface and SETTINGS). */
  raw(bytes: Buffer): void {
    this.reserve(bytes.length);
    bytes.copy(this.out, this.length);
    this.length += bytes.length;
  }

  /** A request's header block: one HEADERS frame, or HEADERS and CONTINUATION past `maxFrame`. */
  headers(id: number, block: Buffer, endStream: boolean, maxFrame: number): void {
    const flags = endStream ? FLAG_END_STREAM : 0;
    this.requests++;
    let offset = 0;
    let type = FRAME_HEADERS;
    do {
      const take = Math.min(maxFrame, block.length - offset);
      const last = offset + take === block.length;
      this.reserve(FRAME_HEADER_SIZE + take);
      const at = writeFrameHeader(
        this.out,
        this.length,
        take,
        type,
        (type === FRAME_HEADERS ? flags : 0) | (last ? FLAG_END_HEADERS : 0),
        id,
      );
      block.copy(this.out, at, offset, offset + take);
      this.length = at + take;
      offset += take;
      type = FRAME_CONTINUATION;
    } while (offset < block.length);
  }

  /** One DATA frame of `body[from..from+take)`. */
  data(id: number, body: Buffer, from: number, take: number, endStream: boolean): void {
    this.reserve(FRAME_HEADER_SIZE + take);
    const at = writeFrameHeader(this.out, this.length, take, FRAME_DATA, endStream ? FLAG_END_STREAM : 0, id);
    body.copy(this.out, at, from, from + take);
    this.length = at + take;
  }

  /** A frame whose payload is `payload[start..end)` (SETTINGS ack, PING ack). */
  frame(type: number, flags: number, id: number, payload: Buffer, start: number, end: number): void {
    const length = end - start;
    this.reserve(FRAME_HEADER_SIZE + length);
    const at = writeFrameHeader(this.out, this.length, length, type, flags, id);
    payload.copy(this.out, at, start, end);
    this.length = at + length;
  }

  /** A frame with one 32-bit payload (RST_STREAM, WINDOW_UPDATE). */
  u32(type: number, id: number, value: number): void {
    this.reserve(FRAME_HEADER_SIZE + 4);
    const at = writeFrameHeader(this.out, this.length, 4, type, 0, id);
    this.out.writeUInt32BE(value, at);
    this.length = at + 4;
  }

  /** GOAWAY naming no server stream (a client's peer opens none) and an error code. */
  goaway(code: number): void {
    this.reserve(FRAME_HEADER_SIZE + 8);
    const at = writeFrameHeader(this.out, this.length, 8, FRAME_GOAWAY, 0, 0);
    this.out.writeUInt32BE(0, at);
    this.out.writeUInt32BE(code, at + 4);
    this.length = at + 8;
  }

  /**
   * Flushes once the loop's poll phase is over (one setImmediate for every writer of the
   * thread). Over TLS each record a socket read brings is handed over on its own (nginx puts each
   * response in a record): ten responses in one read were ten writes, each its own record,
   * syscall and Writable call (in practice one, then the rest queued behind it and written
   * together). Waiting for the end of the poll phase writes what all of them freed as one
   * record, as h2load writes once a loop. The closed model flushes this way over h2c too (one
   * read for the server), when it does not hold (see hold).
   */
  flushSoon(): void {
    if (this.queued || this.length === 0) return;
    this.queued = true;
    if (soon.push(this) === 1) setImmediate(flushAllSoon);
  }

  /**
   * Holds the frames for more company: flushed with the next flushSoon or flush, or after
   * HOLD_MS (one timer for every writer of the thread). A connection whose streams are mostly
   * still in flight holds the few requests a read freed (see H2Connection.fill): the server reads
   * (and over TLS decrypts a record) once per write, so a write of two requests costs it nearly
   * what a write of five does.
   */
  hold(): void {
    if (this.queued || this.holding || this.length === 0) return;
    this.holding = true;
    held.push(this);
    if (heldTimer === null) {
      heldTimer = setTimeout(onHoldTimer, HOLD_MS);
      heldTimer.unref();
    }
  }

  /** @internal the timer of hold. */
  flushHeld(): void {
    if (this.holding) this.flush();
  }

  /** @internal the setImmediate of flushSoon. */
  flushQueued(): void {
    this.queued = false;
    this.flush();
  }

  flush(): void {
    this.holding = false;
    this.requests = 0;
    const length = this.length;
    if (length === 0) return;
    this.length = 0;
    const socket = this.socket;
    if (socket === null) return;
    const write = this.write;
    if (write !== null) {
      if (write(this.out.subarray(0, length)) === 0) {
        if (lastDirectWriteQueued()) this.out = Buffer.allocUnsafe(this.out.length);
        return;
      }
      this.write = null; // the handle refused it: the stream reports why
    }
    const chunk = Buffer.allocUnsafe(length);
    this.out.copy(chunk, 0, 0, length);
    socket.write(chunk);
  }
}
