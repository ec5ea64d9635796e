/**
 * Streaming HTTP/1.x response parser working on Buffers: status line, the three headers
 * that frame a body (Content-Length, Transfer-Encoding: chunked, Connection), fixed-length,
 * chunked and close-delimited bodies. It reports whole responses to its sink; it never
 * converts bytes to strings on the hot path.
 */

import type { ResponseSink, WireParser } from './wire.js';

const STATUS_LINE = 0;
const HEADERS = 1;
const BODY_LENGTH = 2;
const CHUNK_SIZE = 3;
const CHUNK_DATA = 4;
const CHUNK_DATA_END = 5;
const TRAILERS = 6;
const BODY_UNTIL_CLOSE = 7;
const FAILED = 8;

/** Headers larger than this (status line + all header lines) are a parse error. */
export const MAX_HEAD_BYTES = 64 * 1024;

/** Response heads up to this size are remembered, so an identical next head is not parsed again. */
const CACHED_HEAD_BYTES = 512;

const CR = 13;
const LF = 10;

const CONTENT_LENGTH = Buffer.from('content-length');
const TRANSFER_ENCODING = Buffer.from('transfer-encoding');
const CONNECTION = Buffer.from('connection');
const CHUNKED = Buffer.from('chunked');
const CLOSE = Buffer.from('close');
const KEEP_ALIVE = Buffer.from('keep-alive');

export class HttpResponseParser implements WireParser {
  private state = STATUS_LINE;
  private pending: Buffer | null = null;
  private headBytes = 0;
  private status = 0;
  private contentLength = -1;
  private chunked = false;
  private close = false;
  private http10 = false;
  private keepAlive = false;
  private remaining = 0;
  private chunkEndSeen = 0;
  /** Set by the owner for the response now being read: a HEAD request has no body. */
  noBody = false;
  /** Set by the owner to make `execute` stop after the current response (connection closing). */
  halted = false;
  /**
   * The last response head (status line to the empty line) and what it said. A server sends
   * the same head again and again (nginx changes only its Date once a second): when the next
   * response starts with exactly these bytes it is framed the same way, and one compare
   * replaces a dozen line and header scans.
   */
  private readonly lastHead = Buffer.allocUnsafe(CACHED_HEAD_BYTES);
  private lastHeadLength = 0;
  private lastStatus = 0;
  private lastContentLength = -1;
  private lastChunked = false;
  private lastClose = false;
  private lastHttp10 = false;
  private lastKeepAlive = false;
  /** Where the head being parsed started in the current `execute` buffer, or -1. */
  private headStart = -1;

  /** Bytes of the current body seen so far, and whether they differed from `expectBody`. */
  private bodyOffset = 0;
  private bodyDiffers = false;

  /** `expectBody`: the body every response must carry (null: bodies are skipped unread). */
  constructor(
    private readonly sink: ResponseSink,
    private readonly expectBody: Buffer | null = null,
  ) {}

  /** Resets for a fresh connection. */
  reset(): void {
    this.state = STATUS_LINE;
    this.pending = null;
    this.halted = false;
    this.noBody = false;
    this.startResponse();
  }

  /** True while a response has started but not finished (bytes of it were seen). */
  get midResponse(): boolean {
    return this.state !== STATUS_LINE || this.pending !== null;
  }

  /** True when the response being read ends only when the server closes the connection. */
  get readsUntilClose(): boolean {
    return this.state === BODY_UNTIL_CLOSE;
  }

  /** Called when the server closed the connection: finishes a close-delimited body. */
  finishOnClose(): boolean {
    if (this.state !== BODY_UNTIL_CLOSE) return false;
    this.state = STATUS_LINE;
    this.sink.onResponse(this.status, true, this.bodyMismatch());
    this.startResponse();
    return true;
  }

  execute(chunk: Buffer, length: number): void {
    let buf = chunk;
    let end = length;
    if (this.pending !== null) {
      buf = Buffer.concat([this.pending, chunk.subarray(0, length)]);
      end = buf.length;
      this.pending = null;
    }
    let pos = 0;
    this.headStart = -1;
    while (pos < end && !this.halted) {
      if (this.state === STATUS_LINE) {
        if (this.sameHeadAt(buf, pos, end)) {
          pos += this.lastHeadLength;
          this.headersDone();
          continue;
        }
        this.headStart = pos;
      }
      switch (this.state) {
        case STATUS_LINE:
        case HEADERS:
        case CHUNK_SIZE:
        case TRAILERS: {
          // Only up to `end`: with socket `onread` the buffer is reused, and what lies past this
          // read's bytes is left over from an earlier one (found by the fast-check properties).
          const lf = buf.indexOf(LF, pos);
          if (lf === -1 || lf >= end) {
            this.keep(buf, pos, end);
            return;
          }
          const lineEnd = lf > pos && buf[lf - 1] === CR ? lf - 1 : lf;
          if (this.state === CHUNK_SIZE) this.chunkSizeLine(buf, pos, lineEnd);
          else if (this.state === TRAILERS) {
            if (lineEnd === pos) this.complete();
          } else {
            this.headBytes += lf + 1 - pos;
            if (this.headBytes > MAX_HEAD_BYTES) this.fail(`response head over ${MAX_HEAD_BYTES} bytes`);
            else if (this.state === STATUS_LINE) this.statusLine(buf, pos, lineEnd);
            else if (lineEnd === pos) {
              this.rememberHead(buf, lf + 1);
              this.headersDone();
            } else this.headerLine(buf, pos, lineEnd);
          }
          pos = lf + 1;
          break;
        }
        case BODY_LENGTH: {
          const take = Math.min(this.remaining, end - pos);
          if (this.expectBody !== null) this.compareBody(buf, pos, take);
          this.remaining -= take;
          pos += take;
          if (this.remaining === 0) this.complete();
          break;
        }
        case CHUNK_DATA: {
          const take = Math.min(this.remaining, end - pos);
          if (this.expectBody !== null) this.compareBody(buf, pos, take);
          this.remaining -= take;
          pos += take;
          if (this.remaining === 0) {
            this.state = CHUNK_DATA_END;
            this.chunkEndSeen = 0;
          }
          break;
        }
        case CHUNK_DATA_END: {
          const byte = buf[pos++];
          if (this.chunkEndSeen === 0 && byte === CR) this.chunkEndSeen = 1;
          else if (byte === LF) this.state = CHUNK_SIZE;
          else this.fail('chunk data not followed by CRLF');
          break;
        }
        case BODY_UNTIL_CLOSE:
          if (this.expectBody !== null) this.compareBody(buf, pos, end - pos);
          pos = end;
          break;
        default:
          return;
      }
    }
  }

  /** The bytes at `pos` start with the remembered head. */
  private sameHeadAt(buf: Buffer, pos: number, end: number): boolean {
    const length = this.lastHeadLength;
    if (length === 0 || end - pos < length || buf[pos + 9] !== this.lastHead[9]) return false;
    if (buf.compare(this.lastHead, 0, length, pos, pos + length) !== 0) return false;
    this.status = this.lastStatus;
    this.contentLength = this.lastContentLength;
    this.chunked = this.lastChunked;
    this.close = this.lastClose;
    this.http10 = this.lastHttp10;
    this.keepAlive = this.lastKeepAlive;
    return true;
  }

  /** Remembers the head just parsed (it ends before `headEnd`) when it lies whole in `buf`. */
  private rememberHead(buf: Buffer, headEnd: number): void {
    const start = this.headStart;
    if (start < 0 || this.status < 200 || headEnd - start > CACHED_HEAD_BYTES) {
      this.lastHeadLength = 0;
      return;
    }
    buf.copy(this.lastHead, 0, start, headEnd);
    this.lastHeadLength = headEnd - start;
    this.lastStatus = this.status;
    this.lastContentLength = this.contentLength;
    this.lastChunked = this.chunked;
    this.lastClose = this.close;
    this.lastHttp10 = this.http10;
    this.lastKeepAlive = this.keepAlive;
  }

  private keep(buf: Buffer, pos: number, end: number): void {
    if (this.state !== CHUNK_SIZE && this.headBytes + (end - pos) > MAX_HEAD_BYTES) {
      this.fail(`response head over ${MAX_HEAD_BYTES} bytes`);
      return;
    }
    if (end - pos > MAX_HEAD_BYTES) {
      this.fail('line over 64 KiB');
      return;
    }
    this.pending = Buffer.from(buf.subarray(pos, end));
  }

  /** Compares `length` body bytes at `pos` with the expected body at the current offset. */
  private compareBody(buf: Buffer, pos: number, length: number): void {
    const expected = this.expectBody;
    if (expected === null || this.bodyDiffers || length === 0) return;
    const at = this.bodyOffset;
    this.bodyOffset = at + length;
    if (at + length > expected.length || buf.compare(expected, at, at + length, pos, pos + length) !== 0)
      this.bodyDiffers = true;
  }

  /** The body just completed differs from the expected one. */
  private bodyMismatch(): boolean {
    const expected = this.expectBody;
    return expected !== null && (this.bodyDiffers || this.bodyOffset !== expected.length);
  }

  private startResponse(): void {
    this.bodyOffset = 0;
    this.bodyDiffers = false;
    this.headBytes = 0;
    this.status = 0;
    this.contentLength = -1;
    this.chunked = false;
    this.close = false;
    this.http10 = false;
    this.keepAlive = false;
    this.remaining = 0;
  }

  private fail(reason: string): void {
    this.state = FAILED;
    this.pending = null;
    this.sink.onParseError(reason);
  }

  private complete(): void {
    const close = this.close || (this.http10 && !this.keepAlive);
    const status = this.status;
    const mismatch = this.expectBody !== null && this.bodyMismatch();
    this.state = STATUS_LINE;
    this.startResponse();
    this.sink.onResponse(status, close, mismatch);
  }

  private statusLine(buf: Buffer, start: number, end: number): void {
    // "HTTP/1.1 200" at least; the reason phrase is optional.
    if (
      end - start < 12 ||
      buf[start] !== 72 || // H
      buf[start + 1] !== 84 ||
      buf[start + 2] !== 84 ||
      buf[start + 3] !== 80 ||
      buf[start + 4] !== 47 || // /
      buf[start + 5] !== 49 || // 1
      buf[start + 6] !== 46 ||
      buf[start + 8] !== 32 ||
      (end - start > 12 && buf[start + 12] !== 32)
    ) {
      this.fail('malformed status line');
      return;
    }
    // (inside the line: end - start >= 12; a missing byte would read as NUL, no digit)
    const d0 = (buf[start + 9] ?? 0) - 48;
    const d1 = (buf[start + 10] ?? 0) - 48;
    const d2 = (buf[start + 11] ?? 0) - 48;
    if (d0 < 1 || d0 > 9 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) {
      this.fail('malformed status code');
      return;
    }
    this.status = d0 * 100 + d1 * 10 + d2;
    this.http10 = buf[start + 7] === 48;
    this.state = HEADERS;
  }

  private headerLine(buf: Buffer, start: number, end: number): void {
    const colon = buf.indexOf(58, start);
    if (colon === -1 || colon >= end || colon === start) {
      this.fail('malformed header line');
      return;
    }
    const nameLength = colon - start;
    if (nameLength !== 14 && nameLength !== 17 && nameLength !== 10) return;
    let v = colon + 1;
    while (v < end && (buf[v] === 32 || buf[v] === 9)) v++;
    let ve = end;
    while (ve > v && (buf[ve - 1] === 32 || buf[ve - 1] === 9)) ve--;
    if (nameLength === 14 && equalsLower(buf, start, CONTENT_LENGTH)) {
      if (v === ve) {
        this.fail('empty Content-Length');
        return;
      }
      let n = 0;
      for (let i = v; i < ve; i++) {
        const d = (buf[i] ?? 0) - 48;
        if (d < 0 || d > 9 || n > 1e15) {
          this.fail('malformed Content-Length');
          return;
        }
        n = n * 10 + d;
      }
      if (this.contentLength !== -1 && this.contentLength !== n) {
        this.fail('conflicting Content-Length headers');
        return;
      }
      this.contentLength = n;
    } else if (nameLength === 17 && equalsLower(buf, start, TRANSFER_ENCODING)) {
      // Chunked must be the last coding; anything else is read until close.
      this.chunked = ve - v >= 7 && equalsLower(buf, ve - 7, CHUNKED);
      if (!this.chunked) this.close = true;
    } else if (nameLength === 10 && equalsLower(buf, start, CONNECTION)) {
      if (containsLower(buf, v, ve, CLOSE)) this.close = true;
      if (containsLower(buf, v, ve, KEEP_ALIVE)) this.keepAlive = true;
    }
  }

  private headersDone(): void {
    const status = this.status;
    if (status < 200) {
      // 1xx interim response: the real one follows.
      this.state = STATUS_LINE;
      this.startResponse();
      return;
    }
    if (this.noBody || status === 204 || status === 304) {
      this.complete();
    } else if (this.chunked) {
      this.state = CHUNK_SIZE;
    } else if (this.contentLength >= 0) {
      if (this.contentLength === 0) this.complete();
      else {
        this.remaining = this.contentLength;
        this.state = BODY_LENGTH;
      }
    } else {
      this.close = true;
      this.state = BODY_UNTIL_CLOSE;
    }
  }

  private chunkSizeLine(buf: Buffer, start: number, end: number): void {
    let size = 0;
    let digits = 0;
    for (let i = start; i < end; i++) {
      const c = buf[i] ?? 0; // (i < end, inside the buffer; NUL is no digit)
      let d: number;
      if (c >= 48 && c <= 57) d = c - 48;
      else if (c >= 97 && c <= 102) d = c - 87;
      else if (c >= 65 && c <= 70) d = c - 55;
      else if (c === 59 || c === 32 || c === 9)
        break; // chunk extension
      else {
        this.fail('malformed chunk size');
        return;
      }
      if (++digits > 12) {
        this.fail('chunk size too large');
        return;
      }
      size = size * 16 + d;
    }
    if (digits === 0) {
      this.fail('missing chunk size');
      return;
    }
    if (size === 0) this.state = TRAILERS;
    else {
      this.remaining = size;
      this.state = CHUNK_DATA;
    }
  }
}

function equalsLower(buf: Buffer, start: number, lower: Buffer): boolean {
  for (let i = 0; i < lower.length; i++) {
    const b = buf[start + i];
    const t = lower[i];
    if (b === t) continue;
    if (b === undefined || t === undefined || t < 97 || t > 122 || (b | 0x20) !== t) return false;
  }
  return true;
}

function containsLower(buf: Buffer, start: number, end: number, lower: Buffer): boolean {
  const last = end - lower.length;
  for (let i = start; i <= last; i++) {
    if (equalsLower(buf, i, lower)) return true;
  }
  return false;
}
