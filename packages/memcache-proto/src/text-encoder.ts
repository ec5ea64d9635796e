import { HotpathMcError } from './errors.js';
import { KEY_MAX_LENGTH } from './protocol-limits.js';

/**
 * Client-side encoders for the text protocol. Each returns one Buffer ready to write;
 * keys are validated (1..250 bytes, no spaces or control characters) and sent as latin1.
 */

export const CRLF = Buffer.from('\r\n');

/** Throws HP_MC_INVALID_KEY unless the key is a valid memcached text-protocol key. */
export function validateKey(key: string): void {
  if (key.length === 0 || key.length > KEY_MAX_LENGTH) {
    throw new HotpathMcError(
      'HP_MC_INVALID_KEY',
      `key must be 1 to ${KEY_MAX_LENGTH} bytes, got ${key.length} bytes: ${JSON.stringify(key.slice(0, 40))}`,
    );
  }
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c <= 32 || c === 127 || c > 255) {
      throw new HotpathMcError(
        'HP_MC_INVALID_KEY',
        `key must not contain spaces, control or non-latin1 characters, got ${JSON.stringify(key.slice(0, 40))}`,
      );
    }
  }
}

/** Throws HP_MC_INVALID_OPTION unless value is an integer from 0 to max. */
export function checkUint(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new HotpathMcError(
      'HP_MC_INVALID_OPTION',
      `${name} must be an integer from 0 to ${max}, got ${value}`,
    );
  }
}

/** Throws HP_MC_INVALID_OPTION unless exptime is a signed 32-bit integer. */
export function checkExptime(exptime: number): void {
  if (!Number.isInteger(exptime) || exptime < -0x8000_0000 || exptime > 0x7fff_ffff) {
    throw new HotpathMcError(
      'HP_MC_INVALID_OPTION',
      `exptime must be a 32-bit integer of seconds, got ${exptime}`,
    );
  }
}

/** The cas unique of a cas store; throws HP_MC_INVALID_OPTION unless it is an unsigned 64-bit integer. */
export function checkCas(cas: bigint | undefined): bigint {
  if (cas === undefined || cas < 0n || cas > 0xffff_ffff_ffff_ffffn) {
    throw new HotpathMcError('HP_MC_INVALID_OPTION', `cas needs a 64-bit unsigned cas unique, got ${cas}`);
  }
  return cas;
}

/** An incr/decr amount; throws HP_MC_INVALID_OPTION unless it is an unsigned 64-bit integer. */
export function checkDelta(delta: bigint | number): bigint {
  const amount = typeof delta === 'bigint' || Number.isInteger(delta) ? BigInt(delta) : -1n;
  if (amount < 0n || amount > 0xffff_ffff_ffff_ffffn) {
    throw new HotpathMcError(
      'HP_MC_INVALID_OPTION',
      `delta must be an unsigned 64-bit integer, got ${delta}`,
    );
  }
  return amount;
}

/** One command line (latin1) with its CRLF. */
export function commandLine(text: string): Buffer {
  return Buffer.from(`${text}\r\n`, 'latin1');
}

function keysOf(keys: string | readonly string[]): string {
  const list = typeof keys === 'string' ? [keys] : keys;
  if (list.length === 0)
    throw new HotpathMcError('HP_MC_INVALID_OPTION', 'a get needs at least one key, got none');
  for (const key of list) validateKey(key);
  return list.join(' ');
}

/** `get <key>*` */
export function encodeGet(keys: string | readonly string[]): Buffer {
  return commandLine(`get ${keysOf(keys)}`);
}

/** `gets <key>*` (replies carry cas uniques) */
export function encodeGets(keys: string | readonly string[]): Buffer {
  return commandLine(`gets ${keysOf(keys)}`);
}

/** `gat <exptime> <key>*` / `gats` */
export function encodeGat(exptime: number, keys: string | readonly string[], withCas = false): Buffer {
  checkExptime(exptime);
  return commandLine(`${withCas ? 'gats' : 'gat'} ${exptime} ${keysOf(keys)}`);
}

export type StorageCommand = 'set' | 'add' | 'replace' | 'append' | 'prepend' | 'cas';

export interface StoreOptions {
  flags?: number;
  exptime?: number;
  /** Required for `cas`. */
  cas?: bigint;
  noreply?: boolean;
}

/** Any storage command: `<cmd> <key> <flags> <exptime> <bytes> [cas] [noreply]\r\n<data>\r\n`. */
export function encodeStore(
  command: StorageCommand,
  key: string,
  value: Buffer | string,
  options: StoreOptions = {},
): Buffer {
  validateKey(key);
  const flags = options.flags ?? 0;
  const exptime = options.exptime ?? 0;
  checkUint('flags', flags, 0xffff_ffff);
  checkExptime(exptime);
  const data = typeof value === 'string' ? Buffer.from(value) : value;
  let head = `${command} ${key} ${flags} ${exptime} ${data.length}`;
  if (command === 'cas') {
    head += ` ${checkCas(options.cas)}`;
  }
  if (options.noreply) head += ' noreply';
  return Buffer.concat([commandLine(head), data, CRLF]);
}

/** `set <key> <flags> <exptime> <bytes>\r\n<data>\r\n` */
export function encodeSet(
  key: string,
  value: Buffer | string,
  flags = 0,
  exptime = 0,
  noreply = false,
): Buffer {
  return encodeStore('set', key, value, { flags, exptime, noreply });
}

/** `delete <key> [noreply]` */
export function encodeDelete(key: string, noreply = false): Buffer {
  validateKey(key);
  return commandLine(noreply ? `delete ${key} noreply` : `delete ${key}`);
}

/** `incr|decr <key> <delta> [noreply]` with a 64-bit unsigned delta. */
export function encodeDelta(
  command: 'incr' | 'decr',
  key: string,
  delta: bigint | number,
  noreply = false,
): Buffer {
  validateKey(key);
  const amount = checkDelta(delta);
  return commandLine(`${command} ${key} ${amount}${noreply ? ' noreply' : ''}`);
}

export function encodeIncr(key: string, delta: bigint | number = 1, noreply = false): Buffer {
  return encodeDelta('incr', key, delta, noreply);
}

export function encodeDecr(key: string, delta: bigint | number = 1, noreply = false): Buffer {
  return encodeDelta('decr', key, delta, noreply);
}

/** `touch <key> <exptime> [noreply]` */
export function encodeTouch(key: string, exptime: number, noreply = false): Buffer {
  validateKey(key);
  checkExptime(exptime);
  return commandLine(`touch ${key} ${exptime}${noreply ? ' noreply' : ''}`);
}

/** `flush_all [delay] [noreply]` */
export function encodeFlushAll(delay = 0, noreply = false): Buffer {
  checkExptime(delay);
  return commandLine(`flush_all${delay !== 0 ? ` ${delay}` : ''}${noreply ? ' noreply' : ''}`);
}

export function encodeVersion(): Buffer {
  return commandLine('version');
}

/** `stats [group]` (group: settings, items, slabs, reset...) */
export function encodeStats(group?: string): Buffer {
  if (group !== undefined && !/^[a-z_]+$/.test(group)) {
    throw new HotpathMcError(
      'HP_MC_INVALID_OPTION',
      `stats group must be lowercase letters, got ${JSON.stringify(group)}`,
    );
  }
  return commandLine(group === undefined ? 'stats' : `stats ${group}`);
}

/** The meta no-op `mn`, answered with `MN`: a cheap pipeline barrier. */
export function encodeNoop(): Buffer {
  return commandLine('mn');
}
