import { HotpathMcError } from './errors.js';
import { KEY_MAX_LENGTH } from './protocol-limits.js';
import {
  CRLF,
  checkCas,
  checkDelta,
  checkExptime,
  checkUint,
  commandLine,
  type StorageCommand,
} from './text-encoder.js';

/**
 * Client-side encoders for the meta protocol (`mg`, `ms`, `md`, `ma`, `mn`), as memcached's
 * doc/protocol.txt defines them. Each returns one Buffer ready to write.
 *
 * Keys: a key of printable ASCII without spaces (1..250 bytes) is sent as is; any other key
 * (spaces, control characters, non-ASCII) is sent base64-encoded with the `b` flag. Its bytes
 * are latin1 when every character is below U+0100 (the bytes text mode sends for such a key,
 * so both modes address the same item), UTF-8 otherwise; 1..250 bytes either way.
 */

/** `<key>` or `<base64 key> b`: the key token of a meta command, with its `b` flag if needed. */
export function metaKeyToken(key: string): string {
  let plain = key.length > 0 && key.length <= KEY_MAX_LENGTH;
  let wide = false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c <= 32 || c >= 127) {
      plain = false;
      if (c > 255) wide = true;
    }
  }
  if (plain) return key;
  const bytes = Buffer.from(key, wide ? 'utf8' : 'latin1');
  if (bytes.length === 0 || bytes.length > KEY_MAX_LENGTH) {
    throw new HotpathMcError(
      'HP_MC_INVALID_KEY',
      `key must be 1 to ${KEY_MAX_LENGTH} bytes, got ${bytes.length} bytes: ${JSON.stringify(key.slice(0, 40))}`,
    );
  }
  return `${bytes.toString('base64')} b`;
}

function opaqueFlag(opaque: number | undefined): string {
  if (opaque === undefined) return '';
  checkUint('opaque', opaque, 0xffff_ffff);
  return ` O${opaque}`;
}

export interface MetaGetOptions {
  /** `v`: return the value (reply `VA <size>` and a data block; `HD` without it). */
  value?: boolean;
  /** `f`: return the client flags. */
  flags?: boolean;
  /** `c`: return the cas unique. */
  cas?: boolean;
  /** `t`: return the remaining TTL in seconds (-1 for none). */
  ttl?: boolean;
  /** `k`: return the key. */
  key?: boolean;
  /** `T<exptime>`: update the TTL on a hit (touch / gat). */
  touch?: number;
  /** `O<opaque>`: copied back in the reply. */
  opaque?: number;
  /** `q`: no `EN` on a miss. */
  quiet?: boolean;
}

/** `mg <key> <flags>*` */
export function encodeMetaGet(key: string, options: MetaGetOptions = {}): Buffer {
  return commandLine(`mg ${metaKeyToken(key)}${metaGetFlags(options)}`);
}

/** The flags of an `mg` line after its key, each with a leading space. */
export function metaGetFlags(options: MetaGetOptions): string {
  let flags = '';
  if (options.value) flags += ' v';
  if (options.flags) flags += ' f';
  if (options.cas) flags += ' c';
  if (options.ttl) flags += ' t';
  if (options.key) flags += ' k';
  if (options.touch !== undefined) {
    checkExptime(options.touch);
    flags += ` T${options.touch}`;
  }
  flags += opaqueFlag(options.opaque);
  if (options.quiet) flags += ' q';
  return flags;
}

/** The `M` mode token of each storage command (`cas` is a set with a `C` flag). */
const SET_MODES: Record<Exclude<StorageCommand, 'set' | 'cas'>, string> = {
  add: 'E',
  replace: 'R',
  append: 'A',
  prepend: 'P',
};

export interface MetaSetOptions {
  /** Storage mode; `cas` needs `cas`. Default `set`. */
  mode?: StorageCommand;
  /** `F<flags>` (ignored by append and prepend). */
  flags?: number;
  /** `T<exptime>` (ignored by append and prepend). */
  exptime?: number;
  /** `C<cas>`: store only if the item's cas unique matches. */
  cas?: bigint;
  /** `O<opaque>` */
  opaque?: number;
  /** `q`: no `HD` on success. */
  quiet?: boolean;
}

/** `ms <key> <datalen> <flags>*\r\n<data>\r\n`: HD, NS, EX or NF. */
export function encodeMetaSet(key: string, value: Buffer | string, options: MetaSetOptions = {}): Buffer {
  const mode = options.mode ?? 'set';
  const data = typeof value === 'string' ? Buffer.from(value) : value;
  // the datalen goes right after the key, before a base64 key's `b` flag
  const token = metaKeyToken(key);
  const space = token.indexOf(' ');
  let head =
    space === -1
      ? `ms ${token} ${data.length}`
      : `ms ${token.slice(0, space)} ${data.length}${token.slice(space)}`;
  if (mode !== 'set' && mode !== 'cas') head += ` M${SET_MODES[mode]}`;
  if (mode !== 'append' && mode !== 'prepend') {
    const flags = options.flags ?? 0;
    const exptime = options.exptime ?? 0;
    checkUint('flags', flags, 0xffff_ffff);
    checkExptime(exptime);
    if (flags !== 0) head += ` F${flags}`;
    if (exptime !== 0) head += ` T${exptime}`;
  }
  if (mode === 'cas' || options.cas !== undefined) head += ` C${checkCas(options.cas)}`;
  head += opaqueFlag(options.opaque);
  if (options.quiet) head += ' q';
  return Buffer.concat([commandLine(head), data, CRLF]);
}

export interface MetaDeleteOptions {
  /** `C<cas>`: delete only if the item's cas unique matches (else EX). */
  cas?: bigint;
  opaque?: number;
  quiet?: boolean;
}

/** `md <key> <flags>*`: HD, NF or EX. */
export function encodeMetaDelete(key: string, options: MetaDeleteOptions = {}): Buffer {
  let head = `md ${metaKeyToken(key)}`;
  if (options.cas !== undefined) head += ` C${checkCas(options.cas)}`;
  head += opaqueFlag(options.opaque);
  if (options.quiet) head += ' q';
  return commandLine(head);
}

export interface MetaArithmeticOptions {
  /** Default `incr`. */
  mode?: 'incr' | 'decr';
  /** `D<delta>`, unsigned 64-bit; default 1. */
  delta?: bigint | number;
  /** `v`: return the new value (reply `VA <len>` and the number as the data block). */
  value?: boolean;
  opaque?: number;
  quiet?: boolean;
}

/** `ma <key> <flags>*`: HD (or VA with `v`), NF, NS or EX. Decrement floors at 0, increment wraps at 2^64. */
export function encodeMetaArithmetic(key: string, options: MetaArithmeticOptions = {}): Buffer {
  let head = `ma ${metaKeyToken(key)}`;
  if (options.value) head += ' v';
  if (options.mode === 'decr') head += ' MD';
  if (options.delta !== undefined) head += ` D${checkDelta(options.delta)}`;
  head += opaqueFlag(options.opaque);
  if (options.quiet) head += ' q';
  return commandLine(head);
}

/**
 * A pipeline of quiet gets for several keys, `mg <key_i> <flags> O<i> q` each, ended by `mn`:
 * hits come back as `VA … O<i>` (i: the key's index in `keys`), misses send nothing, and `MN`
 * marks the end.
 */
export function encodeMetaGetMulti(keys: readonly string[], options: MetaGetOptions = {}): Buffer {
  if (keys.length === 0)
    throw new HotpathMcError('HP_MC_INVALID_OPTION', 'a get needs at least one key, got none');
  const flags = metaGetFlags({ ...options, opaque: undefined, quiet: false });
  let text = '';
  for (const [i, key] of keys.entries()) text += `mg ${metaKeyToken(key)}${flags} O${i} q\r\n`;
  return Buffer.from(`${text}mn\r\n`, 'latin1');
}
