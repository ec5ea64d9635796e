import { byteAt } from './checked-index.js';

const SLAB_BYTES = 64 * 1024;
const BIG_VALUE_BYTES = 16 * 1024;
/** Runs up to this long are copied byte by byte: below it that beats making a view to copy from. */
const SHORT_COPY_BYTES = 32;

/**
 * Collects one read's replies into as few Buffers as possible. Small pieces are copied into a
 * slab; a slab region is handed to the socket without copying and never written again, so the
 * next replies continue after it (or in a fresh slab). Large values are passed by reference:
 * stored values are immutable.
 */
export class OutputBuffer {
  private slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
  /** The slab's ArrayBuffer (the slab starts at its offset 0): regions are handed out as views of it. */
  private slabBuffer = this.slab.buffer;
  /** Start of the not yet handed out region of the slab. */
  private start = 0;
  private end = 0;
  private parts: Uint8Array[] = [];
  /** Bytes queued since the last take(). */
  pending = 0;

  private reserve(bytes: number): void {
    if (this.end + bytes <= this.slab.length) return;
    this.cut();
    this.newSlab(Math.max(SLAB_BYTES, bytes));
  }

  private newSlab(bytes: number): void {
    this.slab = Buffer.allocUnsafeSlow(bytes);
    this.slabBuffer = this.slab.buffer;
    this.start = 0;
    this.end = 0;
  }

  /** Moves the slab's filled region into parts. */
  private cut(): void {
    if (this.end > this.start) {
      this.parts.push(new Uint8Array(this.slabBuffer, this.start, this.end - this.start));
      this.start = this.end;
    }
  }

  /** Appends a string whose characters are all below U+0100 (protocol lines, keys). */
  ascii(text: string): void {
    const n = text.length;
    this.reserve(n);
    this.slab.write(text, this.end, n, 'latin1');
    this.end += n;
    this.pending += n;
  }

  /**
   * Appends a Buffer: small ones are copied (TypedArray set: no per-call wrapper cost, which
   * matters for the short constant replies), big ones are passed by reference.
   */
  bytes(data: Buffer): void {
    const n = data.length;
    if (n >= BIG_VALUE_BYTES) {
      this.cut();
      this.parts.push(data);
    } else {
      this.reserve(n);
      this.slab.set(data, this.end);
      this.end += n;
    }
    this.pending += n;
  }

  /** Appends bytes [start, end) of data (copied: data may be overwritten after this call). */
  range(data: Buffer, start: number, end: number): void {
    const n = end - start;
    this.reserve(n);
    this.end = copyBytes(this.slab, this.end, data, start, end);
    this.pending += n;
  }

  /**
   * A get reply's `VALUE <key> <flags> <bytes>[ <cas>]\r\n<value>\r\n` block (no cas when `cas`
   * is negative) in one reservation. The key is `keyLength` bytes at `keyStart` of `page`, the
   * value follows it; `buffer` is the ArrayBuffer under `page`, which starts at its offset 0.
   * Bytes are copied through views of `buffer` (cheaper than Buffer.copy and subarray, which
   * each look the ArrayBuffer up again); short keys byte by byte. A big value of a buffer that
   * is never written again (`byReference`) is queued as a view instead of copied.
   */
  valueBlock(
    page: Uint8Array,
    buffer: ArrayBuffer,
    keyStart: number,
    keyLength: number,
    flags: number,
    valueLength: number,
    cas: number,
    byReference: boolean,
  ): void {
    const shared = byReference && valueLength >= BIG_VALUE_BYTES;
    this.reserve(6 + keyLength + 24 + 18 + 2 + (shared ? 0 : valueLength + 2));
    const slab = this.slab;
    const start = this.end;
    let p = start;
    slab[p++] = 86; // V
    slab[p++] = 65; // A
    slab[p++] = 76; // L
    slab[p++] = 85; // U
    slab[p++] = 69; // E
    slab[p++] = 32;
    if (keyLength <= SHORT_COPY_BYTES) {
      for (let i = keyStart, e = keyStart + keyLength; i < e; i++) slab[p++] = byteAt(page, i);
    } else {
      slab.set(new Uint8Array(buffer, keyStart, keyLength), p);
      p += keyLength;
    }
    slab[p++] = 32;
    p = writeDecimal(slab, p, flags);
    slab[p++] = 32;
    p = writeDecimal(slab, p, valueLength);
    if (cas >= 0) {
      slab[p++] = 32;
      p = writeDecimal(slab, p, cas);
    }
    slab[p++] = 13;
    slab[p++] = 10;
    const valueStart = keyStart + keyLength;
    if (shared) {
      this.end = p;
      this.pending += p - start + valueLength;
      this.cut();
      this.parts.push(new Uint8Array(buffer, valueStart, valueLength));
      this.crlf();
      return;
    }
    slab.set(new Uint8Array(buffer, valueStart, valueLength), p);
    p += valueLength;
    slab[p++] = 13;
    slab[p++] = 10;
    this.end = p;
    this.pending += p - start;
  }

  /** Appends `END\r\n` (the end of a get reply). */
  getEnd(): void {
    this.reserve(5);
    const slab = this.slab;
    const p = this.end;
    slab[p] = 69; // E
    slab[p + 1] = 78; // N
    slab[p + 2] = 68; // D
    slab[p + 3] = 13;
    slab[p + 4] = 10;
    this.end = p + 5;
    this.pending += 5;
  }

  /** Appends `\r\n`. */
  crlf(): void {
    this.reserve(2);
    this.slab[this.end] = 13;
    this.slab[this.end + 1] = 10;
    this.end += 2;
    this.pending += 2;
  }

  /** Writes a big-endian integer of 1, 2, 4 bytes. */
  uint(value: number, size: 1 | 2 | 4): void {
    this.reserve(size);
    if (size === 1) this.slab[this.end] = value;
    else if (size === 2) this.slab.writeUInt16BE(value, this.end);
    else this.slab.writeUInt32BE(value >>> 0, this.end);
    this.end += size;
    this.pending += size;
  }

  /** Writes a 64-bit big-endian unsigned integer given as a number below 2^53 or a bigint. */
  u64(value: bigint | number): void {
    this.reserve(8);
    if (typeof value === 'number') {
      this.slab.writeUInt32BE(Math.floor(value / 0x1_0000_0000), this.end);
      this.slab.writeUInt32BE(value % 0x1_0000_0000, this.end + 4);
      this.end += 8;
      this.pending += 8;
      return;
    }
    this.slab.writeBigUInt64BE(value, this.end);
    this.end += 8;
    this.pending += 8;
  }

  /**
   * Returns everything queued since the last call: one Buffer when it is one region of the slab
   * (the common case: no array is made), else the parts in order; undefined when nothing is.
   */
  take(): Uint8Array | Uint8Array[] | undefined {
    if (this.pending === 0) return undefined;
    let out: Uint8Array | Uint8Array[];
    if (this.parts.length === 0) {
      out = new Uint8Array(this.slabBuffer, this.start, this.end - this.start);
      this.start = this.end;
    } else {
      this.cut();
      out = this.parts;
      this.parts = [];
    }
    this.pending = 0;
    if (this.slab.length - this.end < 512) this.newSlab(SLAB_BYTES);
    return out;
  }

  /**
   * The socket has written everything handed out so far (nothing is queued in it): the
   * slab can be filled again from its start instead of a new one being allocated, which
   * keeps a busy connection from creating 64 KB of garbage every few dozen replies.
   */
  written(): void {
    if (this.pending === 0) this.start = this.end = 0;
  }
}

/**
 * Copies src[start, end) to target at pos; returns the position after it. Short runs are copied
 * byte by byte: below about 32 bytes that beats `copy`'s fixed cost.
 */
function copyBytes(target: Buffer, pos: number, src: Buffer, start: number, end: number): number {
  if (end - start > SHORT_COPY_BYTES) return pos + src.copy(target, pos, start, end);
  for (let i = start; i < end; i++) target[pos++] = byteAt(src, i);
  return pos;
}

/** Writes a non-negative integer below 2^53 in decimal at pos; returns the position after it. */
function writeDecimal(target: Buffer, pos: number, value: number): number {
  let digits = 1;
  for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
  let v = value;
  for (let i = pos + digits - 1; i >= pos; i--) {
    target[i] = 48 + (v % 10);
    v = Math.floor(v / 10);
  }
  return pos + digits;
}
