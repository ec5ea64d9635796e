/**
 * HPACK (RFC 7541) for an HTTP/2 client: a complete decoder for response header blocks (static
 * and dynamic table, Huffman strings, table size updates) that reports only what the load loop
 * reads (`:status`, `grpc-status`) without turning bytes into strings, and an encoder for request
 * header blocks that indexes each field once per connection so repeated requests cost one byte
 * per field on the wire.
 */
import { huffmanDecode, huffmanEncode, huffmanLength } from './hpack-huffman.js';

/** RFC 7541 Appendix A: the static table, index 1..61. */
const STATIC: readonly (readonly [string, string])[] = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
const STATIC_COUNT = STATIC.length;
const STATIC_NAMES = STATIC.map(([name]) => Buffer.from(name, 'latin1'));
const STATIC_VALUES = STATIC.map(([, value]) => Buffer.from(value, 'latin1'));
/** Static indexes 8..14 are `:status` with these values. */
const STATIC_STATUS = [200, 204, 206, 304, 400, 404, 500];
const STATUS_NAME = Buffer.from(':status');
const GRPC_STATUS_NAME = Buffer.from('grpc-status');
/** An entry's size in the table: its name and value lengths plus 32 (RFC 7541 section 4.1). */
const ENTRY_OVERHEAD = 32;

/** Why a header block could not be decoded (a COMPRESSION_ERROR: the connection cannot go on). */
export const HPACK_ERROR_NONE = 0;
export const HPACK_ERROR_INVALID = 1;
export const HPACK_ERROR_TOO_LARGE = 2;

function equalBytes(a: Uint8Array, aStart: number, aEnd: number, b: Uint8Array): boolean {
  if (aEnd - aStart !== b.length) return false;
  for (let i = 0; i < b.length; i++) if (a[aStart + i] !== b[i]) return false;
  return true;
}

/** `a[aStart..aStart+length)` equals `b[0..length)`. */
function samePrefix(a: Uint8Array, aStart: number, b: Uint8Array, length: number): boolean {
  for (let i = 0; i < length; i++) if (a[aStart + i] !== b[i]) return false;
  return true;
}

/** Three ASCII digits as a number, or 0. */
function statusOf(bytes: Uint8Array, start: number, end: number): number {
  if (end - start !== 3) return 0;
  const a = (bytes[start] as number) - 48;
  const b = (bytes[start + 1] as number) - 48;
  const c = (bytes[start + 2] as number) - 48;
  if (a < 1 || a > 9 || b < 0 || b > 9 || c < 0 || c > 9) return 0;
  return a * 100 + b * 10 + c;
}

/** A small non-negative decimal (grpc-status), or -1. */
function smallNumber(bytes: Uint8Array, start: number, end: number): number {
  if (end <= start || end - start > 4) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = (bytes[i] as number) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * Decodes response header blocks of one connection. After `decode`, `status` holds `:status`
 * (0 when absent), `grpcStatus` the `grpc-status` (-1 when absent) and `error` one of the
 * HPACK_ERROR_* codes. A block identical to the previous one, decoded with the table unchanged
 * since and itself not changing it, is answered from the last result with one compare (a
 * server repeats its response head byte for byte; nginx changes its `date` once a second).
 */
export class HpackDecoder {
  status = 0;
  grpcStatus = -1;
  error = HPACK_ERROR_NONE;
  /** Dynamic table as a ring, newest at `head`; names and values are copies. */
  private names: Buffer[] = [];
  private values: Buffer[] = [];
  private head = 0;
  private count = 0;
  private size = 0;
  private maxSize: number;
  /** Changes whenever the dynamic table does. */
  private generation = 0;
  private readonly lastBlock: Buffer;
  private lastLength = -1;
  private lastGeneration = -1;
  private lastStatus = 0;
  private lastGrpc = -1;
  private lastUsesTable = false;
  private lastInserts = 0;
  /** The block being decoded: refers to the dynamic table, adds entries (kept for a repeat). */
  private usesTable = false;
  private cacheable = true;
  private inserts = 0;
  private readonly insertNames: Buffer[] = [];
  private readonly insertValues: Buffer[] = [];
  /** Where Huffman strings are decoded (a string is at most the block's length * 8 / 5). */
  private scratch: Buffer;
  private stringStart = 0;
  private stringEnd = 0;
  private stringBuffer: Uint8Array = Buffer.alloc(0);
  private pos = 0;

  /**
   * `maxTableSize`: the SETTINGS_HEADER_TABLE_SIZE this client announced (the most a table size
   * update may ask for). `maxListSize`: the most header list bytes (names + values + 32 per field).
   */
  constructor(
    private readonly maxTableSize = 4096,
    private readonly maxListSize = 64 * 1024,
  ) {
    this.maxSize = maxTableSize;
    this.lastBlock = Buffer.allocUnsafe(512);
    this.scratch = Buffer.allocUnsafe(1024);
  }

  /** Decodes `block[start..end)`; returns false on an error (see `error`). */
  decode(block: Uint8Array, start: number, end: number): boolean {
    const length = end - start;
    if (
      length === this.lastLength &&
      (!this.lastUsesTable || this.generation === this.lastGeneration) &&
      samePrefix(block, start, this.lastBlock, length)
    ) {
      // The same block again: the same fields, and the same entries added to the table (the
      // copies made the first time are immutable and shared).
      for (let i = 0; i < this.lastInserts; i++)
        this.insert(this.insertNames[i] as Buffer, this.insertValues[i] as Buffer);
      this.lastGeneration = this.generation;
      this.status = this.lastStatus;
      this.grpcStatus = this.lastGrpc;
      this.error = HPACK_ERROR_NONE;
      return true;
    }
    this.inserts = 0;
    this.usesTable = false;
    this.cacheable = true;
    const ok = this.decodeFields(block, start, end);
    if (ok && this.cacheable && !(this.usesTable && this.inserts > 0) && length <= this.lastBlock.length) {
      if (length > 0) this.lastBlock.set(block.subarray(start, end), 0);
      this.lastLength = length;
      this.lastGeneration = this.generation;
      this.lastUsesTable = this.usesTable;
      this.lastInserts = this.inserts;
      this.lastStatus = this.status;
      this.lastGrpc = this.grpcStatus;
    } else {
      this.lastLength = -1;
    }
    return ok;
  }

  private fail(error: number): false {
    this.error = error;
    return false;
  }

  private decodeFields(block: Uint8Array, start: number, end: number): boolean {
    this.status = 0;
    this.grpcStatus = -1;
    this.error = HPACK_ERROR_NONE;
    this.pos = start;
    let listSize = 0;
    let fields = 0;
    while (this.pos < end) {
      const first = block[this.pos] as number;
      let nameBuf: Uint8Array;
      let nameStart: number;
      let nameEnd: number;
      let valueBuf: Uint8Array;
      let valueStart: number;
      let valueEnd: number;
      if (first & 0x80) {
        // Indexed field.
        const index = this.integer(block, end, 7);
        if (index <= 0) return this.fail(HPACK_ERROR_INVALID);
        if (index <= STATIC_COUNT) {
          if (index >= 8 && index <= 14) {
            this.status = STATIC_STATUS[index - 8] as number;
            listSize += 7 + 3 + ENTRY_OVERHEAD;
            fields++;
            if (listSize > this.maxListSize) return this.fail(HPACK_ERROR_TOO_LARGE);
            continue;
          }
          nameBuf = STATIC_NAMES[index - 1] as Buffer;
          valueBuf = STATIC_VALUES[index - 1] as Buffer;
        } else {
          const d = index - STATIC_COUNT - 1;
          if (d >= this.count) return this.fail(HPACK_ERROR_INVALID);
          this.usesTable = true;
          const slot = (this.head - d + this.names.length) % this.names.length;
          nameBuf = this.names[slot] as Buffer;
          valueBuf = this.values[slot] as Buffer;
        }
        nameStart = 0;
        nameEnd = nameBuf.length;
        valueStart = 0;
        valueEnd = valueBuf.length;
      } else if ((first & 0xe0) === 0x20) {
        // Dynamic table size update.
        const size = this.integer(block, end, 5);
        if (size < 0 || size > this.maxTableSize || fields > 0) return this.fail(HPACK_ERROR_INVALID);
        this.maxSize = size;
        this.evictTo(size);
        this.generation++;
        this.cacheable = false;
        continue;
      } else {
        // Literal: with incremental indexing (01), without (0000) or never indexed (0001).
        const indexing = (first & 0xc0) === 0x40;
        const index = this.integer(block, end, indexing ? 6 : 4);
        if (index < 0) return this.fail(HPACK_ERROR_INVALID);
        if (index === 0) {
          if (!this.string(block, end, 0)) return this.fail(HPACK_ERROR_INVALID);
          nameBuf = this.stringBuffer;
          nameStart = this.stringStart;
          nameEnd = this.stringEnd;
        } else if (index <= STATIC_COUNT) {
          nameBuf = STATIC_NAMES[index - 1] as Buffer;
          nameStart = 0;
          nameEnd = nameBuf.length;
        } else {
          const d = index - STATIC_COUNT - 1;
          if (d >= this.count) return this.fail(HPACK_ERROR_INVALID);
          this.usesTable = true;
          nameBuf = this.names[(this.head - d + this.names.length) % this.names.length] as Buffer;
          nameStart = 0;
          nameEnd = nameBuf.length;
        }
        // A Huffman name sits at the start of the scratch buffer; the value goes after it.
        const valueAt = nameBuf === this.scratch ? nameEnd : 0;
        if (!this.string(block, end, valueAt)) return this.fail(HPACK_ERROR_INVALID);
        valueBuf = this.stringBuffer;
        valueStart = this.stringStart;
        valueEnd = this.stringEnd;
        if (indexing) {
          const name = Buffer.from(nameBuf.subarray(nameStart, nameEnd));
          const value = Buffer.from(valueBuf.subarray(valueStart, valueEnd));
          this.insert(name, value);
          if (this.inserts < 16) {
            this.insertNames[this.inserts] = name;
            this.insertValues[this.inserts] = value;
            this.inserts++;
          } else this.cacheable = false;
        }
      }
      fields++;
      listSize += nameEnd - nameStart + valueEnd - valueStart + ENTRY_OVERHEAD;
      if (listSize > this.maxListSize) return this.fail(HPACK_ERROR_TOO_LARGE);
      if (equalBytes(nameBuf, nameStart, nameEnd, STATUS_NAME)) {
        this.status = statusOf(valueBuf, valueStart, valueEnd);
      } else if (equalBytes(nameBuf, nameStart, nameEnd, GRPC_STATUS_NAME)) {
        this.grpcStatus = smallNumber(valueBuf, valueStart, valueEnd);
      }
    }
    return true;
  }

  /** An HPACK integer with an N-bit prefix at `pos`; -1 when truncated or too large. */
  private integer(block: Uint8Array, end: number, prefixBits: number): number {
    const max = (1 << prefixBits) - 1;
    let value = (block[this.pos++] as number) & max;
    if (value < max) return value;
    let shift = 0;
    for (;;) {
      if (this.pos >= end || shift > 21) return -1;
      const byte = block[this.pos++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if ((byte & 0x80) === 0) return value;
    }
  }

  /** A string literal at `pos` into stringBuffer[stringStart..stringEnd); false when invalid. */
  private string(block: Uint8Array, end: number, scratchAt: number): boolean {
    if (this.pos >= end) return false;
    const huffman = ((block[this.pos] as number) & 0x80) !== 0;
    const length = this.integer(block, end, 7);
    if (length < 0 || length > end - this.pos) return false;
    const from = this.pos;
    this.pos += length;
    if (!huffman) {
      this.stringBuffer = block;
      this.stringStart = from;
      this.stringEnd = from + length;
      return true;
    }
    const needed = scratchAt + Math.ceil((length * 8) / 5) + 1;
    if (needed > this.scratch.length) {
      const grown = Buffer.allocUnsafe(needed * 2);
      this.scratch.copy(grown, 0, 0, scratchAt);
      this.scratch = grown;
    }
    const out = huffmanDecode(block, from, from + length, this.scratch, scratchAt);
    if (out < 0) return false;
    this.stringBuffer = this.scratch;
    this.stringStart = scratchAt;
    this.stringEnd = out;
    return true;
  }

  private insert(name: Buffer, value: Buffer): void {
    this.generation++;
    const entry = name.length + value.length + ENTRY_OVERHEAD;
    if (entry > this.maxSize) {
      // An entry larger than the table empties it and is not added (RFC 7541 section 4.4).
      this.evictTo(0);
      return;
    }
    this.evictTo(this.maxSize - entry);
    if (this.count === this.names.length) {
      // Grow the ring (at most maxSize / 32 entries), oldest first.
      const names: Buffer[] = [];
      const values: Buffer[] = [];
      for (let d = this.count - 1; d >= 0; d--) {
        const slot = (this.head - d + this.names.length) % this.names.length;
        names.push(this.names[slot] as Buffer);
        values.push(this.values[slot] as Buffer);
      }
      this.names = names;
      this.values = values;
      this.head = this.count - 1;
      this.names.length = Math.max(8, this.count * 2);
      this.values.length = this.names.length;
    }
    this.head = (this.head + 1) % this.names.length;
    this.names[this.head] = name;
    this.values[this.head] = value;
    this.count++;
    this.size += entry;
  }

  private evictTo(limit: number): void {
    while (this.size > limit && this.count > 0) {
      const oldest = (this.head - this.count + 1 + this.names.length) % this.names.length;
      this.size -=
        (this.names[oldest] as Buffer).length + (this.values[oldest] as Buffer).length + ENTRY_OVERHEAD;
      this.count--;
    }
  }

  /** The dynamic table's entries, newest first (for tests). */
  tableEntries(): [string, string][] {
    const entries: [string, string][] = [];
    for (let d = 0; d < this.count; d++) {
      const slot = (this.head - d + this.names.length) % this.names.length;
      entries.push([
        (this.names[slot] as Buffer).toString('latin1'),
        (this.values[slot] as Buffer).toString('latin1'),
      ]);
    }
    return entries;
  }
}

/** One request header field, name lower-case. */
export type HeaderField = readonly [name: string, value: string];

function writeInteger(out: number[], prefix: number, prefixBits: number, value: number): void {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out.push(prefix | value);
    return;
  }
  out.push(prefix | max);
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
}

function writeString(out: number[], value: string): void {
  const bytes = Buffer.from(value, 'latin1');
  const huffman = huffmanLength(bytes);
  if (huffman < bytes.length) {
    writeInteger(out, 0x80, 7, huffman);
    const encoded = new Uint8Array(huffman);
    huffmanEncode(bytes, encoded, 0);
    for (const byte of encoded) out.push(byte);
  } else {
    writeInteger(out, 0, 7, bytes.length);
    for (const byte of bytes) out.push(byte);
  }
}

/**
 * Encodes request header blocks for one connection. A field first seen is sent as a literal
 * with incremental indexing while the peer's table has room (never evicting, so every index
 * stays valid), and as an indexed field afterwards: after the first request, a request's block
 * is one byte per field. Blocks are built once, when a connection starts, not per request.
 */
export class HpackEncoder {
  /** Inserted fields, key `name\0value` → insertion ordinal. */
  private readonly inserted = new Map<string, number>();
  private insertions = 0;
  private size = 0;

  /** `tableSize`: the peer's SETTINGS_HEADER_TABLE_SIZE (4096 until it says otherwise). */
  constructor(private readonly tableSize = 4096) {}

  encode(fields: readonly HeaderField[]): Buffer {
    const out: number[] = [];
    for (const [name, value] of fields) {
      const key = `${name}\0${value}`;
      const ordinal = this.inserted.get(key);
      if (ordinal !== undefined) {
        // Newest entry is index 62; entries are never evicted, so the index follows from the order.
        writeInteger(out, 0x80, 7, STATIC_COUNT + this.insertions - ordinal);
        continue;
      }
      const exact = STATIC.findIndex(([n, v]) => n === name && v === value);
      if (exact >= 0) {
        writeInteger(out, 0x80, 7, exact + 1);
        continue;
      }
      const nameIndex = STATIC.findIndex(([n]) => n === name) + 1;
      const entry = name.length + value.length + ENTRY_OVERHEAD;
      const indexing = this.size + entry <= this.tableSize;
      if (indexing) {
        this.inserted.set(key, this.insertions);
        this.insertions++;
        this.size += entry;
      }
      writeInteger(out, indexing ? 0x40 : 0x00, indexing ? 6 : 4, nameIndex);
      if (nameIndex === 0) writeString(out, name);
      writeString(out, value);
    }
    return Buffer.from(out);
  }
}
