// Counting RESP values, Redis's protocol (RESP2 and RESP3), in a byte stream without keeping them
// (bundled into probe.cjs with probe-downstream.ts). A client's writes are commands (arrays of
// bulk strings, or inline lines); the server's data are the replies, one per command, in order.
// A multiplexed client (ioredis, node-redis) has the commands of many requests in flight on one
// connection: counting the commands a write starts and the replies data completes lets each reply
// end its own command. Headers are read byte by byte; a bulk value's body is skipped by its length.

import type { StackGroup } from './probe-downstream-endpoints.js';
import type { CallSpan, RequestContext } from './probe-downstream-requests.js';

const LF = 10;
const CR = 13;

/** The first byte of each RESP type, by what follows it. */
const LENGTH_PREFIXED = new Set([0x24, 0x3d, 0x21]); // $ = ! : a length, then that many bytes
const AGGREGATE = new Set([0x2a, 0x7e, 0x3e]); // * ~ > : a count of values
const PAIRS = new Set([0x25, 0x7c]); // % | : a count of pairs
const SIMPLE = new Set([0x2b, 0x2d, 0x3a, 0x5f, 0x2c, 0x23, 0x28]); // + - : _ , # ( : one line
const PUSH = 0x3e; // > : out-of-band data (RESP3), no command's reply
const ATTRIBUTE = 0x7c; // | : precedes a reply, is none

export class RespCounter {
  /** Values still to read in each open aggregate, innermost last. */
  private readonly open: number[] = [];
  /** The top-level value's type byte (0: between values). */
  private top = 0;
  /** The header being read: its type byte (0: none), its number and sign; -1 for `inline`. */
  private type = 0;
  /** The header's rest is a count or a length (not a simple line's text): read as digits. */
  private digits = false;
  private number = 0;
  private negative = false;
  /** Bytes of a bulk body still to skip, its CRLF included. */
  private skip = 0;
  /** Top-level values started and completed by the last `feed`. */
  started = 0;
  completed = 0;

  /** Reads a chunk (a string as UTF-8, as a socket writes it); the counts are this chunk's. */
  feed(chunk: unknown): void {
    this.started = 0;
    this.completed = 0;
    let bytes: Uint8Array;
    if (chunk instanceof Uint8Array) bytes = chunk;
    else if (typeof chunk === 'string') bytes = Buffer.from(chunk, 'utf8');
    else return;
    let i = 0;
    const n = bytes.length;
    while (i < n) {
      if (this.skip > 0) {
        const take = Math.min(this.skip, n - i);
        this.skip -= take;
        i += take;
        if (this.skip === 0) this.valueDone();
        continue;
      }
      const byte = bytes[i] as number;
      i++;
      if (this.type === 0) {
        this.begin(byte);
        continue;
      }
      if (byte === LF) this.lineDone();
      else if (byte === CR) continue;
      else if (this.digits) {
        if (byte === 0x2d) this.negative = true;
        else if (byte >= 0x30 && byte <= 0x39) this.number = this.number * 10 + (byte - 0x30);
      } else {
        // a simple line's text (or an inline command's): on to its end
        const end = bytes.indexOf(LF, i);
        i = end < 0 ? n : end;
      }
    }
  }

  private begin(byte: number): void {
    if (this.open.length === 0) {
      this.top = byte;
      this.started++;
    }
    const known = LENGTH_PREFIXED.has(byte) || AGGREGATE.has(byte) || PAIRS.has(byte) || SIMPLE.has(byte);
    this.type = known ? byte : -1;
    this.digits = known && !SIMPLE.has(byte);
    this.number = 0;
    this.negative = false;
    if (!known && byte === LF) this.lineDone();
  }

  private lineDone(): void {
    const type = this.type;
    const count = this.negative ? -1 : this.number;
    this.type = 0;
    if (LENGTH_PREFIXED.has(type) && count >= 0) {
      this.skip = count + 2;
      return;
    }
    if ((AGGREGATE.has(type) || PAIRS.has(type)) && count > 0) {
      this.open.push(PAIRS.has(type) ? 2 * count : count);
      return;
    }
    this.valueDone();
  }

  /** A value ended: its aggregate has one fewer to read; a top-level one is a command or reply. */
  private valueDone(): void {
    while (this.open.length > 0) {
      const last = this.open.length - 1;
      const left = (this.open[last] as number) - 1;
      if (left > 0) {
        this.open[last] = left;
        return;
      }
      this.open.pop();
    }
    if (this.top !== PUSH && this.top !== ATTRIBUTE) this.completed++;
    this.top = 0;
  }
}

/** A call in flight: when it started, its last data, who issued it and for which request. */
export class Call implements CallSpan {
  answered = false;
  /** performance.now() at the call's first write and at its last data. */
  start = 0;
  last = 0;
  /** The window the call started in (0: none open). */
  window = 0;
  /** The stack that stands for the call (undefined: none, outside a window). */
  group: StackGroup | undefined = undefined;
  context: RequestContext | undefined = undefined;
}

/** A multiplexed connection's commands: counted in its writes, answered in order by its data. */
export class Commands {
  readonly out = new RespCounter();
  readonly in = new RespCounter();
  readonly queue: Call[] = [];
}

/** The most commands a connection holds unanswered (a subscriber's): the oldest beyond is dropped. */
export const MAX_OUTSTANDING = 4096;
