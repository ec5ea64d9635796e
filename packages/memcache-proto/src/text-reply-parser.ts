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

/** HP_MC_PROTOCOL for a reply line no parser expects (the first 80 bytes of it, quoted). */
export function unexpectedLine(buf: Buffer, start: number, end: number): HotpathMcError {
  return new HotpathMcError(
    'HP_MC_PROTOCOL',
    `unexpected reply line ${JSON.stringify(buf.toString('latin1', start, Math.min(end, start + 80)))}`,
  );
}

/** Adds one `STAT <name> <value>` line to a stats map. */
export function addStatLine(stats: Record<string, string>, text: string): void {
  const space = text.indexOf(' ', 5);
  if (space === -1) stats[text.slice(5)] = '';
  else stats[text.slice(5, space)] = text.slice(space + 1);
}

/**
 * Streaming parser of server replies. Feed it chunks as they arrive (any fragmentation,
 * any number of pipelined replies per chunk); each complete reply is returned by push()
 * and, when given, passed to onReply. Incomplete bytes are kept for the next chunk.
 * Bytes that are not protocol throw HP_MC_PROTOCOL (the connection should be dropped).
 */
/** An unsigned decimal number (flags, cas). */
const DIGITS = /^\d+$/;

export class TextReplyParser {
  private pending: Buffer | undefined;
  private values: TextValue[] = [];
  private stats: Record<string, string> | undefined;
  private readonly onReply: ((reply: TextReply) => void) | undefined;
  /** Replies completed so far (counted, for load generators). */
  replies = 0;

  constructor(options: { onReply?: (reply: TextReply) => void } = {}) {
    this.onReply = options.onReply;
  }

  /** Bytes buffered waiting for the rest of a reply. */
  get buffered(): number {
    return this.pending?.length ?? 0;
  }

  push(chunk: Buffer): TextReply[] {
    const buf = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    const out: TextReply[] = [];
    let pos = 0;
    for (;;) {
      const nl = buf.indexOf(10, pos);
      if (nl === -1) break;
      const lineEnd = nl > pos && buf[nl - 1] === 13 ? nl - 1 : nl;
      const next = this.line(buf, pos, lineEnd, nl + 1, out);
      if (next < 0) break;
      pos = next;
    }
    this.pending = pos < buf.length ? buf.subarray(pos) : undefined;
    return out;
  }

  private emit(reply: TextReply, out: TextReply[]): void {
    this.replies++;
    out.push(reply);
    this.onReply?.(reply);
  }

  /** Handles one line; returns the next position or -1 when a data block is incomplete. */
  private line(buf: Buffer, start: number, end: number, next: number, out: TextReply[]): number {
    const c0 = buf[start];
    if (c0 === 86 && buf[start + 1] === 65 && buf[start + 2] === 76) {
      // VALUE <key> <flags> <bytes> [<cas>]
      const [, key, flags, sizeText, cas] = buf.toString('latin1', start, end).split(' ');
      const size = Number(sizeText);
      if (
        key === undefined ||
        sizeText === undefined ||
        !Number.isInteger(size) ||
        size < 0 ||
        flags === undefined ||
        !DIGITS.test(flags) ||
        (cas !== undefined && !DIGITS.test(cas))
      ) {
        throw this.bad(buf, start, end);
      }
      const dataEnd = next + size + 2;
      if (dataEnd > buf.length) return -1;
      const value = Buffer.allocUnsafe(size);
      buf.copy(value, 0, next, next + size);
      const item: TextValue = { key, flags: Number(flags), value };
      if (cas !== undefined) item.cas = BigInt(cas);
      this.values.push(item);
      return dataEnd;
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
      return next;
    }
    const simple = parseStatusLine(text);
    if (simple !== undefined) {
      if (simple.type === 'error') this.values = [];
      this.emit(simple, out);
      return next;
    }
    if (c0 !== undefined && c0 >= 48 && c0 <= 57) {
      if (!/^\d+\s*$/.test(text)) throw this.bad(buf, start, end);
      this.emit({ type: 'number', value: BigInt(text.trimEnd()) }, out);
      return next;
    }
    if (text.startsWith('STAT ')) {
      this.stats ??= {};
      addStatLine(this.stats, text);
      return next;
    }
    const code = text.slice(0, 2);
    if (code === 'VA') {
      const parts = text.split(' ');
      const size = Number(parts[1]);
      if (!Number.isInteger(size) || size < 0) throw this.bad(buf, start, end);
      const dataEnd = next + size + 2;
      if (dataEnd > buf.length) return -1;
      const value = Buffer.allocUnsafe(size);
      buf.copy(value, 0, next, next + size);
      this.emit({ type: 'meta', code, flags: parts.slice(2), value }, out);
      return dataEnd;
    }
    if (META_CODES.has(code) && (text.length === 2 || text[2] === ' ')) {
      this.emit({ type: 'meta', code, flags: text.length > 3 ? text.slice(3).split(' ') : [] }, out);
      return next;
    }
    throw this.bad(buf, start, end);
  }

  private bad(buf: Buffer, start: number, end: number): HotpathMcError {
    return unexpectedLine(buf, start, end);
  }
}
