/**
 * HTTP/2 framing (RFC 9113 section 4): a streaming frame reader on Buffers and the writers of
 * the frames a client sends. The reader hands over each complete frame once: DATA frames as
 * their header only (their payload is counted, never kept), every other frame with its payload
 * contiguous (in the chunk itself when the whole frame is there, else copied into one buffer
 * per connection, bounded by the frame size limit).
 */

export const FRAME_DATA = 0;
export const FRAME_HEADERS = 1;
export const FRAME_PRIORITY = 2;
export const FRAME_RST_STREAM = 3;
export const FRAME_SETTINGS = 4;
export const FRAME_PUSH_PROMISE = 5;
export const FRAME_PING = 6;
export const FRAME_GOAWAY = 7;
export const FRAME_WINDOW_UPDATE = 8;
export const FRAME_CONTINUATION = 9;

export const FLAG_END_STREAM = 0x1;
export const FLAG_ACK = 0x1;
export const FLAG_END_HEADERS = 0x4;
export const FLAG_PADDED = 0x8;
export const FLAG_PRIORITY = 0x20;

export const SETTINGS_HEADER_TABLE_SIZE = 1;
export const SETTINGS_ENABLE_PUSH = 2;
export const SETTINGS_MAX_CONCURRENT_STREAMS = 3;
export const SETTINGS_INITIAL_WINDOW_SIZE = 4;
export const SETTINGS_MAX_FRAME_SIZE = 5;
export const SETTINGS_MAX_HEADER_LIST_SIZE = 6;

/** Error codes (RFC 9113 section 7), by number. */
export const H2_ERROR_NAMES = [
  'NO_ERROR',
  'PROTOCOL_ERROR',
  'INTERNAL_ERROR',
  'FLOW_CONTROL_ERROR',
  'SETTINGS_TIMEOUT',
  'STREAM_CLOSED',
  'FRAME_SIZE_ERROR',
  'REFUSED_STREAM',
  'CANCEL',
  'COMPRESSION_ERROR',
  'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY',
  'HTTP_1_1_REQUIRED',
] as const;
export const H2_NO_ERROR = 0;
export const H2_PROTOCOL_ERROR = 1;
export const H2_FLOW_CONTROL_ERROR = 3;
export const H2_FRAME_SIZE_ERROR = 6;
export const H2_REFUSED_STREAM = 7;
export const H2_CANCEL = 8;
export const H2_COMPRESSION_ERROR = 9;
export const H2_ENHANCE_YOUR_CALM = 11;

/** "PROTOCOL_ERROR (1)", or "error 0x… " for a code the RFC does not name. */
export function h2ErrorName(code: number): string {
  const name = H2_ERROR_NAMES[code];
  return name === undefined ? `error 0x${code.toString(16)}` : `${name} (${code})`;
}

/**
 * Whether a frame's stream id, length and flags break RFC 9113's rules for its type, checked
 * before its payload is read: the problem in a few words, or null. The code to end the
 * connection with is FRAME_SIZE_ERROR for a wrong length, else PROTOCOL_ERROR (`sizeProblem`).
 */
export function frameProblem(type: number, flags: number, streamId: number, length: number): string | null {
  switch (type) {
    case FRAME_DATA:
    case FRAME_HEADERS:
      return streamId === 0 ? `${type === FRAME_DATA ? 'DATA' : 'HEADERS'} on stream 0` : null;
    case FRAME_SETTINGS:
      if (streamId !== 0) return `SETTINGS on stream ${streamId}`;
      if ((flags & FLAG_ACK) !== 0 ? length !== 0 : length % 6 !== 0)
        return `a SETTINGS frame of ${length} bytes`;
      return null;
    case FRAME_PING:
      if (streamId !== 0) return `PING on stream ${streamId}`;
      return length === 8 ? null : `a PING frame of ${length} bytes`;
    case FRAME_RST_STREAM:
      if (streamId === 0) return 'RST_STREAM on stream 0';
      return length === 4 ? null : `a RST_STREAM frame of ${length} bytes`;
    case FRAME_GOAWAY:
      if (streamId !== 0) return `GOAWAY on stream ${streamId}`;
      return length >= 8 ? null : `a GOAWAY frame of ${length} bytes`;
    case FRAME_WINDOW_UPDATE:
      return length === 4 ? null : `a WINDOW_UPDATE frame of ${length} bytes`;
    case FRAME_PUSH_PROMISE:
      return 'PUSH_PROMISE after SETTINGS_ENABLE_PUSH 0';
    default:
      return null;
  }
}

/** A frameProblem about a length (FRAME_SIZE_ERROR rather than PROTOCOL_ERROR). */
export function sizeProblem(problem: string): boolean {
  return problem.endsWith(' bytes');
}

/** What the reader reports to; one object per connection (no per-frame closures). */
export interface FrameSink {
  /** A complete DATA frame: `length` payload bytes (padding included) were received. */
  onDataFrame(streamId: number, flags: number, length: number): void;
  /** A complete frame of any other type; `payload[start..end)` is valid during the call only. */
  onFrame(type: number, flags: number, streamId: number, payload: Buffer, start: number, end: number): void;
  /** A frame larger than the limit: the connection must end (FRAME_SIZE_ERROR). */
  onFrameTooLarge(type: number, length: number): void;
}

const HEADER_SIZE = 9;

/** Reads frames from a byte stream cut anywhere. */
export class FrameReader {
  /** Frame payload limit (our SETTINGS_MAX_FRAME_SIZE). */
  maxFrameSize = 16_384;
  /** Stop reading the current chunk (the connection is being dropped). */
  halted = false;
  private readonly header = Buffer.alloc(HEADER_SIZE);
  private headerHave = 0;
  /** The frame being read: -1 when a header is awaited. */
  private type = -1;
  private flags = 0;
  private streamId = 0;
  private length = 0;
  /** Payload bytes of the current frame read so far. */
  private have = 0;
  private payload: Buffer;

  constructor(private readonly sink: FrameSink) {
    this.payload = Buffer.allocUnsafe(this.maxFrameSize);
  }

  reset(): void {
    this.headerHave = 0;
    this.type = -1;
    this.have = 0;
    this.halted = false;
  }

  execute(chunk: Buffer, length: number): void {
    let pos = 0;
    while (pos < length && !this.halted) {
      if (this.type < 0) {
        if (this.headerHave === 0 && length - pos >= HEADER_SIZE) {
          this.begin(chunk, pos);
          pos += HEADER_SIZE;
        } else {
          const take = Math.min(HEADER_SIZE - this.headerHave, length - pos);
          chunk.copy(this.header, this.headerHave, pos, pos + take);
          this.headerHave += take;
          pos += take;
          if (this.headerHave < HEADER_SIZE) return;
          this.headerHave = 0;
          this.begin(this.header, 0);
        }
        if (this.halted) return;
        if (this.length === 0) {
          this.complete(this.payload, 0);
          continue;
        }
      }
      const want = this.length - this.have;
      const available = length - pos;
      if (this.type === FRAME_DATA) {
        const take = Math.min(want, available);
        this.have += take;
        pos += take;
        if (this.have === this.length) this.complete(this.payload, 0);
        continue;
      }
      if (this.have === 0 && available >= want) {
        // The whole payload is in this chunk: no copy.
        pos += want;
        this.complete(chunk, pos - want);
        continue;
      }
      const take = Math.min(want, available);
      chunk.copy(this.payload, this.have, pos, pos + take);
      this.have += take;
      pos += take;
      if (this.have === this.length) this.complete(this.payload, 0);
    }
  }

  private begin(bytes: Buffer, at: number): void {
    this.length =
      ((bytes[at] as number) << 16) | ((bytes[at + 1] as number) << 8) | (bytes[at + 2] as number);
    this.type = bytes[at + 3] as number;
    this.flags = bytes[at + 4] as number;
    this.streamId = bytes.readUInt32BE(at + 5) & 0x7fffffff;
    this.have = 0;
    if (this.length > this.maxFrameSize) {
      this.halted = true;
      this.sink.onFrameTooLarge(this.type, this.length);
      return;
    }
    if (this.payload.length < this.length) this.payload = Buffer.allocUnsafe(this.maxFrameSize);
  }

  private complete(payload: Buffer, start: number): void {
    const type = this.type;
    this.type = -1;
    if (type === FRAME_DATA) this.sink.onDataFrame(this.streamId, this.flags, this.length);
    else this.sink.onFrame(type, this.flags, this.streamId, payload, start, start + this.length);
  }
}

/** The client connection preface (RFC 9113 section 3.4). */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Writes a frame header at `at`; returns the offset after it. */
export function writeFrameHeader(
  out: Buffer,
  at: number,
  length: number,
  type: number,
  flags: number,
  streamId: number,
): number {
  out[at] = (length >>> 16) & 0xff;
  out[at + 1] = (length >>> 8) & 0xff;
  out[at + 2] = length & 0xff;
  out[at + 3] = type;
  out[at + 4] = flags;
  out.writeUInt32BE(streamId & 0x7fffffff, at + 5);
  return at + HEADER_SIZE;
}

/** A SETTINGS frame with the given (identifier, value) pairs. */
export function settingsFrame(settings: readonly (readonly [number, number])[]): Buffer {
  const out = Buffer.alloc(HEADER_SIZE + settings.length * 6);
  let at = writeFrameHeader(out, 0, settings.length * 6, FRAME_SETTINGS, 0, 0);
  for (const [id, value] of settings) {
    out.writeUInt16BE(id, at);
    out.writeUInt32BE(value, at + 2);
    at += 6;
  }
  return out;
}

export const FRAME_HEADER_SIZE = HEADER_SIZE;
