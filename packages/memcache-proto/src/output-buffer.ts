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

  bytes(data: Buffer): void {
    const n = data.length;
    if (n >= BIG_VALUE_BYTES) {
      this.cut();
      this.parts.push(data);
    } else {
      this.reserve(n);
      data.copy(this.slab, this.end);
      this.end += n;
    }
    this.pending += n;
  }

  /** Appends bytes [start, end) of data (copied). */
  range(data: Buffer, start: number, end: number): void {
    const n = end - start;
    this.reserve(n);
    data.copy(this.slab, this.end, start, end);
    this.end += n;
    this.pending += n;
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

  u64(value: bigint): void {
    this.reserve(8);
    this.slab.writeBigUInt64BE(value, this.end);
    this.end += 8;
    this.pending += 8;
  }

  /** Returns everything queued since the last call, or undefined when nothing is. */
  take(): Buffer[] | undefined {
    if (this.pending === 0) return undefined;
    this.cut();
    const out = this.parts;
    this.parts = [];
    this.pending = 0;
    if (this.slab.length - this.end < 512) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.start = this.end = 0;
    }
    return out;
  }
}
