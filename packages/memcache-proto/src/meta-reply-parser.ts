import { parseI32, parseU32, parseU64 } from './ascii-numbers.js';
import { byteAt } from './checked-index.js';
import { HotpathMcError } from './errors.js';
import { addStatLine, parseStatusLine, type TextReply, unexpectedLine } from './text-reply-parser.js';

/** Meta return codes: value, header (success), miss, not found, not stored, exists, no-op, debug. */
export type MetaCode = 'VA' | 'HD' | 'EN' | 'NF' | 'NS' | 'EX' | 'MN' | 'ME';

/**
 * One meta-protocol reply, its return flags read into fields (a field is undefined when the
 * request did not ask for it). Numbers are read straight from the bytes; the value stays a
 * Buffer.
 */
export interface MetaReply {
  type: 'meta-reply';
  code: MetaCode;
  /** The data block of a `VA` reply. */
  value: Buffer | undefined;
  /** `f`: client flags. */
  flags: number | undefined;
  /** `c`: cas unique. */
  cas: bigint | undefined;
  /** `t`: remaining TTL in seconds, -1 for none. */
  ttl: number | undefined;
  /** `s`: item size. */
  size: number | undefined;
  /** `O`: the opaque token as an unsigned 32-bit decimal; -1 when it was not one. */
  opaque: number | undefined;
  /** `k`: the key as sent (base64 when `base64Key`). */
  key: string | undefined;
  /** `b`: the returned key is base64. */
  base64Key: boolean;
  /** `W`: this client won the right to recache. */
  win: boolean;
  /** `X`: the item is stale. */
  stale: boolean;
  /** `Z`: a win was already sent to another client. */
  winSent: boolean;
}

/** What the meta parser emits: meta replies, plus the text replies a meta connection still sees
 * (errors, and `OK` / `VERSION` / `STAT … END` for flush_all, version and stats). */
export type MetaParserReply = MetaReply | TextReply;

export interface MetaReplyParserOptions {
  onReply?: (reply: MetaParserReply) => void;
  /** A reply line longer than this without a newline is a protocol error. Default 64 KiB. */
  maxLineBytes?: number;
  /** A `VA` data block larger than this is a protocol error. Default 1 GiB (memcached's `-I` ceiling). */
  maxValueBytes?: number;
}

const VA = 0x5641;
const CODES = new Map<number, MetaCode>([
  [VA, 'VA'],
  [0x4844, 'HD'],
  [0x454e, 'EN'],
  [0x4e46, 'NF'],
  [0x4e53, 'NS'],
  [0x4558, 'EX'],
  [0x4d4e, 'MN'],
  [0x4d45, 'ME'],
]);

/**
 * Streaming parser of meta-protocol replies, on Buffers. Feed it chunks as they arrive (any
 * fragmentation, any number of pipelined replies per chunk); each complete reply is returned
 * by push() and, when given, passed to onReply. A value split over many chunks is gathered
 * once, without re-copying what came before. Bytes that are not protocol (an unknown line, a
 * bad number, a data block without its CRLF, an over-long line) throw HP_MC_PROTOCOL: the
 * connection should be dropped.
 */
export class MetaReplyParser {
  private pending: Buffer | undefined;
  /** A `VA` reply whose data block is still arriving, its size, and the parts so far. */
  private waiting: MetaReply | undefined;
  private waitingSize = 0;
  private parts: Buffer[] = [];
  private partsLength = 0;
  private stats: Record<string, string> | undefined;
  private readonly onReply: ((reply: MetaParserReply) => void) | undefined;
  private readonly maxLineBytes: number;
  private readonly maxValueBytes: number;
  /** Replies completed so far. */
  replies = 0;

  constructor(options: MetaReplyParserOptions = {}) {
    this.onReply = options.onReply;
    this.maxLineBytes = options.maxLineBytes ?? 64 * 1024;
    this.maxValueBytes = options.maxValueBytes ?? 1024 * 1024 * 1024;
  }

  /** Bytes buffered waiting for the rest of a reply. */
  get buffered(): number {
    return (this.pending?.length ?? 0) + this.partsLength;
  }

  push(chunk: Buffer): MetaParserReply[] {
    const out: MetaParserReply[] = [];
    let buf = chunk;
    let pos = 0;
    if (this.waiting !== undefined) {
      pos = this.continueValue(this.waiting, chunk, out);
      if (pos < 0) return out;
    } else if (this.pending !== undefined) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    while (pos < buf.length) {
      const nl = buf.indexOf(10, pos);
      if (nl === -1) {
        if (buf.length - pos > this.maxLineBytes) {
          throw new HotpathMcError(
            'HP_MC_PROTOCOL',
            `reply line longer than ${this.maxLineBytes} bytes without a newline`,
          );
        }
        this.pending = buf.subarray(pos);
        break;
      }
      const end = nl > pos && buf[nl - 1] === 13 ? nl - 1 : nl;
      const reply = this.line(buf, pos, end, out);
      pos = nl + 1;
      if (reply === undefined) continue;
      const size = this.waitingSize;
      if (pos + size + 2 <= buf.length) {
        const value = Buffer.allocUnsafe(size);
        buf.copy(value, 0, pos, pos + size);
        checkDataEnd(buf, pos + size);
        reply.value = value;
        pos += size + 2;
        this.emit(reply, out);
      } else {
        this.waiting = reply;
        this.parts.push(buf.subarray(pos));
        this.partsLength = buf.length - pos;
        break;
      }
    }
    return out;
  }

  /**
   * Adds a chunk to the data block of `reply` (the VA reply waiting for it); returns where the
   * chunk's rest starts, or -1.
   */
  private continueValue(reply: MetaReply, chunk: Buffer, out: MetaParserReply[]): number {
    const need = this.waitingSize + 2 - this.partsLength;
    if (chunk.length < need) {
      this.parts.push(chunk);
      this.partsLength += chunk.length;
      return -1;
    }
    this.parts.push(chunk.subarray(0, need));
    const data = Buffer.concat(this.parts, this.waitingSize + 2);
    checkDataEnd(data, this.waitingSize);
    reply.value = data.subarray(0, this.waitingSize);
    this.waiting = undefined;
    this.parts = [];
    this.partsLength = 0;
    this.emit(reply, out);
    return need;
  }

  private emit(reply: MetaParserReply, out: MetaParserReply[]): void {
    this.replies++;
    out.push(reply);
    this.onReply?.(reply);
  }

  /**
   * Handles one line. Returns a `VA` reply whose data block must be read next (its size in
   * waitingSize); emits every other reply itself.
   */
  private line(buf: Buffer, start: number, end: number, out: MetaParserReply[]): MetaReply | undefined {
    const length = end - start;
    const code =
      length >= 2 && (length === 2 || buf[start + 2] === 32) ? CODES.get(buf.readUInt16BE(start)) : undefined;
    if (code !== undefined) {
      const reply: MetaReply = {
        type: 'meta-reply',
        code,
        value: undefined,
        flags: undefined,
        cas: undefined,
        ttl: undefined,
        size: undefined,
        opaque: undefined,
        key: undefined,
        base64Key: false,
        win: false,
        stale: false,
        winSent: false,
      };
      let pos = start + 3;
      if (code === 'VA') {
        if (length < 4) throw unexpectedLine(buf, start, end);
        const sizeEnd = tokenEnd(buf, pos, end);
        const size = parseU32(buf, pos, sizeEnd);
        if (size < 0 || size > this.maxValueBytes) throw unexpectedLine(buf, start, end);
        this.waitingSize = size;
        pos = sizeEnd + 1;
      }
      // ME's debug text (`<key> k=v…`) is not flags: keep the code only.
      if (code !== 'ME') readFlags(reply, buf, pos, end);
      if (code === 'VA') return reply;
      this.emit(reply, out);
      return undefined;
    }
    const text = buf.toString('latin1', start, end);
    if (text === 'END') {
      const stats = this.stats ?? {};
      this.stats = undefined;
      this.emit({ type: 'stats', stats }, out);
      return undefined;
    }
    if (text.startsWith('STAT ')) {
      this.stats ??= {};
      addStatLine(this.stats, text);
      return undefined;
    }
    const simple = parseStatusLine(text);
    if (simple === undefined) throw unexpectedLine(buf, start, end);
    this.emit(simple, out);
    return undefined;
  }
}

/** Where the token starting at pos ends (a space or the line's end; never searches past it). */
function tokenEnd(buf: Buffer, pos: number, end: number): number {
  while (pos < end && buf[pos] !== 32) pos++;
  return pos;
}

function checkDataEnd(buf: Buffer, at: number): void {
  if (buf[at] !== 13 || buf[at + 1] !== 10) {
    throw new HotpathMcError('HP_MC_PROTOCOL', 'a VA data block is not followed by CRLF');
  }
}

/** Reads return flags (`<letter><token>` separated by spaces) into the reply's fields. */
function readFlags(reply: MetaReply, buf: Buffer, pos: number, end: number): void {
  while (pos < end) {
    const stop = tokenEnd(buf, pos, end);
    if (stop === pos) {
      pos++;
      continue;
    }
    const from = pos + 1;
    const letter = byteAt(buf, pos);
    switch (letter) {
      case 102 /* f */:
        {
          const flags = parseU32(buf, from, stop);
          if (flags < 0) throw badFlag(buf, pos, stop);
          reply.flags = flags;
          break;
        }
      case 99 /* c */:
        {
          const cas = parseU64(buf, from, stop);
          if (cas < 0n) throw badFlag(buf, pos, stop);
          reply.cas = cas;
          break;
        }
      case 116 /* t */:
        {
          const ttl = parseI32(buf, from, stop);
          if (Number.isNaN(ttl)) throw badFlag(buf, pos, stop);
          reply.ttl = ttl;
          break;
        }
      case 115 /* s */:
        {
          const size = parseU32(buf, from, stop);
          if (size < 0) throw badFlag(buf, pos, stop);
          reply.size = size;
          break;
        }
      case 79 /* O */:
        reply.opaque = parseU32(buf, from, stop);
        break;
      case 107 /* k */:
        reply.key = buf.toString('latin1', from, stop);
        break;
      case 98 /* b */:
        reply.base64Key = true;
        break;
      case 87 /* W */:
        reply.win = true;
        break;
      case 88 /* X */:
        reply.stale = true;
        break;
      case 90 /* Z */:
        reply.winSent = true;
        break;
      default:
        if (letter < 33 || letter > 126) throw badFlag(buf, pos, stop);
      // other flags (h, l, …) are not read
    }
    pos = stop + 1;
  }
}

function badFlag(buf: Buffer, start: number, end: number): HotpathMcError {
  return new HotpathMcError(
    'HP_MC_PROTOCOL',
    `bad meta reply flag ${JSON.stringify(buf.toString('latin1', start, Math.min(end, start + 40)))}`,
  );
}
