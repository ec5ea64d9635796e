import { byteAt } from './checked-index.js';
import { ItemBit, LruStore } from './lru-store.js';
import { ServerStats } from './server-stats.js';
import { NIL } from './slab-allocator.js';

/** Outcome of a storage command, shared by the text, meta and binary front ends. */
export const StoreResult = {
  STORED: 0,
  NOT_STORED: 1,
  EXISTS: 2,
  NOT_FOUND: 3,
  TOO_LARGE: 4,
  /** No chunk could be had for the item (memcached's `SERVER_ERROR out of memory storing object`). */
  NO_MEMORY: 5,
} as const;
export type StoreResult = (typeof StoreResult)[keyof typeof StoreResult];

export const StoreMode = { SET: 0, ADD: 1, REPLACE: 2, APPEND: 3, PREPEND: 4, CAS: 5 } as const;
export type StoreMode = (typeof StoreMode)[keyof typeof StoreMode];

export const DeltaResult = { OK: 0, NOT_FOUND: 1, NON_NUMERIC: 2, EXISTS: 3 } as const;
export type DeltaResult = (typeof DeltaResult)[keyof typeof DeltaResult];

/** exptime values above this many seconds are absolute Unix times (memcached's 30 days). */
export const REALTIME_MAXDELTA = 60 * 60 * 24 * 30;
const MAX_U64 = 0xffff_ffff_ffff_ffffn;

/**
 * Converts a protocol exptime (seconds) to an absolute ms deadline as memcached reads it:
 * 0 never expires, negative expires now, up to 30 days is relative, above is a Unix time.
 */
export function expiryFromExptime(exptime: number, now: number): number {
  if (exptime === 0) return 0;
  if (exptime < 0) return 1;
  if (exptime > REALTIME_MAXDELTA) {
    const at = exptime * 1000;
    return at <= now ? 1 : at;
  }
  return now + exptime * 1000;
}

export interface CacheOptions {
  /** Memory limit for items, in bytes. */
  memoryLimitBytes: number;
  /** Largest item (key + value + header) accepted, in bytes. */
  itemSizeMax: number;
  /** Slab chunk size growth factor (memcached's -f). Default 1.25. */
  growthFactor?: number;
  /** Minimum key + value space of the smallest chunk (memcached's -n). Default 48. */
  minChunkBytes?: number;
  /** false: a full store refuses writes instead of evicting (memcached's -M). Default true. */
  evictions?: boolean;
  /** false: no cas values (memcached's -C): gets shows 0, a cas command answers EXISTS. Default true. */
  casEnabled?: boolean;
}

/**
 * memcached's command semantics on top of the LRU store: storage modes, cas checks,
 * 64-bit incr/decr, touch, flush, and the counters `stats` reports. Items are named by store
 * handles (NIL when missing); read them through `store`'s accessors.
 */
export class Cache {
  readonly store: LruStore;
  readonly stats = new ServerStats();
  readonly itemSizeMax: number;
  /** The item written by the last successful storage operation (avoids allocating results). */
  lastHandle = NIL;
  /** The value after the last successful incr/decr. */
  lastDelta = 0n;

  constructor(options: CacheOptions) {
    this.store = new LruStore(options.memoryLimitBytes, {
      growthFactor: options.growthFactor,
      minChunkBytes: options.minChunkBytes,
      evictions: options.evictions,
      casEnabled: options.casEnabled,
    });
    this.itemSizeMax = options.itemSizeMax;
  }

  tooLarge(keyBytes: number, valueBytes: number): boolean {
    return keyBytes + valueBytes + 50 > this.itemSizeMax || !this.store.fits(keyBytes, valueBytes);
  }

  /** Looks a key up for a get; counts hits and misses. */
  get(key: string, now: number): number {
    return this.counted(this.store.find(key, now));
  }

  /** get, for the key kb[ks, ke) (the hot path: no string is made). */
  getAt(kb: Uint8Array, ks: number, ke: number, now: number): number {
    return this.counted(this.store.findAt(kb, ks, ke, now));
  }

  private counted(h: number): number {
    this.stats.cmdGet++;
    if (h === NIL) {
      this.stats.getMisses++;
      return NIL;
    }
    this.stats.getHits++;
    // written only the first time (as memcached does): a hit then only reads the item's header
    if (!this.store.hasBit(h, ItemBit.FETCHED)) this.store.setBit(h, ItemBit.FETCHED, true);
    return h;
  }

  /** gat/gats: get and set a new exptime. */
  getAndTouch(key: string, exptime: number, now: number): number {
    const h = this.store.find(key, now);
    this.stats.cmdGet++;
    this.stats.cmdTouch++;
    if (h === NIL) {
      this.stats.getMisses++;
      this.stats.touchMisses++;
      return NIL;
    }
    this.stats.getHits++;
    this.stats.touchHits++;
    this.store.setBit(h, ItemBit.FETCHED, true);
    this.store.setExpiresAt(h, expiryFromExptime(exptime, now));
    return h;
  }

  /**
   * A storage command with the value src[start, end) (copied into the store). For CAS, `cas` is
   * the client's unique (0 = none). On TOO_LARGE a `set` drops the old item, as memcached does,
   * so no stale value survives a failed write.
   */
  storeItem(
    mode: StoreMode,
    key: string,
    src: Buffer,
    start: number,
    end: number,
    flags: number,
    exptime: number,
    cas: number,
    now: number,
  ): StoreResult {
    const kb = Buffer.from(key, 'latin1');
    return this.storeItemAt(mode, kb, 0, kb.length, src, start, end, flags, exptime, cas, now);
  }

  /** storeItem, for the key kb[ks, ke). */
  storeItemAt(
    mode: StoreMode,
    kb: Uint8Array,
    ks: number,
    ke: number,
    src: Buffer,
    start: number,
    end: number,
    flags: number,
    exptime: number,
    cas: number,
    now: number,
  ): StoreResult {
    this.stats.cmdSet++;
    const store = this.store;
    if (this.tooLarge(ke - ks, end - start)) {
      if (mode === StoreMode.SET) store.deleteAt(kb, ks, ke);
      return StoreResult.TOO_LARGE;
    }
    if (mode === StoreMode.SET && cas === 0) {
      // the common case needs no lookup first: write replaces whatever is there
      return this.write(kb, ks, ke, src, start, end, flags, expiryFromExptime(exptime, now), now);
    }
    const old = store.peekAt(kb, ks, ke, now);
    switch (mode) {
      case StoreMode.ADD:
        if (old !== NIL) {
          store.findAt(kb, ks, ke, now); // memcached bumps the existing item on a failed add
          return StoreResult.NOT_STORED;
        }
        break;
      case StoreMode.REPLACE:
        if (old === NIL) return StoreResult.NOT_STORED;
        break;
      case StoreMode.APPEND:
      case StoreMode.PREPEND: {
        if (old === NIL) return StoreResult.NOT_STORED;
        if (cas !== 0 && cas !== store.casOf(old)) return StoreResult.EXISTS;
        const part = src.subarray(start, end);
        const oldValue = store.valueOf(old);
        const joined =
          mode === StoreMode.APPEND ? Buffer.concat([oldValue, part]) : Buffer.concat([part, oldValue]);
        if (this.tooLarge(ke - ks, joined.length)) return StoreResult.TOO_LARGE;
        return this.write(
          kb,
          ks,
          ke,
          joined,
          0,
          joined.length,
          store.flagsOf(old),
          store.expiresAtOf(old),
          now,
        );
      }
      case StoreMode.CAS:
        if (old === NIL) {
          this.stats.casMisses++;
          return StoreResult.NOT_FOUND;
        }
        if (store.casOf(old) !== cas || !store.casEnabled) {
          this.stats.casBadval++;
          return StoreResult.EXISTS;
        }
        this.stats.casHits++;
        break;
      default:
        if (cas !== 0 && (old === NIL || store.casOf(old) !== cas)) {
          // binary/meta set with a cas behaves as cas
          if (old === NIL) return StoreResult.NOT_FOUND;
          return StoreResult.EXISTS;
        }
    }
    return this.write(kb, ks, ke, src, start, end, flags, expiryFromExptime(exptime, now), now);
  }

  private write(
    kb: Uint8Array,
    ks: number,
    ke: number,
    src: Buffer,
    start: number,
    end: number,
    flags: number,
    expiresAt: number,
    now: number,
  ): StoreResult {
    const h = this.store.writeAt(kb, ks, ke, src, start, end, flags, expiresAt, now);
    if (h === NIL) return StoreResult.NO_MEMORY;
    this.lastHandle = h;
    return StoreResult.STORED;
  }

  delete(key: string, now: number): boolean {
    if (this.store.peekHandle(key, now) !== NIL) {
      this.store.delete(key);
      this.stats.deleteHits++;
      return true;
    }
    this.stats.deleteMisses++;
    return false;
  }

  /**
   * incr/decr with memcached's rules: unsigned 64-bit, incr wraps, decr stops at 0, and a
   * shorter result is space-padded to the old length. Result value in `lastDelta`.
   */
  delta(key: string, incr: boolean, amount: bigint, cas: number, now: number): DeltaResult {
    const store = this.store;
    const h = store.find(key, now);
    if (h === NIL) {
      if (incr) this.stats.incrMisses++;
      else this.stats.decrMisses++;
      return DeltaResult.NOT_FOUND;
    }
    if (cas !== 0 && store.casOf(h) !== cas) return DeltaResult.EXISTS;
    const value = store.valueOf(h);
    const current = parseCounter(value);
    if (current < 0n) return DeltaResult.NON_NUMERIC;
    let next: bigint;
    if (incr) {
      next = (current + amount) & MAX_U64;
      this.stats.incrHits++;
    } else {
      next = current > amount ? current - amount : 0n;
      this.stats.decrHits++;
    }
    this.lastDelta = next;
    let text = next.toString();
    if (text.length < value.length) text = text.padEnd(value.length, ' ');
    const bytes = Buffer.from(text, 'latin1');
    const kb = Buffer.from(key, 'latin1');
    if (
      this.write(kb, 0, kb.length, bytes, 0, bytes.length, store.flagsOf(h), store.expiresAtOf(h), now) !==
      StoreResult.STORED
    ) {
      return DeltaResult.NOT_FOUND;
    }
    return DeltaResult.OK;
  }

  touch(key: string, exptime: number, now: number): number {
    this.stats.cmdTouch++;
    const h = this.store.touchHandle(key, expiryFromExptime(exptime, now), now);
    if (h === NIL) this.stats.touchMisses++;
    else this.stats.touchHits++;
    return h;
  }

  /** flush_all [delay]: delay in protocol exptime units (0 = now). */
  flushAll(delay: number, now: number): void {
    this.stats.cmdFlush++;
    if (delay <= 0) this.store.flush(now, now);
    else this.store.flush(expiryFromExptime(delay, now) - 1, now);
  }
}

/**
 * Reads a stored value as memcached's counter: optional leading spaces, decimal digits that fit
 * in 64 bits, then nothing but whitespace. Returns -1n when the value is not such a number.
 */
export function parseCounter(value: Buffer): bigint {
  const n = value.length;
  if (n === 0 || n > 40) return -1n;
  let i = 0;
  while (i < n && isSpace(byteAt(value, i))) i++;
  const start = i;
  while (i < n && isDigit(byteAt(value, i))) i++;
  const end = i;
  while (i < n && isSpace(byteAt(value, i))) i++;
  if (i !== n) return -1n;
  if (end === start) return -1n;
  const result = BigInt(value.toString('latin1', start, end));
  return result > MAX_U64 ? -1n : result;
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
