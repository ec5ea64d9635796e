const SLAB_BYTES = 64 * 1024;
const BIG_VALUE_BYTES = 16 * 1024;

/**
 * Collects one read's replies into as few Buffers as possible. Small pieces are copied into a
 * slab; a slab region is handed to the socket without copying and never written again, so the
 * next replies continue after it (or in a fresh slab). Large values are passed by reference:
 * stored values are immutable.
 */
export class OutputBuffer {
  private slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
  /** Start of the not yet handed out region of the slab. */
  private start = 0;
  private end = 0;
  private parts: Buffer[] = [];
  /** Bytes queued since the last take(). */
  pending = 0;

  private reserve(bytes: number): void {
    if (this.end + bytes <= this.slab.length) return;
    this.cut();
    this.slab = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, bytes));
    this.start = 0;
    this.end = 0;
  }

  /** Moves the slab's filled region into parts. */
  private cut(): void {
    if (this.end > this.start) {
      this.parts.push(this.slab.subarray(this.start, this.end));
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
   * The text protocol's `VALUE <key> <flags> <bytes>[ <cas>]\r\n` line (no cas when `cas` is
   * negative), the key being kb[ks, ke), in one reservation,
   * written byte by byte (a handful of small Buffer calls cost more than the bytes).
   */
  valueLine(kb: Buffer, ks: number, ke: number, flags: number, bytes: number, cas: number): void {
    this.reserve(6 + (ke - ks) + 24 + 18 + 2);
    const slab = this.slab;
    const start = this.end;
    let p = start;
    slab[p++] = 86; // V
    slab[p++] = 65; // A
    slab[p++] = 76; // L
    slab[p++] = 85; // U
    slab[p++] = 69; // E
    slab[p++] = 32;
    p = copyBytes(slab, p, kb, ks, ke);
    slab[p++] = 32;
    p = writeDecimal(slab, p, flags);
    slab[p++] = 32;
    p = writeDecimal(slab, p, bytes);
    if (cas >= 0) {
      slab[p++] = 32;
      p = writeDecimal(slab, p, cas);
    }
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
  take(): Buffer | Buffer[] | undefined {
    if (this.pending === 0) return undefined;
    let out: Buffer | Buffer[];
    if (this.parts.length === 0) {
      out = this.slab.subarray(this.start, this.end);
      this.start = this.end;
    } else {
      this.cut();
      out = this.parts;
      this.parts = [];
    }
    this.pending = 0;
    if (this.slab.length - this.end < 512) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.start = this.end = 0;
    }
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
  if (end - start > 32) return pos + src.copy(target, pos, start, end);
  for (let i = start; i < end; i++) target[pos++] = src[i]!;
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
