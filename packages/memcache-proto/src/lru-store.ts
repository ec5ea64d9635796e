/** One cached item: the value stays a Buffer end to end. */
export interface Item {
  key: string;
  value: Buffer;
  flags: number;
  /** Absolute expiry in ms since the epoch; 0 = never. */
  expiresAt: number;
  cas: bigint;
}

/** Bytes counted per item besides key and value (bookkeeping), as memcached counts its item header. */
export const ITEM_OVERHEAD_BYTES = 48;

/**
 * An LRU map bounded by bytes. A Map keeps insertion order, so re-inserting on access
 * moves an item to the most-recent end and the first key is always the least recent.
 */
export class LruStore {
  readonly limitBytes: number;
  private readonly items = new Map<string, Item>();
  private bytes = 0;
  private nextCas = 0n;
  evictions = 0;

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

  get(key: string, now = Date.now()): Item | undefined {
    const item = this.items.get(key);
    if (!item) return undefined;
    if (item.expiresAt !== 0 && item.expiresAt <= now) {
      this.remove(item);
      return undefined;
    }
    this.items.delete(key);
    this.items.set(key, item);
    return item;
  }

  set(key: string, value: Buffer, flags = 0, expiresAt = 0): Item {
    const old = this.items.get(key);
    if (old) this.remove(old);
    this.nextCas += 1n;
    const item: Item = { key, value, flags, expiresAt, cas: this.nextCas };
    this.items.set(key, item);
    this.bytes += sizeOf(item);
    while (this.bytes > this.limitBytes && this.items.size > 1) {
      const oldest = this.items.values().next().value as Item;
      this.remove(oldest);
      this.evictions++;
    }
    return item;
  }

  delete(key: string): boolean {
    const item = this.items.get(key);
    if (!item) return false;
    this.remove(item);
    return true;
  }

  private remove(item: Item): void {
    this.items.delete(item.key);
    this.bytes -= sizeOf(item);
  }
}

function sizeOf(item: Item): number {
  return Buffer.byteLength(item.key) + item.value.length + ITEM_OVERHEAD_BYTES;
}
