import { encodeGet, encodeSet } from '@hotpath/memcache-proto';
import type { MemcacheTarget } from './options.js';
import type { ResponseSink, WireParser } from './wire.js';

/**
 * memcache text protocol for the load loop: get/set requests serialised once with
 * @hotpath/memcache-proto's encoders, and a reply parser that only classifies replies
 * (no strings, no per-reply objects or value copies: it runs once per response in the hot
 * loop; memcache-proto's TextReplyParser, which returns full replies, is used where the
 * values matter, e.g. the preload). Replies map to status codes so they count like HTTP.
 */
export const MC_HIT = 200;
export const MC_STORED = 201;
export const MC_CLIENT_ERROR = 400;
export const MC_MISS = 404;
export const MC_NOT_STORED = 409;
export const MC_NOT_FOUND = 410;
export const MC_ERROR = 500;

const LABELS: Record<string, string> = {
  [MC_HIT]: 'hit',
  [MC_STORED]: 'stored',
  [MC_CLIENT_ERROR]: 'client_error',
  [MC_MISS]: 'miss',
  [MC_NOT_STORED]: 'not_stored',
  [MC_NOT_FOUND]: 'not_found',
  [MC_ERROR]: 'error',
};

/** Names of memcache replies in `statusCodes`. */
export function memcacheStatusLabel(code: string): string {
  return LABELS[code] ?? code;
}

/** Error replies (ERROR, CLIENT_ERROR, SERVER_ERROR) are what `non2xx` counts for memcache. */
export function isMemcacheFailure(code: number): boolean {
  return code === MC_ERROR || code === MC_CLIENT_ERROR;
}

/** Small deterministic PRNG (mulberry32) so a run's key sequence is reproducible. */
export function randomSource(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function memcacheKey(target: MemcacheTarget, index: number): string {
  return `${target.keyPrefix}${index}`;
}

/** The requests a memcache run cycles through: random keys, gets and sets as configured. */
export function memcacheRequests(target: MemcacheTarget): Buffer[] {
  const random = randomSource(0x5eed);
  const value = Buffer.alloc(target.valueSize, 'x');
  const count = Math.min(65_536, Math.max(1024, target.keySpace));
  const requests: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const key = memcacheKey(target, Math.floor(random() * target.keySpace));
    const set = target.operation === 'set' || (target.operation === 'mix' && random() < target.setRatio);
    requests.push(set ? encodeSet(key, value) : encodeGet(key));
  }
  return requests;
}

const VALUE = Buffer.from('VALUE ');
const END = Buffer.from('END');
const STORED = Buffer.from('STORED');
const NOT_STORED = Buffer.from('NOT_STORED');
const EXISTS = Buffer.from('EXISTS');
const NOT_FOUND = Buffer.from('NOT_FOUND');
const ERROR = Buffer.from('ERROR');
const SERVER_ERROR = Buffer.from('SERVER_ERROR');
const CLIENT_ERROR = Buffer.from('CLIENT_ERROR');

function startsWith(buf: Buffer, start: number, end: number, word: Buffer): boolean {
  return end - start >= word.length && buf.compare(word, 0, word.length, start, start + word.length) === 0;
}

const LINE = 0;
const DATA = 1;
const FAILED = 2;
const MAX_LINE = 8 * 1024;

/** Parses text-protocol replies to get and set: VALUE…END, END, STORED, NOT_STORED, errors. */
export class MemcacheReplyParser implements WireParser {
  private state = LINE;
  private pending: Buffer | null = null;
  private remaining = 0;
  private hit = false;
  noBody = false;
  halted = false;

  constructor(private readonly sink: ResponseSink) {}

  reset(): void {
    this.state = LINE;
    this.pending = null;
    this.remaining = 0;
    this.hit = false;
    this.halted = false;
  }

  get midResponse(): boolean {
    return this.state !== LINE || this.pending !== null || this.hit;
  }

  finishOnClose(): boolean {
    return false;
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
    while (pos < end && !this.halted) {
      if (this.state === DATA) {
        const take = Math.min(this.remaining, end - pos);
        this.remaining -= take;
        pos += take;
        if (this.remaining === 0) this.state = LINE;
        continue;
      }
      if (this.state === FAILED) return;
      const lf = buf.indexOf(10, pos);
      if (lf === -1 || lf >= end) {
        if (end - pos > MAX_LINE) this.fail('reply line over 8 KiB');
        else this.pending = Buffer.from(buf.subarray(pos, end));
        return;
      }
      const lineEnd = lf > pos && buf[lf - 1] === 13 ? lf - 1 : lf;
      this.line(buf, pos, lineEnd);
      pos = lf + 1;
    }
  }

  private fail(reason: string): void {
    this.state = FAILED;
    this.pending = null;
    this.sink.onParseError(reason);
  }

  private done(status: number): void {
    this.hit = false;
    this.sink.onResponse(status, false);
  }

  private line(buf: Buffer, start: number, end: number): void {
    const n = end - start;
    const first = buf[start];
    if (n === 0) {
      this.fail('empty reply line');
      return;
    }
    if (first === 86 /* V */ && startsWith(buf, start, end, VALUE)) {
      // VALUE <key> <flags> <bytes> [<cas>]
      let field = 0;
      let bytes = -1;
      let i = start + 6;
      while (i < end && field < 3) {
        while (i < end && buf[i] === 32) i++;
        if (field === 2) {
          bytes = 0;
          let digits = 0;
          for (let c = buf[i]; i < end && c !== undefined && c >= 48 && c <= 57; c = buf[++i]) {
            bytes = bytes * 10 + c - 48;
            digits++;
          }
          if (digits === 0 || digits > 10) bytes = -1;
        } else while (i < end && buf[i] !== 32) i++;
        field++;
      }
      if (bytes < 0) {
        this.fail('malformed VALUE line');
        return;
      }
      this.hit = true;
      this.remaining = bytes + 2;
      this.state = DATA;
      return;
    }
    if (n === 3 && startsWith(buf, start, end, END)) this.done(this.hit ? MC_HIT : MC_MISS);
    else if (n === 6 && startsWith(buf, start, end, STORED)) this.done(MC_STORED);
    else if (n === 10 && startsWith(buf, start, end, NOT_STORED)) this.done(MC_NOT_STORED);
    else if (n === 6 && startsWith(buf, start, end, EXISTS)) this.done(MC_NOT_STORED);
    else if (n === 9 && startsWith(buf, start, end, NOT_FOUND)) this.done(MC_NOT_FOUND);
    else if (n === 5 && startsWith(buf, start, end, ERROR)) this.done(MC_ERROR);
    else if (startsWith(buf, start, end, SERVER_ERROR)) this.done(MC_ERROR);
    else if (startsWith(buf, start, end, CLIENT_ERROR)) this.done(MC_CLIENT_ERROR);
    else this.fail('unexpected reply line');
  }
}
