import { HotpathMcError } from './errors.js';

/** One VALUE block of a get/gets/gat reply. */
export interface TextValue {
  key: string;
  flags: number;
  value: Buffer;
  /** Present for gets/gats. */
  cas?: bigint;
}

export type TextStatus =
  | 'STORED'
  | 'NOT_STORED'
  | 'EXISTS'
  | 'NOT_FOUND'
  | 'DELETED'
  | 'TOUCHED'
  | 'OK'
  | 'RESET';

/** A complete reply of the text (or meta) protocol. */
export type TextReply =
  /** VALUE blocks then END (a miss is an empty list; so is a stats reply with no lines). */
  | { type: 'values'; values: TextValue[] }
  | { type: 'status'; status: TextStatus }
  /** incr/decr result */
  | { type: 'number'; value: bigint }
  | { type: 'version'; version: string }
  | { type: 'stats'; stats: Record<string, string> }
  | { type: 'error'; kind: 'ERROR' | 'CLIENT_ERROR' | 'SERVER_ERROR'; message: string }
  /** meta replies: HD, VA (with value), EN, NF, NS, EX, MN, ME */
  | { type: 'meta'; code: string; flags: string[]; value?: Buffer };

const STATUSES = new Set<string>([
  'STORED',
  'NOT_STORED',
  'EXISTS',
  'NOT_FOUND',
  'DELETED',
  'TOUCHED',
  'OK',
  'RESET',
]);
const META_CODES = new Set<string>(['HD', 'EN', 'NF', 'NS', 'EX', 'MN', 'ME']);

/**
 * The one-line replies every reply parser of this package shares (text and meta mode):
 * a status word, `VERSION <v>`, `ERROR`, `CLIENT_ERROR <msg>`, `SERVER_ERROR <msg>`.
 * Undefined for any other line.
 */
export function parseStatusLine(text: string): TextReply | undefined {
  if (STATUSES.has(text)) return { type: 'status', status: text as TextStatus };
  if (text.startsWith('VERSION ')) return { type: 'version', version: text.slice(8) };
  if (text === 'ERROR' || text.startsWith('ERROR '))
    return { type: 'error', kind: 'ERROR', message: text.slice(6) };
  if (text.startsWith('CLIENT_ERROR') || text.startsWith('SERVER_ERROR')) {
    return {
      type: 'error',
      kind: text.slice(0, 12) as 'CLIENT_ERROR' | 'SERVER_ERROR',
      message: text.slice(13),
    };
  }
  return undefined;
}

/** The first 80 bytes of a reply line, each byte outside printable ASCII as `\xHH`. */
function quotedLine(buf: Buffer, start: number, end: number): string {
  const shown = buf.toString('latin1', start, Math.min(end, start + 80));
  const escaped = shown.replace(/[^\x20-\x7e]|["\\]/g, (c) =>
    c === '"' || c === '\\' ? `\\${c}` : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
  return `"${escaped}"${end - start > 80 ? `… (${end - start} bytes)` : ''}`;
}

/** HP_MC_PROTOCOL for a reply line no parser expects (the first 80 bytes of it, quoted). */
export function unexpectedLine(buf: Buffer, start: number, end: number): HotpathMcError {
  return new HotpathMcError('HP_MC_PROTOCOL', `unexpected reply line ${quotedLine(buf, start, end)}`);
}

/** Adds one `STAT <name> <value>` line to a stats map. */
export function addStatLine(stats: Record<string, string>, text: string): void {
  const space = text.indexOf(' ', 5);
  if (space === -1) stats[text.slice(5)] = '';
  else stats[text.slice(5, space)] = text.slice(space + 1);
}

/** An unsigned decimal number (flags, cas). */
const DIGITS = /^\d+$/;

export interface TextReplyParserOptions {
  onReply?: (reply: TextReply) => void;
  /** A reply line longer than this is a protocol error. Default 64 KiB (as the meta parser). */
  maxLineBytes?: number;
  /** A `VALUE` or `VA` data block larger than this is a protocol error. Default 1 GiB (memcached's `-I` ceiling). */
  maxValueBytes?: number;
}

/** A reply whose data block is still to be read: a `VALUE` item or a `VA` meta reply. */
type WithData =
  | { kind: 'value'; item: TextValue; size: number }
  | { kind: 'meta'; code: string; flags: string[]; size: number };

/**
 * Streaming parser of server replies. Feed it chunks as they arrive (any fragmentation,
 * any number of pipelined replies per chunk); each complete reply is returned by push()
 * and, when given, passed to onReply. Incomplete bytes are kept for the next chunk: a line's
 * parts until its newline arrives, a data block's parts until it is whole, each joined once
 * (never the whole buffer again per chunk). Bytes that are not protocol — an unknown line, a
 * line over `maxLineBytes` (with or without its newline), a data block over `maxValueBytes` or
 * not followed by CRLF — throw HP_MC_PROTOCOL (the connection should be dropped).
 */
export class TextReplyParser {
  /** The start of a line whose newline has not arrived, and its length. */
  private lineParts: Buffer[] = [];
  private lineLength = 0;
  /** A reply whose data block is arriving, and the parts of the block (its CRLF included) so far. */
  private waiting: WithData | undefined;
  private dataParts: Buffer[] = [];
  private dataLength = 0;
  private values: TextValue[] = [];
  private stats: Record<string, string> | undefined;
  private readonly onReply: ((reply: TextReply) => void) | undefined;
  private readonly maxLineBytes: number;
  private readonly maxValueBytes: number;
  /** Replies completed so far (counted, for load generators). */
  replies = 0;

  constructor(options: TextReplyParserOptions = {}) {
    this.onReply = options.onReply;
    this.maxLineBytes = options.maxLineBytes ?? 64 * 1024;
    this.maxValueBytes = options.maxValueBytes ?? 1024 * 1024 * 1024;
  }

  /** Bytes buffered waiting for the rest of a reply. */
  get buffered(): number {
    return this.lineLength + this.dataLength;
  }

  push(chunk: Buffer): TextReply[] {
    const out: TextReply[] = [];
    let pos = 0;
    if (this.waiting !== undefined) {
      pos = this.continueData(this.waiting, chunk, 0, out);
      if (pos < 0) return out;
    } else if (this.lineLength > 0) {
      // Only the new chunk is searched for the newline; the line is joined once it is whole.
      const nl = chunk.indexOf(10);
      if (nl === -1) {
        this.keepLine(chunk, 0);
        return out;
      }
      this.checkLineLength(this.lineLength + nl);
      const line = Buffer.concat([...this.lineParts, chunk.subarray(0, nl + 1)]);
      this.lineParts = [];
      this.lineLength = 0;
      pos = this.afterLine(line, 0, line.length - 1, chunk, nl + 1, out);
      if (pos < 0) return out;
    }
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      if (nl === -1) {
        this.keepLine(chunk, pos);
        break;
      }
      this.checkLineLength(nl - pos);
      pos = this.afterLine(chunk, pos, nl, chunk, nl + 1, out);
      if (pos < 0) break;
    }
    return out;
  }

  /** Keeps the start of a line (chunk from `pos`) for the next chunk, within maxLineBytes. */
  private keepLine(chunk: Buffer, pos: number): void {
    this.checkLineLength(this.lineLength + chunk.length - pos, true);
    this.lineParts.push(chunk.subarray(pos));
    this.lineLength += chunk.length - pos;
  }

  /** Refuses a line (so far, when `partial`) longer than maxLineBytes. */
  private checkLineLength(length: number, partial = false): void {
    if (length > this.maxLineBytes)
      throw new HotpathMcError(
        'HP_MC_PROTOCOL',
        `reply line longer than ${this.maxLineBytes} bytes (maxLineBytes): ${length} bytes${partial ? ' without a newline' : ''}`,
      );
  }

  /**
   * Handles the line `line[start, nl)` (nl at its newline), then reads a data block it announces
   * from `rest` at `next`. Returns where `rest` continues, or -1 when the block is incomplete.
   */
  private afterLine(
    line: Buffer,
    start: number,
    nl: number,
    rest: Buffer,
    next: number,
    out: TextReply[],
  ): number {
    const end = nl > start && line[nl - 1] === 13 ? nl - 1 : nl;
    const data = this.line(line, start, end, out);
    if (data === undefined) return next;
    const need = data.size + 2;
    if (next + need <= rest.length) {
      this.complete(data, rest.subarray(next, next + need), out);
      return next + need;
    }
    this.waiting = data;
    return this.continueData(data, rest, next, out);
  }

  /** Adds `chunk` from `pos` to the waiting data block; returns where the chunk's rest starts, or -1. */
  private continueData(data: WithData, chunk: Buffer, pos: number, out: TextReply[]): number {
    const need = data.size + 2 - this.dataLength;
    if (chunk.length - pos < need) {
      this.dataParts.push(chunk.subarray(pos));
      this.dataLength += chunk.length - pos;
      return -1;
    }
    this.dataParts.push(chunk.subarray(pos, pos + need));
    const block = Buffer.concat(this.dataParts, data.size + 2);
    this.dataParts = [];
    this.dataLength = 0;
    this.waiting = undefined;
    this.complete(data, block, out);
    return pos + need;
  }

  /** A whole data block (`size` bytes, then CRLF): the item, or the VA reply, is done. */
  private complete(data: WithData, block: Buffer, out: TextReply[]): void {
    if (block[data.size] !== 13 || block[data.size + 1] !== 10)
      throw new HotpathMcError(
        'HP_MC_PROTOCOL',
        `a data block of ${data.size} bytes is not followed by CRLF (got ${quotedLine(block, data.size, data.size + 2)})`,
      );
    const value = Buffer.allocUnsafe(data.size);
    block.copy(value, 0, 0, data.size);
    if (data.kind === 'value') {
      data.item.value = value;
      this.values.push(data.item);
    } else this.emit({ type: 'meta', code: data.code, flags: data.flags, value }, out);
  }

  private emit(reply: TextReply, out: TextReply[]): void {
    this.replies++;
    out.push(reply);
    this.onReply?.(reply);
  }

  /** A data block's size from its header line, within maxValueBytes. */
  private size(text: string | undefined, buf: Buffer, start: number, end: number): number {
    const size = Number(text);
    if (text === undefined || !DIGITS.test(text) || !Number.isSafeInteger(size))
      throw this.bad(buf, start, end);
    if (size > this.maxValueBytes)
      throw new HotpathMcError(
        'HP_MC_PROTOCOL',
        `a data block of ${text.length > 20 ? `${text.slice(0, 20)}…` : text} bytes is larger than ${this.maxValueBytes} bytes (maxValueBytes), in reply line ${quotedLine(buf, start, end)}`,
      );
    return size;
  }

  /** Handles one line; returns the reply whose data block must be read next, if it announces one. */
  private line(buf: Buffer, start: number, end: number, out: TextReply[]): WithData | undefined {
    const c0 = buf[start];
    if (c0 === 86 && buf[start + 1] === 65 && buf[start + 2] === 76) {
      // VALUE <key> <flags> <bytes> [<cas>]
      const [, key, flags, sizeText, cas] = buf.toString('latin1', start, end).split(' ');
      if (
        key === undefined ||
        flags === undefined ||
        !DIGITS.test(flags) ||
        (cas !== undefined && !DIGITS.test(cas))
      ) {
        throw this.bad(buf, start, end);
      }
      const size = this.size(sizeText, buf, start, end);
      const item: TextValue = { key, flags: Number(flags), value: EMPTY };
      if (cas !== undefined) item.cas = BigInt(cas);
      return { kind: 'value', item, size };
    }
    const text = buf.toString('latin1', start, end);
    if (text === 'END') {
      if (this.stats !== undefined) {
        const stats = this.stats;
        this.stats = undefined;
        this.emit({ type: 'stats', stats }, out);
      } else {
        const values = this.values;
        this.values = [];
        this.emit({ type: 'values', values }, out);
      }
      return undefined;
    }
    const simple = parseStatusLine(text);
    if (simple !== undefined) {
      if (simple.type === 'error') this.values = [];
      this.emit(simple, out);
      return undefined;
    }
    if (c0 !== undefined && c0 >= 48 && c0 <= 57) {
      if (!/^\d+\s*$/.test(text)) throw this.bad(buf, start, end);
      this.emit({ type: 'number', value: BigInt(text.trimEnd()) }, out);
      return undefined;
    }
    if (text.startsWith('STAT ')) {
      this.stats ??= {};
      addStatLine(this.stats, text);
      return undefined;
    }
    const code = text.slice(0, 2);
    if (code === 'VA') {
      const parts = text.split(' ');
      const size = this.size(parts[1], buf, start, end);
      return { kind: 'meta', code, flags: parts.slice(2), size };
    }
    if (META_CODES.has(code) && (text.length === 2 || text[2] === ' ')) {
      this.emit({ type: 'meta', code, flags: text.length > 3 ? text.slice(3).split(' ') : [] }, out);
      return undefined;
    }
    throw this.bad(buf, start, end);
  }

  private bad(buf: Buffer, start: number, end: number): HotpathMcError {
    return unexpectedLine(buf, start, end);
  }
}

const EMPTY = Buffer.alloc(0);
