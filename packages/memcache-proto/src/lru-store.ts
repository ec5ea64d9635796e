/** One cached item: the value stays a Buffer end to end and is never mutated once stored. */
export interface Item {
  key: string;
  value: Buffer;
  /** 32-bit unsigned client flags. */
  flags: number;
  /** Absolute expiry in ms since the epoch; 0 = never. */
  expiresAt: number;
  /** 64-bit unique, new on every write. */
  cas: bigint;
  /** When the item was written (ms since the epoch); used by delayed flush_all. */
  storedAt: number;
  /** Whether a get has seen the item (for expired_unfetched / evicted_unfetched). */
  fetched: boolean;
  /** When the item was last moved to the most recent end of the LRU (ms). */
  bumpedAt: number;
  /** Meta protocol: the right to recache this item (the `W` flag) was already handed out. */
  winSent?: boolean;
  /** Meta protocol: invalidated by `md <key> I`; still served, flagged `X`. */
  stale?: boolean;
}

/** Bytes counted per item besides key and value (bookkeeping), as memcached counts its item header. */
export const ITEM_OVERHEAD_BYTES = 48;

const MAX_CAS = 0xffff_ffff_ffff_ffffn;
/**
 * An item read again within this many ms keeps its LRU position: memcached's
 * ITEM_UPDATE_INTERVAL (60 s). Moving an item on every read churns the Map that keeps the order.
 */
export const BUMP_INTERVAL_MS = 60_000;

/** Counters the store keeps for `stats`. */
export interface StoreCounters {
  evictions: number;
  evictedUnfetched: number;
  expiredUnfetched: number;
  reclaimed: number;
  totalItems: number;
}

/** An item as the store holds it: linked into the recency list. */
interface Entry extends Item {
  /** The next more recently used entry; undefined at the most recent end. */
  newer: Entry | undefined;
  /** The next less recently used entry; undefined at the least recent end. */
  older: Entry | undefined;
}

/**
 * An LRU map bounded by bytes: a Map finds items by key, and an intrusive doubly linked list
 * keeps their recency, so moving an item or replacing it under the same key never adds or
 * removes Map entries (delete + re-insert leaves holes that make a big Map rehash itself
 * over and over). Expired items are dropped lazily on access and by `sweep`, which a server
 * calls on a timer.
 */
export class LruStore {
  readonly limitBytes: number;
  private readonly items = new Map<string, Entry>();
  /** Most recently used end of the list. */
  private newest: Entry | undefined;
  /** Least recently used end: the next to evict. */
  private oldest: Entry | undefined;
  private bytes = 0;
  private nextCas = 0n;
  /** Items stored at or before this time are invalid once it has passed (delayed flush_all). */
  private flushAt = 0;
  private sweepCursor: Iterator<Entry> | undefined;
  evictions = 0;
  evictedUnfetched = 0;
  expiredUnfetched = 0;
  reclaimed = 0;
  totalItems = 0;

  constructor(limitBytes: number) {
    if (!Number.isSafeInteger(limitBytes) || limitBytes <= 0) {
      throw new RangeError(`limitBytes must be a positive integer, got ${String(limitBytes)}`);
    }
    this.limitBytes = limitBytes;
  }

  get size(): number {
    return this.items.size;
  }

  get usedBytes(): number {
    return this.bytes;
  }

  /**
   * Looks an item up, drops it when expired or flushed, and marks it most recently used.
   * Like memcached, an item is moved at most once per BUMP_INTERVAL_MS: hot keys stay put.
   */
  get(key: string, now = Date.now()): Item | undefined {
    const item = this.peek(key, now) as Entry | undefined;
    if (item === undefined) return undefined;
    if (now - item.bumpedAt >= BUMP_INTERVAL_MS) {
      item.bumpedAt = now;
      this.unlink(item);
      this.link(item);
    }
    return item;
  }

  /** Like get, without touching the LRU order. */
  peek(key: string, now = Date.now()): Item | undefined {
    const item = this.items.get(key);
    if (item === undefined) return undefined;
    if (this.isDead(item, now)) {
      this.reclaim(item);
      return undefined;
    }
    return item;
  }

  /** Stores a new item (replacing any old one) and evicts least recently used items over the limit. */
  set(key: string, value: Buffer, flags = 0, expiresAt = 0, now = Date.now()): Item {
    const old = this.items.get(key);
    if (old !== undefined) {
      this.unlink(old);
      this.bytes -= sizeOf(old);
    }
    const item: Entry = {
      key,
      value,
      flags,
      expiresAt,
      cas: this.newCas(),
      storedAt: now,
      bumpedAt: now,
      fetched: false,
      newer: undefined,
      older: undefined,
    };
    this.items.set(key, item); // replaces old's Map entry in place
    this.link(item);
    this.bytes += sizeOf(item);
    this.totalItems++;
    while (this.bytes > this.limitBytes && this.items.size > 1) {
      const oldest = this.oldest!;
      if (this.isDead(oldest, now)) {
        this.reclaim(oldest);
        continue;
      }
      this.remove(oldest);
      this.evictions++;
      if (!oldest.fetched) this.evictedUnfetched++;
    }
    return item;
  }

  /** Whether an item of this size could ever be stored. */
  fits(keyBytes: number, valueBytes: number): boolean {
    return keyBytes + valueBytes + ITEM_OVERHEAD_BYTES <= this.limitBytes;
  }

  delete(key: string): boolean {
    const item = this.items.get(key);
    if (item === undefined) return false;
    this.remove(item);
    return true;
  }

  /** Gives a live item a new expiry; returns it, or undefined when missing. */
  touch(key: string, expiresAt: number, now = Date.now()): Item | undefined {
    const item = this.get(key, now);
    if (item !== undefined) item.expiresAt = expiresAt;
    return item;
  }

  /** Marks a live item stale (meta `md I`): a new cas, and the recache win is offered again. */
  invalidate(item: Item): void {
    item.stale = true;
    item.winSent = false;
    item.cas = this.newCas();
  }

  /** flush_all: at `at` (ms; <= now means now) every item stored up to then becomes invalid. */
  flush(at: number, now = Date.now()): void {
    if (at <= now) {
      this.items.clear();
      this.newest = this.oldest = undefined;
      this.bytes = 0;
      this.flushAt = 0;
      this.sweepCursor = undefined;
    } else {
      this.flushAt = at;
    }
  }

  /** Drops up to `budget` expired items, resuming where the previous sweep stopped. Returns how many. */
  sweep(now = Date.now(), budget = 10_000): number {
    let dropped = 0;
    for (let i = 0; i < budget; i++) {
      if (this.sweepCursor === undefined) this.sweepCursor = this.items.values();
      const next = this.sweepCursor.next();
      if (next.done) {
        this.sweepCursor = undefined;
        break;
      }
      if (this.isDead(next.value, now)) {
        this.reclaim(next.value);
        dropped++;
      }
    }
    return dropped;
  }

  /** Live items in LRU order (least recent first); for stats and dumps, not for hot paths. */
  *entries(now = Date.now()): IterableIterator<Item> {
    for (let item = this.oldest; item !== undefined; item = item.newer)
      if (!this.isDead(item, now)) yield item;
  }

  private isDead(item: Item, now: number): boolean {
    if (item.expiresAt !== 0 && item.expiresAt <= now) return true;
    return this.flushAt !== 0 && this.flushAt <= now && item.storedAt <= this.flushAt;
  }

  private reclaim(item: Item): void {
    this.remove(item);
    this.reclaimed++;
    if (!item.fetched) this.expiredUnfetched++;
  }

  private newCas(): bigint {
    this.nextCas = this.nextCas === MAX_CAS ? 1n : this.nextCas + 1n;
    return this.nextCas;
  }

  private remove(item: Item): void {
    this.items.delete(item.key);
    this.unlink(item as Entry);
    this.bytes -= sizeOf(item);
  }

  /** Puts an unlinked entry at the most recent end. */
  private link(entry: Entry): void {
    entry.older = this.newest;
    entry.newer = undefined;
    if (this.newest === undefined) this.oldest = entry;
    else this.newest.newer = entry;
    this.newest = entry;
  }

  private unlink(entry: Entry): void {
    const { newer, older } = entry;
    if (newer === undefined) this.newest = older;
    else newer.older = older;
    if (older === undefined) this.oldest = newer;
    else older.newer = newer;
    entry.newer = entry.older = undefined;
  }
}

function sizeOf(item: Item): number {
  return item.key.length + item.value.length + ITEM_OVERHEAD_BYTES;
}
