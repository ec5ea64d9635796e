import { parseFlags, parseI32, parseU32, parseU64 } from './ascii-numbers.js';
import { DeltaResult, StoreMode, type StoreResult } from './cache.js';
import { byteAt, int32At, internalError } from './checked-index.js';
import type { LruStore } from './lru-store.js';
import { processMetaCommand } from './meta-protocol.js';
import type { OutputBuffer } from './output-buffer.js';
import { AUTH_TOKEN_MAX_BYTES, KEY_MAX_LENGTH } from './protocol-limits.js';
import type { Session } from './session.js';
import { NIL } from './slab-allocator.js';
import { writeStats } from './stats-report.js';

/** A command line may hold this many tokens before the rest is left as one (get keys are scanned). */
export const MAX_TOKENS = 24;

const NOREPLY = Buffer.from('noreply');

/**
 * Runs text-protocol commands from buf[pos..] until the buffer holds no complete command,
 * the connection is closing, or its output is over the high-water mark. Returns the
 * position of the first unprocessed byte (past the end: bytes of a rejected value still to
 * skip); calls conn.waitFor when a data block is incomplete.
 */
export function processText(conn: Session, buf: Buffer, pos: number): number {
  const end = buf.length;
  while (pos < end && conn.mayRun()) {
    if (conn.pausedGet.active) {
      pos = resumeGet(conn, buf, pos);
      continue;
    }
    const nl = buf.indexOf(10, pos);
    if (nl === -1) return pos;
    const lineEnd = nl > pos && buf[nl - 1] === 13 ? nl - 1 : nl;
    const consumed = runLine(conn, buf, pos, lineEnd, nl + 1);
    if (consumed < 0) return pos; // data block incomplete: waitFor was called
    pos = consumed;
  }
  return pos;
}

/**
 * Splits [start, end) on spaces into conn.tokens; returns the token count. Token ends are
 * found with indexOf (native memchr) rather than a byte loop: per-byte loops dominate the
 * cost of a short command line.
 */
export function tokenize(conn: Session, buf: Buffer, start: number, end: number): number {
  const tokens = conn.tokens;
  let n = 0;
  let i = start;
  while (i < end) {
    while (i < end && buf[i] === 32) i++;
    if (i === end) break;
    if (n === MAX_TOKENS - 1) {
      let e = end;
      while (e > i && buf[e - 1] === 32) e--;
      tokens[2 * n] = i;
      tokens[2 * n + 1] = e;
      return n + 1;
    }
    const s = i;
    const space = buf.indexOf(32, i);
    i = space === -1 || space > end ? end : space;
    tokens[2 * n] = s;
    tokens[2 * n + 1] = i;
    n++;
  }
  return n;
}

/** The command token's first four bytes as one number (0 when longer than 4 bytes). */
function shortCommand(buf: Buffer, start: number, end: number): number {
  const n = end - start;
  if (n > 4) return 0;
  let code = 0;
  for (let i = start; i < end; i++) code = code * 256 + byteAt(buf, i);
  return code;
}

const code = (name: string) => shortCommand(Buffer.from(name), 0, name.length);
const CMD_GET = code('get');
const CMD_GETS = code('gets');
const CMD_SET = code('set');

function isNoreply(conn: Session, buf: Buffer, t: number): boolean {
  const s = int32At(conn.tokens, 2 * t);
  const e = int32At(conn.tokens, 2 * t + 1);
  return e - s === 7 && buf.compare(NOREPLY, 0, 7, s, e) === 0;
}

/** Executes one command line; returns the position after it (and its data), or -1 when incomplete. */
function runLine(conn: Session, buf: Buffer, start: number, lineEnd: number, next: number): number {
  conn.setNoreply(false);
  if (!conn.authenticated) return authenticateText(conn, buf, start, lineEnd, next);
  const ntok = tokenize(conn, buf, start, lineEnd);
  if (ntok === 0) {
    conn.reply('ERROR\r\n');
    return next;
  }
  const t = conn.tokens;
  // The hot commands are recognised from their bytes, without making a string.
  const short = shortCommand(buf, int32At(t, 0), int32At(t, 1));
  if (short === CMD_GET || short === CMD_GETS) {
    if (ntok < 2) {
      conn.reply('ERROR\r\n');
      return next;
    }
    if (ntok === 2) {
      getOne(conn, buf, int32At(t, 2), int32At(t, 3), short === CMD_GETS);
      return next;
    }
    return runGet(conn, buf, int32At(t, 2), lineEnd, next, short === CMD_GETS, false, 0);
  }
  if (short === CMD_SET && (ntok === 5 || ntok === 6)) return runStore(conn, buf, ntok, StoreMode.SET, next);
  const cmd = buf.toString('latin1', int32At(t, 0), int32At(t, 1));
  switch (cmd) {
    case 'get':
    case 'gets':
      if (ntok < 2) break;
      return runGet(conn, buf, int32At(t, 2), lineEnd, next, cmd.length === 4, false, 0);
    case 'gat':
    case 'gats': {
      if (ntok < 3) break;
      const exptime = parseI32(buf, int32At(t, 2), int32At(t, 3));
      if (Number.isNaN(exptime)) {
        conn.reply('CLIENT_ERROR invalid exptime argument\r\n');
        return next;
      }
      return runGet(conn, buf, int32At(t, 4), lineEnd, next, cmd.length === 4, true, exptime);
    }
    case 'set':
      if (ntok !== 5 && ntok !== 6) break;
      return runStore(conn, buf, ntok, StoreMode.SET, next);
    case 'add':
      if (ntok !== 5 && ntok !== 6) break;
      return runStore(conn, buf, ntok, StoreMode.ADD, next);
    case 'replace':
      if (ntok !== 5 && ntok !== 6) break;
      return runStore(conn, buf, ntok, StoreMode.REPLACE, next);
    case 'append':
      if (ntok !== 5 && ntok !== 6) break;
      return runStore(conn, buf, ntok, StoreMode.APPEND, next);
    case 'prepend':
      if (ntok !== 5 && ntok !== 6) break;
      return runStore(conn, buf, ntok, StoreMode.PREPEND, next);
    case 'cas':
      if (ntok !== 6 && ntok !== 7) break;
      return runStore(conn, buf, ntok, StoreMode.CAS, next);
    case 'delete':
      if (ntok < 2 || ntok > 4) break;
      runDelete(conn, buf, ntok);
      return next;
    case 'incr':
    case 'decr':
      if (ntok !== 3 && ntok !== 4) break;
      runDelta(conn, buf, ntok, cmd === 'incr');
      return next;
    case 'touch':
      if (ntok !== 3 && ntok !== 4) break;
      runTouch(conn, buf, ntok);
      return next;
    case 'mg':
    case 'ms':
    case 'md':
    case 'ma':
    case 'mn':
    case 'me':
      return processMetaCommand(conn, buf, ntok, cmd, lineEnd, next);
    case 'flush_all':
      if (ntok > 3) break;
      if (!conn.settings.flushEnabled) {
        conn.reply('CLIENT_ERROR flush_all not allowed\r\n');
        return next;
      }
      runFlush(conn, buf, ntok);
      return next;
    case 'shutdown':
      runShutdown(conn, buf, ntok);
      return next;
    case 'version':
      conn.reply(`VERSION ${conn.settings.version}\r\n`);
      return next;
    case 'verbosity':
      if (ntok !== 2 && ntok !== 3) break;
      conn.setNoreply(isNoreply(conn, buf, ntok - 1));
      runVerbosity(conn, parseU32(buf, int32At(t, 2), int32At(t, 3)));
      return next;
    case 'stats':
      writeStats(conn, ntok > 1 ? buf.toString('latin1', int32At(t, 2), int32At(t, 3)) : '', ntok);
      return next;
    case 'quit':
      conn.closeAfterWrite();
      return next;
    default:
      if (isHttpVersion(buf, int32At(t, 2 * ntok - 2), int32At(t, 2 * ntok - 1))) {
        // a browser tricked into talking to memcached: close without a word, as memcached does
        conn.closeSilently('HTTP request line');
        return next;
      }
  }
  conn.reply('ERROR\r\n');
  return next;
}

const HTTP = Buffer.from('HTTP/');

/** Whether the token [s, e) starts with `HTTP/`. */
function isHttpVersion(buf: Buffer, s: number, e: number): boolean {
  return e - s >= 5 && buf.compare(HTTP, 0, 5, s, s + 5) === 0;
}

/**
 * The text protocol's authfile login, as memcached does it: the first command must be
 * `set <any key> <flags> <exptime> <bytes>` whose data is `user password`.
 */
function authenticateText(conn: Session, buf: Buffer, start: number, lineEnd: number, next: number): number {
  if (lineEnd - start < 6) {
    conn.closeAfterWrite();
    return next;
  }
  const ntok = tokenize(conn, buf, start, lineEnd);
  const t = conn.tokens;
  const size = ntok >= 5 ? Number(buf.toString('latin1', int32At(t, 8), int32At(t, 9))) : Number.NaN;
  if (
    ntok < 5 ||
    buf.toString('latin1', int32At(t, 0), int32At(t, 1)) !== 'set' ||
    !Number.isInteger(size) ||
    size < 0
  ) {
    conn.out.ascii('CLIENT_ERROR unauthenticated\r\n');
    return next;
  }
  if (size > AUTH_TOKEN_MAX_BYTES) {
    conn.out.ascii('CLIENT_ERROR auth token too long\r\n');
    return next;
  }
  const dataEnd = next + size + 2;
  if (dataEnd > buf.length) {
    conn.waitFor(dataEnd - buf.length);
    return -1;
  }
  if (buf[dataEnd - 2] !== 13 || buf[dataEnd - 1] !== 10) {
    conn.out.ascii('CLIENT_ERROR bad command line termination\r\n');
    return dataEnd;
  }
  const space = buf.indexOf(32, next);
  if (space === -1 || space >= dataEnd - 2) {
    conn.out.ascii('CLIENT_ERROR bad authentication token format\r\n');
    return dataEnd;
  }
  const stats = conn.cache.stats;
  stats.authCmds++;
  if (
    conn.settings.users !== undefined &&
    conn.login(buf.toString('latin1', next, space), buf.subarray(space + 1, dataEnd - 2))
  ) {
    conn.out.ascii('STORED\r\n');
  } else {
    stats.authErrors++;
    conn.out.ascii('CLIENT_ERROR authentication failure\r\n');
  }
  return dataEnd;
}

/**
 * get/gets/gat/gats with any number of keys. Returns the position after the line, or, when the
 * reply reached the output batch mark with keys left, the position of the next key: the get is
 * paused (conn.pausedGet) and resumes there once the batch is written, so one line naming a big
 * value thousands of times queues at most a batch and a value before the output cap applies.
 */
function runGet(
  conn: Session,
  buf: Buffer,
  keysStart: number,
  lineEnd: number,
  next: number,
  withCas: boolean,
  touch: boolean,
  exptime: number,
): number {
  // Validate every key first: memcached answers a bad key with only the error, no values.
  let i = keysStart;
  while (i < lineEnd) {
    if (buf[i] === 32) {
      i++;
      continue;
    }
    const s = i;
    i = keyEnd(buf, i, lineEnd);
    if (i - s > KEY_MAX_LENGTH) {
      conn.reply('CLIENT_ERROR bad command line format\r\n');
      return next;
    }
  }
  const stop = getKeys(conn, buf, keysStart, lineEnd, withCas, touch, exptime);
  if (stop === lineEnd) return next;
  const paused = conn.pausedGet;
  paused.active = true;
  paused.withCas = withCas;
  paused.touch = touch;
  paused.exptime = exptime;
  return stop;
}

/** Continues a paused get at pos (the start of its next key, inside its line). */
function resumeGet(conn: Session, buf: Buffer, pos: number): number {
  const paused = conn.pausedGet;
  const nl = buf.indexOf(10, pos);
  if (nl === -1) throw internalError(`a paused get at input position ${pos} has no line end`);
  const lineEnd = nl > pos && buf[nl - 1] === 13 ? nl - 1 : nl;
  const stop = getKeys(conn, buf, pos, lineEnd, paused.withCas, paused.touch, paused.exptime);
  if (stop !== lineEnd) return stop;
  paused.active = false;
  return nl + 1;
}

/**
 * Looks up the (validated) keys in [i, lineEnd) and queues their values, then END. Stops early,
 * before END, when the output reaches the batch mark with keys left; returns where it stopped
 * (lineEnd when every key was answered).
 */
function getKeys(
  conn: Session,
  buf: Buffer,
  i: number,
  lineEnd: number,
  withCas: boolean,
  touch: boolean,
  exptime: number,
): number {
  const cache = conn.cache;
  const out = conn.out;
  const now = conn.now();
  while (i < lineEnd) {
    if (buf[i] === 32) {
      i++;
      continue;
    }
    if (conn.outputFull()) return i;
    const s = i;
    i = keyEnd(buf, i, lineEnd);
    const h = touch
      ? cache.getAndTouch(buf.toString('latin1', s, i), exptime, now)
      : cache.getAt(buf, s, i, now);
    if (h !== NIL) writeValue(out, cache.store, h, withCas);
  }
  out.getEnd();
  return lineEnd;
}

/** One `VALUE <key> <flags> <bytes>[ <cas>]` block of a get reply, key and value read from the item. */
function writeValue(out: OutputBuffer, store: LruStore, h: number, withCas: boolean): void {
  out.valueBlock(
    store.pageOf(h),
    store.bufferOf(h),
    store.keyOffsetOf(h),
    store.keyLengthOf(h),
    store.flagsOf(h),
    store.valueLength(h),
    withCas ? store.casOf(h) : -1,
    store.isLarge(h),
  );
}

/** `get <key>` / `gets <key>`: the one key's bounds come from the tokenizer, nothing is rescanned. */
function getOne(conn: Session, buf: Buffer, s: number, e: number, withCas: boolean): void {
  if (e - s > KEY_MAX_LENGTH) {
    conn.reply('CLIENT_ERROR bad command line format\r\n');
    return;
  }
  const h = conn.cache.getAt(buf, s, e, conn.now());
  if (h !== NIL) writeValue(conn.out, conn.cache.store, h, withCas);
  conn.out.getEnd();
}

/** The end of the key starting at i: the next space or the line end. */
function keyEnd(buf: Buffer, i: number, lineEnd: number): number {
  const space = buf.indexOf(32, i);
  return space === -1 || space > lineEnd ? lineEnd : space;
}

function runStore(conn: Session, buf: Buffer, ntok: number, mode: StoreMode, next: number): number {
  const t = conn.tokens;
  const isCas = mode === StoreMode.CAS;
  conn.setNoreply(isNoreply(conn, buf, ntok - 1));
  const keyLen = int32At(t, 3) - int32At(t, 2);
  const flags = parseFlags(buf, int32At(t, 4), int32At(t, 5));
  const exptime = parseI32(buf, int32At(t, 6), int32At(t, 7));
  const vlen = parseI32(buf, int32At(t, 8), int32At(t, 9));
  const cas = isCas ? parseU64(buf, int32At(t, 10), int32At(t, 11)) : 0n;
  if (keyLen > KEY_MAX_LENGTH || flags < 0 || Number.isNaN(exptime) || Number.isNaN(vlen) || cas < 0n) {
    conn.reply('CLIENT_ERROR bad command line format\r\n');
    return next;
  }
  if (vlen < 0 || vlen > 0x7fff_fffd) {
    conn.reply('CLIENT_ERROR bad command line format\r\n');
    return next;
  }
  const cache = conn.cache;
  if (cache.tooLarge(keyLen, vlen)) {
    cache.stats.cmdSet++;
    if (mode === StoreMode.SET) cache.store.deleteAt(buf, int32At(t, 2), int32At(t, 3));
    conn.reply('SERVER_ERROR object too large for cache\r\n');
    return next + vlen + 2; // the connection skips the data
  }
  const dataEnd = next + vlen + 2;
  if (dataEnd > buf.length) {
    conn.waitFor(dataEnd - buf.length);
    return -1;
  }
  if (buf[dataEnd - 2] !== 13 || buf[dataEnd - 1] !== 10) {
    conn.reply('CLIENT_ERROR bad data chunk\r\n');
    return dataEnd;
  }
  const result = cache.storeItemAt(
    mode,
    buf,
    int32At(t, 2),
    int32At(t, 3),
    buf,
    next,
    next + vlen,
    flags,
    exptime,
    Number(cas),
    conn.now(),
  );
  conn.replyBytes(STORE_REPLIES[result]);
  return dataEnd;
}

/** The reply to each StoreResult, by its value (a tuple: every result has one). */
const STORE_REPLIES = [
  Buffer.from('STORED\r\n'),
  Buffer.from('NOT_STORED\r\n'),
  Buffer.from('EXISTS\r\n'),
  Buffer.from('NOT_FOUND\r\n'),
  Buffer.from('SERVER_ERROR object too large for cache\r\n'),
  Buffer.from('SERVER_ERROR out of memory storing object\r\n'),
] as const satisfies Record<StoreResult, Buffer>;

function runDelete(conn: Session, buf: Buffer, ntok: number): void {
  const t = conn.tokens;
  if (ntok > 2) {
    const holdIsZero = int32At(t, 5) - int32At(t, 4) === 1 && buf[int32At(t, 4)] === 48;
    const noreply = isNoreply(conn, buf, ntok - 1);
    conn.setNoreply(noreply);
    const valid = (ntok === 3 && (holdIsZero || noreply)) || (ntok === 4 && holdIsZero && noreply);
    if (!valid) {
      conn.reply('CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n');
      return;
    }
  }
  if (int32At(t, 3) - int32At(t, 2) > KEY_MAX_LENGTH) {
    conn.reply('CLIENT_ERROR bad command line format\r\n');
    return;
  }
  const deleted = conn.cache.delete(buf.toString('latin1', int32At(t, 2), int32At(t, 3)), conn.now());
  conn.reply(deleted ? 'DELETED\r\n' : 'NOT_FOUND\r\n');
}

function runDelta(conn: Session, buf: Buffer, ntok: number, incr: boolean): void {
  const t = conn.tokens;
  conn.setNoreply(isNoreply(conn, buf, ntok - 1));
  if (int32At(t, 3) - int32At(t, 2) > KEY_MAX_LENGTH) {
    conn.reply('CLIENT_ERROR bad command line format\r\n');
    return;
  }
  const amount = parseU64(buf, int32At(t, 4), int32At(t, 5));
  if (amount < 0n) {
    conn.reply('CLIENT_ERROR invalid numeric delta argument\r\n');
    return;
  }
  const cache = conn.cache;
  const result = cache.delta(
    buf.toString('latin1', int32At(t, 2), int32At(t, 3)),
    incr,
    amount,
    0,
    conn.now(),
  );
  if (result === DeltaResult.OK) conn.reply(`${cache.lastDelta}\r\n`);
  else if (result === DeltaResult.NOT_FOUND) conn.reply('NOT_FOUND\r\n');
  else conn.reply('CLIENT_ERROR cannot increment or decrement non-numeric value\r\n');
}

function runTouch(conn: Session, buf: Buffer, ntok: number): void {
  const t = conn.tokens;
  conn.setNoreply(isNoreply(conn, buf, ntok - 1));
  if (int32At(t, 3) - int32At(t, 2) > KEY_MAX_LENGTH) {
    conn.reply('CLIENT_ERROR bad command line format\r\n');
    return;
  }
  const exptime = parseI32(buf, int32At(t, 4), int32At(t, 5));
  if (Number.isNaN(exptime)) {
    conn.reply('CLIENT_ERROR invalid exptime argument\r\n');
    return;
  }
  const h = conn.cache.touch(buf.toString('latin1', int32At(t, 2), int32At(t, 3)), exptime, conn.now());
  conn.reply(h === NIL ? 'NOT_FOUND\r\n' : 'TOUCHED\r\n');
}

function runFlush(conn: Session, buf: Buffer, ntok: number): void {
  const t = conn.tokens;
  conn.setNoreply(ntok > 1 && isNoreply(conn, buf, ntok - 1));
  let delay = 0;
  if (ntok !== (conn.noreply ? 2 : 1)) {
    delay = parseI32(buf, int32At(t, 2), int32At(t, 3));
    if (Number.isNaN(delay)) {
      conn.reply('CLIENT_ERROR invalid exptime argument\r\n');
      return;
    }
  }
  conn.cache.flushAll(delay, conn.now());
  conn.reply('OK\r\n');
}

/** `shutdown [graceful]`: only with -A, as memcached; the connection closes without a reply. */
function runShutdown(conn: Session, buf: Buffer, ntok: number): void {
  if (!conn.settings.shutdownEnabled) {
    conn.reply('ERROR: shutdown not enabled\r\n');
    return;
  }
  const t = conn.tokens;
  const mode = ntok === 2 ? buf.toString('latin1', int32At(t, 2), int32At(t, 3)) : '';
  if (ntok > 2 || (ntok === 2 && mode !== 'graceful')) {
    conn.reply('CLIENT_ERROR invalid shutdown mode\r\n');
    return;
  }
  conn.closeSilently('shutdown');
  conn.settings.shutdown();
}

function runVerbosity(conn: Session, level: number): void {
  if (level < 0) {
    conn.reply('CLIENT_ERROR bad command line format\r\n');
    return;
  }
  conn.settings.verbosity = Math.min(level, 2);
  conn.reply('OK\r\n');
}
