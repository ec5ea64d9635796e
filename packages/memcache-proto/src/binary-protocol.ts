import { DeltaResult, StoreMode, StoreResult } from './cache.js';
import { byteAt } from './checked-index.js';
import { AUTH_TOKEN_MAX_BYTES, KEY_MAX_LENGTH, SASL_MECH_MAX_BYTES } from './protocol-limits.js';
import type { Session } from './session.js';
import { NIL } from './slab-allocator.js';

/** Binary protocol opcodes (memcached's protocol_binary.h). */
export const Opcode = {
  GET: 0x00,
  SET: 0x01,
  ADD: 0x02,
  REPLACE: 0x03,
  DELETE: 0x04,
  INCREMENT: 0x05,
  DECREMENT: 0x06,
  QUIT: 0x07,
  FLUSH: 0x08,
  GETQ: 0x09,
  NOOP: 0x0a,
  VERSION: 0x0b,
  GETK: 0x0c,
  GETKQ: 0x0d,
  APPEND: 0x0e,
  PREPEND: 0x0f,
  STAT: 0x10,
  SETQ: 0x11,
  ADDQ: 0x12,
  REPLACEQ: 0x13,
  DELETEQ: 0x14,
  INCREMENTQ: 0x15,
  DECREMENTQ: 0x16,
  QUITQ: 0x17,
  FLUSHQ: 0x18,
  APPENDQ: 0x19,
  PREPENDQ: 0x1a,
  VERBOSITY: 0x1b,
  TOUCH: 0x1c,
  GAT: 0x1d,
  GATQ: 0x1e,
  SASL_LIST_MECHS: 0x20,
  SASL_AUTH: 0x21,
  SASL_STEP: 0x22,
  GATK: 0x23,
  GATKQ: 0x24,
} as const;

export const Status = {
  SUCCESS: 0x00,
  KEY_ENOENT: 0x01,
  KEY_EEXISTS: 0x02,
  E2BIG: 0x03,
  EINVAL: 0x04,
  NOT_STORED: 0x05,
  DELTA_BADVAL: 0x06,
  AUTH_ERROR: 0x20,
  UNKNOWN_COMMAND: 0x81,
  ENOMEM: 0x82,
} as const;

const STATUS_TEXT: Record<number, string> = {
  [Status.KEY_ENOENT]: 'Not found',
  [Status.KEY_EEXISTS]: 'Data exists for key.',
  [Status.E2BIG]: 'Too large.',
  [Status.EINVAL]: 'Invalid arguments',
  [Status.NOT_STORED]: 'Not stored.',
  [Status.DELTA_BADVAL]: 'Non-numeric server-side value for incr or decr',
  [Status.AUTH_ERROR]: 'Auth failure.',
  [Status.UNKNOWN_COMMAND]: 'Unknown command',
  [Status.ENOMEM]: 'Out of memory',
};

const HEADER = 24;
const EMPTY = Buffer.alloc(0);

/** Writes a response header; the caller then writes extras, key and value (bodyLength bytes). */
function header(
  conn: Session,
  opcode: number,
  keyLength: number,
  extrasLength: number,
  status: number,
  bodyLength: number,
  opaque: number,
  cas: number,
): void {
  const out = conn.out;
  out.uint(0x81, 1);
  out.uint(opcode, 1);
  out.uint(keyLength, 2);
  out.uint(extrasLength, 1);
  out.uint(0, 1);
  out.uint(status, 2);
  out.uint(bodyLength, 4);
  out.uint(opaque, 4);
  out.u64(cas);
}

function respond(
  conn: Session,
  opcode: number,
  status: number,
  opaque: number,
  cas = 0,
  body: Buffer = EMPTY,
) {
  header(conn, opcode, 0, 0, status, body.length, opaque, cas);
  if (body.length > 0) conn.out.bytes(body);
}

function error(conn: Session, opcode: number, status: number, opaque: number): void {
  respond(conn, opcode, status, opaque, 0, Buffer.from(STATUS_TEXT[status] ?? 'UNHANDLED ERROR'));
}

function isQuiet(opcode: number): boolean {
  switch (opcode) {
    case Opcode.GETQ:
    case Opcode.GETKQ:
    case Opcode.SETQ:
    case Opcode.ADDQ:
    case Opcode.REPLACEQ:
    case Opcode.DELETEQ:
    case Opcode.INCREMENTQ:
    case Opcode.DECREMENTQ:
    case Opcode.QUITQ:
    case Opcode.FLUSHQ:
    case Opcode.APPENDQ:
    case Opcode.PREPENDQ:
    case Opcode.GATQ:
    case Opcode.GATKQ:
      return true;
    default:
      return false;
  }
}

/**
 * Runs binary requests from buf[pos..]; returns the position of the first unprocessed byte
 * (past the end: body bytes of a rejected request still to skip; conn.waitFor is called when a
 * request is incomplete). A bad magic byte closes the connection. With authentication on, a
 * request other than SASL and VERSION from a client not yet logged in is answered with an auth
 * error and closes the connection, checked on its header before anything else (its body is
 * never read, nothing in the cache is touched), as memcached does; SASL bodies are capped at
 * 16 KiB (and mechanism names at 32 bytes) so that no login reaches the input cap.
 */
export function processBinary(conn: Session, buf: Buffer, pos: number): number {
  const end = buf.length;
  while (pos < end && conn.mayRun()) {
    if (end - pos < HEADER) {
      conn.waitFor(HEADER - (end - pos));
      return pos;
    }
    if (buf[pos] !== 0x80) {
      conn.closeAfterWrite();
      return end;
    }
    const opcode = byteAt(buf, pos + 1);
    const keyLength = buf.readUInt16BE(pos + 2);
    const extrasLength = byteAt(buf, pos + 4);
    const bodyLength = buf.readUInt32BE(pos + 8);
    const opaque = buf.readUInt32BE(pos + 12);
    if (keyLength + extrasLength > bodyLength || keyLength > KEY_MAX_LENGTH) {
      error(conn, opcode, Status.EINVAL, opaque);
      conn.closeAfterWrite();
      return end;
    }
    const isSasl = opcode === Opcode.SASL_AUTH || opcode === Opcode.SASL_STEP;
    if (!conn.authenticated && !isSasl && opcode !== Opcode.SASL_LIST_MECHS && opcode !== Opcode.VERSION) {
      // before anything else looks at the request (memcached's order): no effect, no body read
      error(conn, opcode, Status.AUTH_ERROR, opaque);
      conn.closeAfterWrite();
      return end;
    }
    const valueLength = bodyLength - keyLength - extrasLength;
    if (isSasl && bodyLength > SASL_MECH_MAX_BYTES + AUTH_TOKEN_MAX_BYTES) {
      error(conn, opcode, Status.EINVAL, opaque);
      conn.closeAfterWrite();
      return end;
    }
    if (isSasl && keyLength > SASL_MECH_MAX_BYTES) {
      error(conn, opcode, Status.EINVAL, opaque);
      pos += HEADER + bodyLength; // memcached skips the body
      continue;
    }
    const isStore = opcode <= Opcode.REPLACE || (opcode >= Opcode.SETQ && opcode <= Opcode.REPLACEQ);
    const isConcat =
      opcode === Opcode.APPEND ||
      opcode === Opcode.PREPEND ||
      opcode === Opcode.APPENDQ ||
      opcode === Opcode.PREPENDQ;
    if ((isStore || isConcat) && conn.cache.tooLarge(keyLength, valueLength)) {
      error(conn, opcode, Status.E2BIG, opaque);
      if (opcode === Opcode.SET || opcode === Opcode.SETQ) {
        const keyStart = pos + HEADER + extrasLength;
        if (end >= keyStart + keyLength) conn.cache.store.deleteAt(buf, keyStart, keyStart + keyLength);
      }
      pos += HEADER + bodyLength; // past the end: the connection skips the rest of the body
      continue;
    }
    if (!isStore && !isConcat && !isSasl && bodyLength > conn.settings.maxLineBytes + KEY_MAX_LENGTH + 64) {
      error(conn, opcode, Status.EINVAL, opaque);
      conn.closeAfterWrite();
      return end;
    }
    const total = HEADER + bodyLength;
    if (end - pos < total) {
      conn.waitFor(total - (end - pos));
      return pos;
    }
    runRequest(conn, buf, pos, opcode, keyLength, extrasLength, valueLength, opaque);
    pos += total;
  }
  return pos;
}

function runRequest(
  conn: Session,
  buf: Buffer,
  pos: number,
  opcode: number,
  keyLength: number,
  extrasLength: number,
  valueLength: number,
  opaque: number,
): void {
  const extras = pos + HEADER;
  const keyStart = extras + extrasLength;
  const valueStart = keyStart + keyLength;
  const cas = Number(buf.readBigUInt64BE(pos + 16)); // a unique past 2^53 matches nothing
  const quiet = isQuiet(opcode);
  const cache = conn.cache;
  const now = conn.now();
  const key = () => buf.toString('latin1', keyStart, keyStart + keyLength);
  switch (opcode) {
    case Opcode.GET:
    case Opcode.GETQ:
    case Opcode.GETK:
    case Opcode.GETKQ:
    case Opcode.GAT:
    case Opcode.GATQ:
    case Opcode.GATK:
    case Opcode.GATKQ: {
      const touch = opcode >= Opcode.GAT && opcode !== Opcode.GETK && opcode !== Opcode.GETKQ;
      if (keyLength === 0 || extrasLength !== (touch ? 4 : 0) || valueLength !== 0) {
        invalid(conn, opcode, opaque);
        return;
      }
      const h = touch
        ? cache.getAndTouch(key(), buf.readUInt32BE(extras), now)
        : cache.getAt(buf, keyStart, valueStart, now);
      const withKey =
        opcode === Opcode.GETK ||
        opcode === Opcode.GETKQ ||
        opcode === Opcode.GATK ||
        opcode === Opcode.GATKQ;
      if (h === NIL) {
        if (quiet) return;
        if (withKey) {
          header(conn, opcode, keyLength, 0, Status.KEY_ENOENT, keyLength + 9, opaque, 0);
          conn.out.range(buf, keyStart, valueStart);
          conn.out.ascii('Not found');
        } else error(conn, opcode, Status.KEY_ENOENT, opaque);
        return;
      }
      const k = withKey ? keyLength : 0;
      const store = cache.store;
      header(conn, opcode, k, 4, Status.SUCCESS, 4 + k + store.valueLength(h), opaque, store.casOf(h));
      conn.out.uint(store.flagsOf(h), 4);
      if (withKey) conn.out.range(buf, keyStart, valueStart);
      store.copyValue(h, conn.out);
      return;
    }
    case Opcode.SET:
    case Opcode.SETQ:
    case Opcode.ADD:
    case Opcode.ADDQ:
    case Opcode.REPLACE:
    case Opcode.REPLACEQ: {
      if (extrasLength !== 8 || keyLength === 0) {
        invalid(conn, opcode, opaque);
        return;
      }
      const base = opcode >= Opcode.SETQ ? opcode - Opcode.SETQ + Opcode.SET : opcode;
      const mode =
        base === Opcode.SET ? StoreMode.SET : base === Opcode.ADD ? StoreMode.ADD : StoreMode.REPLACE;
      if (mode === StoreMode.ADD && cas !== 0) {
        respondStore(conn, opcode, StoreResult.NOT_FOUND, opaque, quiet, mode);
        return;
      }
      const result = cache.storeItemAt(
        mode === StoreMode.REPLACE && cas !== 0 ? StoreMode.CAS : mode,
        buf,
        keyStart,
        valueStart,
        buf,
        valueStart,
        valueStart + valueLength,
        buf.readUInt32BE(extras),
        buf.readUInt32BE(extras + 4),
        cas,
        now,
      );
      respondStore(conn, opcode, result, opaque, quiet, mode);
      return;
    }
    case Opcode.APPEND:
    case Opcode.APPENDQ:
    case Opcode.PREPEND:
    case Opcode.PREPENDQ: {
      if (extrasLength !== 0 || keyLength === 0) {
        invalid(conn, opcode, opaque);
        return;
      }
      const mode =
        opcode === Opcode.APPEND || opcode === Opcode.APPENDQ ? StoreMode.APPEND : StoreMode.PREPEND;
      const result = cache.storeItemAt(
        mode,
        buf,
        keyStart,
        valueStart,
        buf,
        valueStart,
        valueStart + valueLength,
        0,
        0,
        cas,
        now,
      );
      respondStore(conn, opcode, result, opaque, quiet, mode);
      return;
    }
    case Opcode.DELETE:
    case Opcode.DELETEQ: {
      if (extrasLength !== 0 || keyLength === 0 || valueLength !== 0) {
        invalid(conn, opcode, opaque);
        return;
      }
      const k = key();
      if (cas !== 0) {
        const h = cache.store.peekHandle(k, now);
        if (h === NIL) {
          error(conn, opcode, Status.KEY_ENOENT, opaque);
          return;
        }
        if (cache.store.casOf(h) !== cas) {
          error(conn, opcode, Status.KEY_EEXISTS, opaque);
          return;
        }
      }
      if (!cache.delete(k, now)) {
        error(conn, opcode, Status.KEY_ENOENT, opaque);
        return;
      }
      if (!quiet) respond(conn, opcode, Status.SUCCESS, opaque);
      return;
    }
    case Opcode.INCREMENT:
    case Opcode.INCREMENTQ:
    case Opcode.DECREMENT:
    case Opcode.DECREMENTQ: {
      if (extrasLength !== 20 || keyLength === 0 || valueLength !== 0) {
        invalid(conn, opcode, opaque);
        return;
      }
      const incr = opcode === Opcode.INCREMENT || opcode === Opcode.INCREMENTQ;
      const delta = buf.readBigUInt64BE(extras);
      const initial = buf.readBigUInt64BE(extras + 8);
      const exptime = buf.readUInt32BE(extras + 16);
      const k = key();
      let result = cache.delta(k, incr, delta, cas, now);
      if (result === DeltaResult.NOT_FOUND && exptime !== 0xffff_ffff && cas === 0) {
        const text = Buffer.from(initial.toString());
        cache.storeItem(StoreMode.ADD, k, text, 0, text.length, 0, exptime, 0, now);
        cache.lastDelta = initial;
        result = DeltaResult.OK;
      }
      if (result === DeltaResult.NOT_FOUND) {
        error(conn, opcode, Status.KEY_ENOENT, opaque);
        return;
      }
      if (result === DeltaResult.EXISTS) {
        error(conn, opcode, Status.KEY_EEXISTS, opaque);
        return;
      }
      if (result === DeltaResult.NON_NUMERIC) {
        error(conn, opcode, Status.DELTA_BADVAL, opaque);
        return;
      }
      if (quiet) return;
      header(conn, opcode, 0, 0, Status.SUCCESS, 8, opaque, cache.store.casOf(cache.lastHandle));
      conn.out.u64(cache.lastDelta);
      return;
    }
    case Opcode.TOUCH: {
      if (extrasLength !== 4 || keyLength === 0) {
        invalid(conn, opcode, opaque);
        return;
      }
      const h = cache.touch(key(), buf.readUInt32BE(extras), now);
      if (h === NIL) {
        error(conn, opcode, Status.KEY_ENOENT, opaque);
        return;
      }
      respond(conn, opcode, Status.SUCCESS, opaque, cache.store.casOf(h));
      return;
    }
    case Opcode.QUIT:
    case Opcode.QUITQ:
      if (!quiet) respond(conn, opcode, Status.SUCCESS, opaque);
      conn.closeAfterWrite();
      return;
    case Opcode.FLUSH:
    case Opcode.FLUSHQ:
      if ((extrasLength !== 0 && extrasLength !== 4) || keyLength !== 0 || valueLength !== 0) {
        invalid(conn, opcode, opaque);
        return;
      }
      if (!conn.settings.flushEnabled) {
        error(conn, opcode, Status.AUTH_ERROR, opaque); // memcached's answer under -F
        return;
      }
      cache.flushAll(extrasLength === 4 ? buf.readInt32BE(extras) : 0, now);
      if (!quiet) respond(conn, opcode, Status.SUCCESS, opaque);
      return;
    case Opcode.NOOP:
      respond(conn, opcode, Status.SUCCESS, opaque);
      return;
    case Opcode.VERSION:
      respond(conn, opcode, Status.SUCCESS, opaque, 0, Buffer.from(conn.settings.version));
      return;
    case Opcode.VERBOSITY:
      if (extrasLength !== 4) {
        invalid(conn, opcode, opaque);
        return;
      }
      conn.settings.verbosity = Math.min(buf.readUInt32BE(extras), 2);
      respond(conn, opcode, Status.SUCCESS, opaque);
      return;
    case Opcode.STAT:
      writeBinaryStats(conn, opcode, opaque, keyLength === 0 ? '' : key());
      return;
    case Opcode.SASL_LIST_MECHS:
      respond(conn, opcode, Status.SUCCESS, opaque, 0, Buffer.from('PLAIN'));
      return;
    case Opcode.SASL_AUTH:
      saslPlain(conn, opcode, opaque, key(), buf.subarray(valueStart, valueStart + valueLength));
      return;
    case Opcode.SASL_STEP:
      error(conn, opcode, Status.AUTH_ERROR, opaque);
      return;
    default:
      error(conn, opcode, Status.UNKNOWN_COMMAND, opaque);
  }
}

function invalid(conn: Session, opcode: number, opaque: number): void {
  error(conn, opcode, Status.EINVAL, opaque);
}

function respondStore(
  conn: Session,
  opcode: number,
  result: StoreResult,
  opaque: number,
  quiet: boolean,
  mode: StoreMode,
): void {
  switch (result) {
    case StoreResult.STORED:
      if (!quiet)
        respond(conn, opcode, Status.SUCCESS, opaque, conn.cache.store.casOf(conn.cache.lastHandle));
      return;
    case StoreResult.EXISTS:
      error(conn, opcode, Status.KEY_EEXISTS, opaque);
      return;
    case StoreResult.NOT_FOUND:
      error(conn, opcode, Status.KEY_ENOENT, opaque);
      return;
    case StoreResult.TOO_LARGE:
      error(conn, opcode, Status.E2BIG, opaque);
      return;
    case StoreResult.NO_MEMORY:
      error(conn, opcode, Status.ENOMEM, opaque);
      return;
    default:
      // memcached maps a failed add to "exists", a failed replace to "not found"
      if (mode === StoreMode.ADD) {
        error(conn, opcode, Status.KEY_EEXISTS, opaque);
        return;
      }
      if (mode === StoreMode.REPLACE) {
        error(conn, opcode, Status.KEY_ENOENT, opaque);
        return;
      }
      error(conn, opcode, Status.NOT_STORED, opaque);
      return;
  }
}

/** SASL PLAIN: the value is [authzid] NUL authcid NUL password. */
function saslPlain(conn: Session, opcode: number, opaque: number, mechanism: string, data: Buffer): void {
  const stats = conn.cache.stats;
  stats.authCmds++;
  const first = data.indexOf(0);
  const second = first === -1 ? -1 : data.indexOf(0, first + 1);
  if (mechanism !== 'PLAIN' || second === -1) {
    stats.authErrors++;
    error(conn, opcode, Status.AUTH_ERROR, opaque);
    return;
  }
  const user = data.toString('latin1', first + 1, second);
  if (conn.login(user, data.subarray(second + 1))) {
    respond(conn, opcode, Status.SUCCESS, opaque, 0, Buffer.from('Authenticated'));
    return;
  }
  stats.authErrors++;
  error(conn, opcode, Status.AUTH_ERROR, opaque);
}

function writeBinaryStats(conn: Session, opcode: number, opaque: number, group: string): void {
  // Reuse the text report: run it into a scratch connection-less form.
  const text = collectTextStats(conn, group);
  if (text === undefined) {
    error(conn, opcode, Status.KEY_ENOENT, opaque);
    return;
  }
  for (const [name, value] of text) {
    const k = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    header(conn, opcode, k.length, 0, Status.SUCCESS, k.length + v.length, opaque, 0);
    conn.out.bytes(k);
    conn.out.bytes(v);
  }
  respond(conn, opcode, Status.SUCCESS, opaque);
}

function collectTextStats(conn: Session, group: string): [string, string][] | undefined {
  const out: [string, string][] = [];
  const lines = conn.statsLines(group);
  if (lines === undefined || typeof lines === 'string') return lines === 'RESET\r\n' ? [] : undefined;
  for (const [name, value] of lines) out.push([name, String(value)]);
  return out;
}
