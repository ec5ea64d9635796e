import { parseI32, parseU32, parseU64 } from './ascii-numbers.js';
import { DeltaResult, expiryFromExptime, StoreMode, StoreResult } from './cache.js';
import { byteAt, int32At } from './checked-index.js';
import { ItemBit, type LruStore } from './lru-store.js';
import { KEY_MAX_LENGTH, OPAQUE_TOKEN_MAX_BYTES } from './protocol-limits.js';
import type { Session } from './session.js';
import { NIL } from './slab-allocator.js';

/** Flags of one meta command: their letters in request order, and the token after each. */
interface MetaFlags {
  letters: string;
  tokens: string[];
}

/** Every flag letter memcached 1.6 accepts on a meta command; any other is an error. */
const KNOWN_FLAGS = 'bNTRlOPLkstcfvhuqFCMJDI';

/**
 * Reads the flag tokens. memcached words the errors two ways: mg and ms name the problem, md and
 * ma answer a bad flag with `invalid or duplicate flag`; all four name a too long opaque.
 */
function readFlags(conn: Session, buf: Buffer, from: number, ntok: number, cmd: string): MetaFlags | string {
  const strict = cmd === 'mg' || cmd === 'ms';
  const t = conn.tokens;
  let letters = '';
  const tokens: string[] = [];
  for (let i = from; i < ntok; i++) {
    const s = int32At(t, 2 * i);
    const e = int32At(t, 2 * i + 1);
    const letter = String.fromCharCode(byteAt(buf, s));
    if (letters.includes(letter)) {
      return strict ? 'CLIENT_ERROR duplicate flag\r\n' : 'CLIENT_ERROR invalid or duplicate flag\r\n';
    }
    if (!KNOWN_FLAGS.includes(letter)) {
      return strict ? 'CLIENT_ERROR invalid flag\r\n' : 'CLIENT_ERROR invalid or duplicate flag\r\n';
    }
    if (letter === 'O' && e - s > OPAQUE_TOKEN_MAX_BYTES) {
      return 'CLIENT_ERROR opaque token too long\r\n';
    }
    letters += letter;
    tokens.push(buf.toString('latin1', s + 1, e));
  }
  return { letters, tokens };
}

function token(flags: MetaFlags, letter: string): string | undefined {
  const i = flags.letters.indexOf(letter);
  return i === -1 ? undefined : flags.tokens[i];
}

function numberToken(flags: MetaFlags, letter: string): number | undefined {
  const text = token(flags, letter);
  if (text === undefined) return undefined;
  const b = Buffer.from(text, 'latin1');
  const value = parseI32(b, 0, b.length);
  return Number.isNaN(value) ? Number.NaN : value;
}

/** The flags echoed back, in request order. */
function returnFlags(
  flags: MetaFlags,
  keyText: string,
  store: LruStore,
  h: number,
  now: number,
  skip = '',
): string {
  let out = '';
  for (const [i, token] of flags.tokens.entries()) {
    const letter = flags.letters.charAt(i);
    if (skip.includes(letter)) continue;
    switch (letter) {
      case 'O':
        out += ` O${token}`;
        break;
      case 'k':
        out += flags.letters.includes('b') ? ` k${keyText} b` : ` k${keyText}`;
        break;
      case 'c':
        if (h !== NIL) out += ` c${store.casOf(h)}`;
        break;
      case 'f':
        if (h !== NIL) out += ` f${store.flagsOf(h)}`;
        break;
      case 's':
        if (h !== NIL) out += ` s${store.valueLength(h)}`;
        break;
      case 't':
        if (h !== NIL) {
          const expiresAt = store.expiresAtOf(h);
          out += expiresAt === 0 ? ' t-1' : ` t${Math.max(0, Math.ceil((expiresAt - now) / 1000))}`;
        }
        break;
      case 'l':
        if (h !== NIL) out += ` l${Math.floor((now - store.storedAtOf(h)) / 1000)}`;
        break;
      case 'h':
        if (h !== NIL) out += store.hasBit(h, ItemBit.FETCHED) ? ' h1' : ' h0';
        break;
    }
  }
  return out;
}

/** Runs mg, ms, md, ma, mn or me; returns the position after the command (and its data) or -1. */
export function processMetaCommand(
  conn: Session,
  buf: Buffer,
  ntok: number,
  cmd: string,
  _lineEnd: number,
  next: number,
): number {
  conn.cache.stats.cmdMeta++;
  if (cmd === 'mn') {
    conn.reply('MN\r\n');
    return next;
  }
  const t = conn.tokens;
  if (ntok < 2) {
    conn.reply('ERROR\r\n');
    return next;
  }
  if (int32At(t, 3) - int32At(t, 2) > KEY_MAX_LENGTH * 2) {
    conn.reply('CLIENT_ERROR bad command line format\r\n');
    return next;
  }
  const flags = readFlags(conn, buf, cmd === 'ms' ? 3 : 2, ntok, cmd);
  if (typeof flags === 'string') {
    conn.reply(flags);
    if (cmd !== 'ms' || ntok < 3) return next;
    const vlen = parseI32(buf, int32At(t, 4), int32At(t, 5));
    return Number.isNaN(vlen) || vlen < 0 ? next : next + vlen + 2; // skip the value's data
  }
  const keyText = buf.toString('latin1', int32At(t, 2), int32At(t, 3));
  const key = flags.letters.includes('b') ? Buffer.from(keyText, 'base64').toString('latin1') : keyText;
  if (key.length === 0 || key.length > KEY_MAX_LENGTH) {
    conn.reply('CLIENT_ERROR bad command line format\r\n');
    return next;
  }
  conn.setNoreply(false);
  switch (cmd) {
    case 'mg':
      metaGet(conn, flags, key, keyText);
      return next;
    case 'ms':
      return metaSet(conn, buf, ntok, flags, key, keyText, next);
    case 'md':
      metaDelete(conn, flags, key, keyText);
      return next;
    case 'ma':
      metaArithmetic(conn, flags, key, keyText);
      return next;
    default:
      metaDebug(conn, key, keyText);
      return next;
  }
}

function metaGet(conn: Session, flags: MetaFlags, key: string, keyText: string): void {
  const cache = conn.cache;
  const now = conn.now();
  const quiet = flags.letters.includes('q');
  const ttl = numberToken(flags, 'T');
  if (Number.isNaN(ttl)) {
    conn.reply('CLIENT_ERROR bad token in command line format\r\n');
    return;
  }
  const store = cache.store;
  let h = flags.letters.includes('u') ? store.peekHandle(key, now) : store.find(key, now);
  cache.stats.cmdGet++;
  let win = '';
  if (h === NIL) {
    cache.stats.getMisses++;
    const vivify = numberToken(flags, 'N');
    if (vivify === undefined || Number.isNaN(vivify)) {
      // a miss echoes only the opaque and the key
      if (!quiet) conn.reply(`EN${returnFlags(flags, keyText, store, NIL, now)}\r\n`);
      return;
    }
    // vivify: create an empty placeholder; this client wins the right to fill it
    if (cache.storeItem(StoreMode.ADD, key, EMPTY, 0, 0, 0, vivify, 0, now) !== StoreResult.STORED) {
      conn.reply('SERVER_ERROR out of memory storing object\r\n');
      return;
    }
    h = cache.lastHandle;
    store.setBit(h, ItemBit.WIN_SENT, true);
    win = ' W';
  } else {
    cache.stats.getHits++;
    // recache flags, in memcached's order: Z (a win was already handed out), X (stale), W (you win)
    const winSent = store.hasBit(h, ItemBit.WIN_SENT);
    if (winSent) win = ' Z';
    if (store.hasBit(h, ItemBit.STALE)) {
      win += ' X';
      if (!winSent) {
        store.setBit(h, ItemBit.WIN_SENT, true);
        win += ' W';
      }
    }
  }
  if (ttl !== undefined) cache.touch(key, ttl, now);
  const echoed = returnFlags(flags, keyText, store, h, now) + win;
  store.setBit(h, ItemBit.FETCHED, true);
  if (flags.letters.includes('v')) {
    conn.out.ascii(`VA ${store.valueLength(h)}${echoed}\r\n`);
    store.copyValue(h, conn.out);
    conn.out.ascii('\r\n');
  } else {
    conn.reply(`HD${echoed}\r\n`);
  }
}

const EMPTY = Buffer.alloc(0);

/** The meta reply code of each StoreResult a store can answer with a code (not the two errors). */
const META_STORE_REPLIES = ['HD', 'NS', 'EX', 'NF'] as const satisfies Record<
  Exclude<StoreResult, typeof StoreResult.TOO_LARGE | typeof StoreResult.NO_MEMORY>,
  string
>;

function metaSet(
  conn: Session,
  buf: Buffer,
  ntok: number,
  flags: MetaFlags,
  key: string,
  keyText: string,
  next: number,
): number {
  const t = conn.tokens;
  const cache = conn.cache;
  const vlen = ntok > 2 ? parseI32(buf, int32At(t, 4), int32At(t, 5)) : Number.NaN;
  if (Number.isNaN(vlen) || vlen < 0) {
    conn.reply('CLIENT_ERROR bad command line format\r\n');
    return next;
  }
  if (cache.tooLarge(key.length, vlen)) {
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
  const clientFlagsText = token(flags, 'F');
  const clientFlags =
    clientFlagsText === undefined ? 0 : parseU32(Buffer.from(clientFlagsText), 0, clientFlagsText.length);
  const ttl = numberToken(flags, 'T') ?? 0;
  const casText = token(flags, 'C');
  const cas = casText === undefined ? 0n : parseU64(Buffer.from(casText), 0, casText.length);
  if (clientFlags < 0 || Number.isNaN(ttl) || cas < 0n) {
    conn.reply('CLIENT_ERROR bad token in command line format\r\n');
    return dataEnd;
  }
  let mode: StoreMode;
  switch (token(flags, 'M') ?? 'S') {
    case 'S':
    case 's':
    case '':
      mode = casText === undefined ? StoreMode.SET : StoreMode.CAS;
      break;
    case 'E':
    case 'e':
      mode = StoreMode.ADD;
      break;
    case 'A':
    case 'a':
      mode = StoreMode.APPEND;
      break;
    case 'P':
    case 'p':
      mode = StoreMode.PREPEND;
      break;
    case 'R':
    case 'r':
      mode = StoreMode.REPLACE;
      break;
    default:
      conn.reply('CLIENT_ERROR invalid mode for ms M token\r\n');
      return dataEnd;
  }
  const now = conn.now();
  const end = next + vlen;
  let result = cache.storeItem(
    mode,
    key,
    buf,
    next,
    end,
    clientFlags,
    ttl,
    mode === StoreMode.CAS ? Number(cas) : 0,
    now,
  );
  const vivify = numberToken(flags, 'N');
  if (
    result === StoreResult.NOT_STORED &&
    mode === StoreMode.APPEND &&
    vivify !== undefined &&
    !Number.isNaN(vivify)
  ) {
    result = cache.storeItem(StoreMode.ADD, key, buf, next, end, clientFlags, vivify, 0, now);
  }
  if (result === StoreResult.TOO_LARGE) {
    conn.reply('SERVER_ERROR object too large for cache\r\n');
    return dataEnd;
  }
  if (result === StoreResult.NO_MEMORY) {
    conn.reply('SERVER_ERROR out of memory storing object\r\n');
    return dataEnd;
  }
  if (result === StoreResult.STORED && flags.letters.includes('q')) return dataEnd;
  const h = result === StoreResult.STORED ? cache.lastHandle : NIL;
  conn.reply(`${META_STORE_REPLIES[result]}${returnFlags(flags, keyText, cache.store, h, now, 'fstl')}\r\n`);
  return dataEnd;
}

/**
 * md: deletes, or with `I` invalidates: the item stays, marked stale with a new cas, and the
 * next mg sees `X` and wins the right to recache it (`W`; later readers get `Z`).
 */
function metaDelete(conn: Session, flags: MetaFlags, key: string, keyText: string): void {
  const cache = conn.cache;
  const now = conn.now();
  const casText = token(flags, 'C');
  const store = cache.store;
  const h = store.peekHandle(key, now);
  let code = 'HD';
  if (h === NIL) {
    code = 'NF';
    cache.stats.deleteMisses++;
  } else if (casText !== undefined && String(store.casOf(h)) !== casText) {
    code = 'EX';
  } else if (flags.letters.includes('I')) {
    store.invalidate(h);
    const ttl = numberToken(flags, 'T');
    if (ttl !== undefined && !Number.isNaN(ttl)) store.setExpiresAt(h, expiryFromExptime(ttl, now));
    cache.stats.deleteHits++;
  } else {
    cache.delete(key, now);
  }
  if (code === 'HD' && flags.letters.includes('q')) return;
  conn.reply(`${code}${returnFlags(flags, keyText, store, NIL, now)}\r\n`);
}

function metaArithmetic(conn: Session, flags: MetaFlags, key: string, keyText: string): void {
  const cache = conn.cache;
  const now = conn.now();
  const deltaText = token(flags, 'D') ?? '1';
  const delta = parseU64(Buffer.from(deltaText), 0, deltaText.length);
  const initialText = token(flags, 'J') ?? '0';
  const initial = parseU64(Buffer.from(initialText), 0, initialText.length);
  if (delta < 0n || initial < 0n) {
    conn.reply('CLIENT_ERROR invalid numeric delta argument\r\n');
    return;
  }
  const modeText = token(flags, 'M') ?? 'I';
  const incr = modeText === 'I' || modeText === 'i' || modeText === '+';
  if (!incr && modeText !== 'D' && modeText !== 'd' && modeText !== '-') {
    conn.reply('CLIENT_ERROR invalid mode for ma\r\n');
    return;
  }
  const casText = token(flags, 'C');
  const cas = casText === undefined ? 0n : parseU64(Buffer.from(casText), 0, casText.length);
  let result = cache.delta(key, incr, delta, cas < 0n ? 0 : Number(cas), now);
  const vivify = numberToken(flags, 'N');
  if (result === DeltaResult.NOT_FOUND && vivify !== undefined && !Number.isNaN(vivify)) {
    const text = Buffer.from(String(initial));
    cache.storeItem(StoreMode.ADD, key, text, 0, text.length, 0, vivify, 0, now);
    cache.lastDelta = initial;
    result = DeltaResult.OK;
  }
  if (result === DeltaResult.NON_NUMERIC) {
    conn.reply('CLIENT_ERROR cannot increment or decrement non-numeric value\r\n');
    return;
  }
  if (result !== DeltaResult.OK) {
    conn.reply(
      `${result === DeltaResult.NOT_FOUND ? 'NF' : 'EX'}${returnFlags(flags, keyText, cache.store, NIL, now)}\r\n`,
    );
    return;
  }
  const ttl = numberToken(flags, 'T');
  if (ttl !== undefined && !Number.isNaN(ttl)) cache.touch(key, ttl, now);
  const echoed = returnFlags(flags, keyText, cache.store, cache.store.peekHandle(key, now), now, 'fsl');
  if (flags.letters.includes('q')) return;
  if (flags.letters.includes('v')) {
    const text = String(cache.lastDelta);
    conn.reply(`VA ${text.length}${echoed}\r\n${text}\r\n`);
  } else if (!flags.letters.includes('q')) {
    conn.reply(`HD${echoed}\r\n`);
  }
}

function metaDebug(conn: Session, key: string, keyText: string): void {
  const now = conn.now();
  const store = conn.cache.store;
  const h = store.peekHandle(key, now);
  if (h === NIL) {
    conn.reply('EN\r\n');
    return;
  }
  const expiresAt = store.expiresAtOf(h);
  const exp = expiresAt === 0 ? -1 : Math.max(0, Math.ceil((expiresAt - now) / 1000));
  const la = Math.floor((now - store.storedAtOf(h)) / 1000);
  const fetched = store.hasBit(h, ItemBit.FETCHED) ? 'yes' : 'no';
  const size = store.valueLength(h) + key.length + 48;
  conn.reply(
    `ME ${keyText} exp=${exp} la=${la} cas=${store.casOf(h)} fetch=${fetched} cls=${store.lruOf(h) + 1} size=${size}\r\n`,
  );
}
