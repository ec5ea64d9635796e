import { findByte } from './log-fields.js';

/** Receives complete lines as byte ranges of a Buffer (without the trailing newline). */
export interface LineSink {
  line(buf: Buffer, start: number, end: number): void;
  /** A line longer than the limit was skipped; `bytes` is its length so far. */
  oversized(bytes: number): void;
}

/**
 * Splits a stream of Buffers into lines without converting them to strings. A line split across
 * chunks is kept as a list of pieces and joined once. Lines longer than `maxLineBytes` are
 * skipped (their bytes are not kept) and reported to the sink.
 */
export class LineSplitter {
  private pieces: Buffer[] = [];
  private pending = 0;
  private discarding = false;

  constructor(
    private readonly sink: LineSink,
    private readonly maxLineBytes: number,
  ) {}

  push(chunk: Buffer): void {
    let pos = 0;
    const length = chunk.length;
    if (this.pending > 0 || this.discarding) {
      const nl = findByte.call(chunk, 10);
      if (nl === -1) {
        this.keep(chunk, 0, length);
        return;
      }
      this.keep(chunk, 0, nl);
      this.flushPending();
      pos = nl + 1;
    }
    while (pos < length) {
      const nl = findByte.call(chunk, 10, pos);
      if (nl === -1) {
        this.keep(chunk, pos, length);
        return;
      }
      if (nl - pos > this.maxLineBytes) this.sink.oversized(nl - pos);
      else this.sink.line(chunk, pos, nl);
      pos = nl + 1;
    }
  }

  /** Ends the input; returns the length of an incomplete last line (0 when the input ended cleanly). */
  end(): number {
    const left = this.pending;
    const wasDiscarding = this.discarding;
    this.pieces = [];
    this.pending = 0;
    this.discarding = false;
    return wasDiscarding ? 0 : left;
  }

  private keep(chunk: Buffer, start: number, end: number): void {
    if (end <= start) return;
    if (this.discarding) {
      this.pending += end - start;
      return;
    }
    if (this.pending + (end - start) > this.maxLineBytes) {
      this.discarding = true;
      this.pieces = [];
      this.pending += end - start;
      return;
    }
    // Copy: the stream may reuse its buffers.
    this.pieces.push(Buffer.from(chunk.subarray(start, end)));
    this.pending += end - start;
  }

  private flushPending(): void {
    if (this.discarding) {
      this.sink.oversized(this.pending);
    } else if (this.pending > 0) {
      const [only] = this.pieces;
      const line = only && this.pieces.length === 1 ? only : Buffer.concat(this.pieces, this.pending);
      this.sink.line(line, 0, line.length);
    }
    this.pieces = [];
    this.pending = 0;
    this.discarding = false;
  }
}
