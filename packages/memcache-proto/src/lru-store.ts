import { addAt, byteAt, float64At, int32At, uint32At } from './checked-index.js';
import { hashKey, KEY_LENGTH_BYTE, KeyIndex } from './key-index.js';
import { ITEM_HEADER_BYTES, NIL, SlabAllocator } from './slab-allocator.js';

/** A copy of one stored item, for callers off the hot path (tests, dumps, `me`). */
export interface Item {
  key: string;
  value: Buffer;
  /** 32-bit unsigned client flags. */
  flags: number;
  /** Absolute expiry in ms since the epoch; 0 = never. */
  expiresAt: number;
  /** Unique, new on every write (below 2^53). */
  cas: number;
  /** When the item was written (ms since the epoch); used by delayed flush_all. */
  storedAt: number;
  /** Whether a get has seen the item (for expired_unfetched / evicted_unfetched). */
  fetched: boolean;
  /** Meta protocol: the right to recache this item (the `W` flag) was already handed out. */
  winSent: boolean;
  /** Meta protocol: invalidated by `md <key> I`; still served, flagged `X`. */
  stale: boolean;
}

/** Bytes counted per item besides key and value (`bytes` stat, -m for tiny limits), as memcached counts its header. */
export const ITEM_OVERHEAD_BYTES = 48;

/**
 * An item read again within this many seconds keeps its LRU position: memcached's
 * ITEM_UPDATE_INTERVAL (60 s).
 */
export const BUMP_INTERVAL_SECONDS = 60;

/** Item bits (byte 45 of the header). */
export const ItemBit = { FETCHED: 1, WIN_SENT: 2, STALE: 4 } as const;

// Chunk layout, from the chunk's start (8-byte aligned), 40 bytes before the key:
//   double d+0  expiresAt (ms since the epoch, 0 = never)
//   words  w+2  cas, low 32 bits
//          w+3  cas bits 32..47 | key length << 16 | item bits << 24
//          w+4  newer handle, w+5 older handle (the item's LRU: its page's class)
//          w+6  client flags, w+7 value length, w+8 bumpedAt (s), w+9 storedAt (s)
//   bytes  40.. key, then value
// where d = handle & 0x1ffff (the chunk's offset in doubles) and w = 2 * d.
const F_EXPIRES = 0;
const W_CAS_LO = 2;
const W_PACKED = 3;
const W_NEWER = 4;
const W_OLDER = 5;
const W_FLAGS = 6;
const W_VLEN = 7;
const W_BUMPED = 8;
const W_STORED = 9;
const B_KLEN = KEY_LENGTH_BYTE;
const B_BITS = 15;
const OFFSET_MASK = 0x1ffff;
/** cas values wrap at 2^48 (to 1). */
const CAS_LIMIT = 2 ** 48;
/** Longest key an item can hold (its length is one byte of the chunk). */
const KEY_LIMIT = 255;
/** Characters that do not fit in one byte: string keys are byte strings (latin1). */
const NOT_LATIN1 = /[^\u0000-\u00ff]/;

export interface LruStoreOptions {
  /** Chunk size growth factor between slab classes (-f). */
  growthFactor?: number;
  /** Minimum key + value space of the smallest chunk (-n). */
  minChunkBytes?: number;
  /** false: never evict a live item to make room (-M); the write fails instead. */
  evictions?: boolean;
  /** false: every item's cas is 0 (-C). */
  casEnabled?: boolean;
}

/** Something value bytes can be copied into (the connection's OutputBuffer). */
export interface ByteSink {
  range(data: Buffer, start: number, end: number): void;
  bytes(data: Buffer): void;
}

/**
 * The item store: keys, values and metadata live in slab chunks (see SlabAllocator), and a
 * KeyIndex finds an item's handle from its key's bytes, so storing or finding an item creates
 * no JavaScript object at all. Each size class keeps its own LRU list through the chunk headers;
 * a class with no free chunk and no page left evicts its least recently used item, as
 * memcached does. The byte limit (key + value + 48 per item) also holds for tiny limits.
 * Expired items are dropped lazily on access and by `sweep`, which a server calls on a timer.
 *
 * Hot paths pass keys as bytes (`findAt`, `writeAt`: a range of the request they came in) and
 * read items through handles and the accessors. The methods that take a string key treat it as a
 * byte string (one byte per character, as `latin1`); `get`/`set`/`entries` return copies.
 */
export class LruStore {
  readonly limitBytes: number;
  readonly slabs: SlabAllocator;
  private readonly index: KeyIndex;
  /** A string key's bytes, for the methods that take string keys. */
  private readonly keyScratch = Buffer.allocUnsafeSlow(KEY_LIMIT);
  /** Per LRU (one per class, then one for large items): most and least recently used handles. */
  private readonly newest: Int32Array;
  private readonly oldest: Int32Array;
  private readonly counts: Float64Array;
  /** Per LRU: evicted, evicted unfetched, expired unfetched, reclaimed, bytes requested. */
  readonly evictedBy: Float64Array;
  readonly evictedUnfetchedBy: Float64Array;
  readonly expiredUnfetchedBy: Float64Array;
  readonly reclaimedBy: Float64Array;
  readonly requestedBy: Float64Array;
  /** Per LRU: writes that got no chunk (memcached's outofmemory). */
  readonly outOfMemoryBy: Float64Array;
  private bytes = 0;
  private nextCas = 0;
  /** Items stored at or before this time are invalid once it has passed (delayed flush_all). */
  private flushAt = 0;
  /** Where the next sweep starts: a slot of the index, valid while its generation holds. */
  private sweepSlot = 0;
  private sweepGeneration = -1;
  evictions = 0;
  evictedUnfetched = 0;
  expiredUnfetched = 0;
  reclaimed = 0;
  totalItems = 0;

  /** false: a full class answers NIL instead of evicting live items (memcached's -M). */
  readonly evictionsEnabled: boolean;
  /** false: items carry cas 0 (memcached's -C). */
  readonly casEnabled: boolean;
  /** Slab pages moved to another class or back to the budget, items moved with them, items evicted by it. */
  pagesMoved = 0;
  pageItemsRescued = 0;
  pageItemsEvicted = 0;

  constructor(limitBytes: number, options: LruStoreOptions = {}) {
    if (!Number.isSafeInteger(limitBytes) || limitBytes <= 0) {
      throw new RangeError(`limitBytes must be a positive integer, got ${String(limitBytes)}`);
    }
    this.limitBytes = limitBytes;
    this.slabs = new SlabAllocator({
      limitBytes,
      growthFactor: options.growthFactor,
      minChunkBytes: options.minChunkBytes,
    });
    this.evictionsEnabled = options.evictions ?? true;
    this.casEnabled = options.casEnabled ?? true;
    this.index = new KeyIndex(this.slabs);
    const lrus = this.slabs.classes.length + 1;
    this.newest = new Int32Array(lrus).fill(NIL);
    this.oldest = new Int32Array(lrus).fill(NIL);
    this.counts = new Float64Array(lrus);
    this.evictedBy = new Float64Array(lrus);
    this.evictedUnfetchedBy = new Float64Array(lrus);
    this.expiredUnfetchedBy = new Float64Array(lrus);
    this.reclaimedBy = new Float64Array(lrus);
    this.requestedBy = new Float64Array(lrus);
    this.outOfMemoryBy = new Float64Array(lrus);
  }

  get size(): number {
    return this.index.size;
  }

  get usedBytes(): number {
    return this.bytes;
  }

  /** Items in one LRU (class index; the last index holds large items). */
  countIn(lru: number): number {
    return float64At(this.counts, lru);
  }

  /**
   * The handle of a live item, NIL when missing, expired or flushed. Like memcached, an item
   * moves to the recent end at most once per BUMP_INTERVAL_SECONDS: hot keys stay put.
   */
  find(key: string, now: number): number {
    const n = this.keyBytes(key);
    return n < 0 ? NIL : this.findAt(this.keyScratch, 0, n, now);
  }

  /** find, for the key kb[ks, ke). */
  findAt(kb: Uint8Array, ks: number, ke: number, now: number): number {
    const h = this.peekAt(kb, ks, ke, now);
    if (h === NIL) return NIL;
    const seconds = Math.floor(now / 1000);
    if (seconds - this.slabs.pageU32(h, (h & OFFSET_MASK) * 2 + W_BUMPED) >= BUMP_INTERVAL_SECONDS)
      this.bump(h, seconds);
    return h;
  }

  /** Moves item h to the recent end of its LRU (kept out of findAt, which every get runs). */
  private bump(h: number, seconds: number): void {
    this.slabs.u32Of(h)[(h & OFFSET_MASK) * 2 + W_BUMPED] = seconds;
    this.unlink(h);
    this.link(h);
  }

  /** Like find, without touching the LRU order. */
  peekHandle(key: string, now: number): number {
    const n = this.keyBytes(key);
    return n < 0 ? NIL : this.peekAt(this.keyScratch, 0, n, now);
  }

  /** peekHandle, for the key kb[ks, ke). */
  peekAt(kb: Uint8Array, ks: number, ke: number, now: number): number {
    const h = this.index.find(kb, ks, ke, hashKey(kb, ks, ke));
    if (h === NIL) return NIL;
    if (this.isDead(h, now)) {
      this.reclaim(h);
      return NIL;
    }
    return h;
  }

  /**
   * Stores src[start, end) under key (replacing any old item) and returns its handle, or NIL
   * when no chunk could be had (the old item is gone then too, as memcached drops it).
   */
  write(
    key: string,
    src: Buffer,
    start: number,
    end: number,
    flags: number,
    expiresAt: number,
    now: number,
  ): number {
    const n = this.keyBytes(key);
    if (n < 0) {
      throw new RangeError(
        `a key is at most ${KEY_LIMIT} characters, each below U+0100, got ${JSON.stringify(key.slice(0, 300))}`,
      );
    }
    return this.writeAt(this.keyScratch, 0, n, src, start, end, flags, expiresAt, now);
  }

  /** write, for the key kb[ks, ke) (at most 255 bytes). */
  writeAt(
    kb: Uint8Array,
    ks: number,
    ke: number,
    src: Buffer,
    start: number,
    end: number,
    flags: number,
    expiresAt: number,
    now: number,
  ): number {
    const klen = ke - ks;
    if (klen > KEY_LIMIT) throw new RangeError(`a key is at most ${KEY_LIMIT} bytes here, got ${klen}`);
    const hash = hashKey(kb, ks, ke);
    const old = this.index.find(kb, ks, ke, hash);
    if (old !== NIL) {
      this.index.remove(old, hash);
      this.free(old);
    }
    const vlen = end - start;
    const size = ITEM_HEADER_BYTES + klen + vlen;
    const lru = this.slabs.classFor(size);
    const h = this.allocate(lru, size, now);
    if (h === NIL) {
      addAt(this.outOfMemoryBy, lru < 0 ? this.slabs.classes.length : lru, 1);
      return NIL;
    }
    const d = h & OFFSET_MASK;
    const off = d * 8;
    const w = d * 2;
    const f = this.slabs.f64Of(h);
    const u = this.slabs.u32Of(h);
    const b = this.slabs.bytesOf(h);
    f[d + F_EXPIRES] = expiresAt;
    u[w + W_PACKED] = klen << 16; // item bits 0
    this.newCas(u, w);
    u[w + W_FLAGS] = flags;
    u[w + W_VLEN] = vlen;
    const seconds = Math.floor(now / 1000);
    u[w + W_BUMPED] = seconds;
    u[w + W_STORED] = seconds;
    const l = lru < 0 ? this.slabs.classes.length : lru;
    const keyAt = off + ITEM_HEADER_BYTES;
    for (let i = 0; i < klen; i++) b[keyAt + i] = byteAt(kb, ks + i);
    src.copy(b, keyAt + klen, start, end);
    this.index.insert(h, hash);
    this.link(h);
    const counted = ITEM_OVERHEAD_BYTES + klen + vlen;
    addAt(this.counts, l, 1);
    addAt(this.requestedBy, l, counted);
    this.bytes += counted;
    this.totalItems++;
    // the byte limit: evict least recently used items of the same LRU
    while (this.bytes > this.limitBytes) {
      const tail = int32At(this.oldest, l);
      if (tail === h || tail === NIL) break;
      if (!this.evictionsEnabled && !this.isDead(tail, now)) {
        this.remove(h);
        return NIL;
      }
      this.evictOrReclaim(tail, now);
    }
    return h;
  }

  /** A chunk for an item of `size` bytes in class lru (-1: large), evicting when the class is full. */
  private allocate(lru: number, size: number, now: number): number {
    const slabs = this.slabs;
    const l = lru < 0 ? slabs.classes.length : lru;
    // expired items at the tail go before the class takes a new page
    for (let i = 0; i < 5; i++) {
      const tail = int32At(this.oldest, l);
      if (tail === NIL || !this.isDead(tail, now)) break;
      if (lru >= 0 && slabs.classAt(lru).free !== NIL) break;
      this.reclaim(tail);
    }
    for (;;) {
      const h = lru < 0 ? slabs.allocLarge(size) : slabs.alloc(lru);
      if (h !== NIL) return h;
      const tail = int32At(this.oldest, l);
      if (tail !== NIL && (this.evictionsEnabled || this.isDead(tail, now))) {
        this.evictOrReclaim(tail, now);
        continue;
      }
      // A large item with no large item left to evict: the budget is in slab pages, so the
      // least recently used class gives one back (memcached keeps large items in chunks of the
      // slab classes instead, and evicts from those).
      if (lru >= 0 || !this.evictionsEnabled || !this.freeOnePage(now)) return NIL;
    }
  }

  /**
   * Moves the items out of page p: each into a free chunk of its class in another page when
   * there is one, else it is evicted; then the page goes to class `to`, or back to the page
   * budget when `to` is negative. memcached's slab reassign.
   */
  movePage(p: number, to: number, now: number): void {
    const slabs = this.slabs;
    const c = slabs.pageOwner(p);
    const cls = slabs.classAt(c);
    const empty = slabs.detachPage(p);
    for (let i = 0; i < cls.perPage; i++) {
      if (empty[i] === 1) continue;
      const h = slabs.chunkOf(p, i);
      const dead = this.isDead(h, now);
      const target = dead ? NIL : slabs.allocFree(c);
      if (target !== NIL) {
        this.relocate(h, target);
        this.pageItemsRescued++;
      } else {
        const unfetched = !this.hasBit(h, ItemBit.FETCHED);
        this.index.remove(h, this.index.hashOf(h));
        this.forget(h, c);
        if (dead) {
          this.reclaimed++;
          addAt(this.reclaimedBy, c, 1);
          if (unfetched) {
            this.expiredUnfetched++;
            addAt(this.expiredUnfetchedBy, c, 1);
          }
        } else {
          this.pageItemsEvicted++;
          this.evictions++;
          addAt(this.evictedBy, c, 1);
          if (unfetched) {
            this.evictedUnfetched++;
            addAt(this.evictedUnfetchedBy, c, 1);
          }
        }
      }
      slabs.forgetChunk(c);
    }
    this.pagesMoved++;
    if (to < 0) slabs.releasePage(p);
    else slabs.adoptPage(p, to);
  }

  /**
   * Gives one slab page back to the budget, from the class whose least recently used item is
   * the oldest among those with more than one page (memcached's automove picks its source by
   * that age too); the page is the one holding that item. False when no class has a page to spare.
   */
  private freeOnePage(now: number): boolean {
    const p = this.pageToGive(-1);
    if (p < 0) return false;
    this.movePage(p, -1, now);
    return true;
  }

  /** The page the oldest class (more than one page, not `except`) would give; -1 when none may. */
  pageToGive(except: number): number {
    const slabs = this.slabs;
    let best = -1;
    let bestAge = Number.POSITIVE_INFINITY;
    for (let c = 0; c < slabs.classes.length; c++) {
      if (c === except || slabs.classAt(c).pages < 2) continue;
      const tail = int32At(this.oldest, c);
      // a class with pages and no item at all is the best source: nothing is evicted
      const at = tail === NIL ? -1 : this.slabs.pageU32(tail, (tail & OFFSET_MASK) * 2 + W_BUMPED);
      if (at < bestAge) {
        bestAge = at;
        best = c;
      }
    }
    return best < 0 ? -1 : this.pageOfClass(best);
  }

  /** The page class c would give: the one holding its least recently used item (any of its pages when it has none). */
  pageOfClass(c: number): number {
    const tail = int32At(this.oldest, c);
    if (tail !== NIL) return SlabAllocator.page(tail);
    const slabs = this.slabs;
    for (let p = 0; p < slabs.pageCount; p++) if (slabs.pageOwner(p) === c) return p;
    return -1;
  }

  /** Copies item h into the free chunk `to` of its class and points its index entry and LRU neighbours there. */
  private relocate(h: number, to: number): void {
    const slabs = this.slabs;
    const l = this.lruOf(h);
    const from = (h & OFFSET_MASK) * 8;
    const length = ITEM_HEADER_BYTES + this.keyLengthOf(h) + this.valueLength(h);
    slabs.bytesOf(to).set(slabs.bytesOf(h).subarray(from, from + length), (to & OFFSET_MASK) * 8);
    this.index.replace(h, to, this.index.hashOf(to));
    const w = (to & OFFSET_MASK) * 2;
    const words = slabs.i32Of(to);
    const newer = int32At(words, w + W_NEWER);
    const older = int32At(words, w + W_OLDER);
    if (newer === NIL) this.newest[l] = to;
    else slabs.i32Of(newer)[(newer & OFFSET_MASK) * 2 + W_OLDER] = to;
    if (older === NIL) this.oldest[l] = to;
    else slabs.i32Of(older)[(older & OFFSET_MASK) * 2 + W_NEWER] = to;
  }

  private evictOrReclaim(h: number, now: number): void {
    if (this.isDead(h, now)) {
      this.reclaim(h);
      return;
    }
    const l = this.lruOf(h);
    const unfetched = !this.hasBit(h, ItemBit.FETCHED);
    this.remove(h);
    this.evictions++;
    addAt(this.evictedBy, l, 1);
    if (unfetched) {
      this.evictedUnfetched++;
      addAt(this.evictedUnfetchedBy, l, 1);
    }
  }

  /** Whether an item of this size could ever be stored. */
  fits(keyBytes: number, valueBytes: number): boolean {
    return keyBytes + valueBytes + ITEM_OVERHEAD_BYTES <= this.limitBytes;
  }

  delete(key: string): boolean {
    const n = this.keyBytes(key);
    return n >= 0 && this.deleteAt(this.keyScratch, 0, n);
  }

  /** delete, for the key kb[ks, ke). */
  deleteAt(kb: Uint8Array, ks: number, ke: number): boolean {
    const h = this.index.find(kb, ks, ke, hashKey(kb, ks, ke));
    if (h === NIL) return false;
    this.remove(h);
    return true;
  }

  /**
   * Puts a string key's bytes in keyScratch; returns their count, or -1 when the key cannot be
   * an item's (longer than 255 characters, or a character above U+00FF).
   */
  private keyBytes(key: string): number {
    if (key.length > KEY_LIMIT || NOT_LATIN1.test(key)) return -1;
    return this.keyScratch.write(key, 0, key.length, 'latin1');
  }

  /** Gives a live item a new expiry; returns its handle, or NIL when missing. */
  touchHandle(key: string, expiresAt: number, now: number): number {
    const h = this.find(key, now);
    if (h !== NIL) this.setExpiresAt(h, expiresAt);
    return h;
  }

  // ---- accessors (hot paths) ----

  valueLength(h: number): number {
    return this.slabs.pageU32(h, (h & OFFSET_MASK) * 2 + W_VLEN);
  }

  flagsOf(h: number): number {
    return this.slabs.pageU32(h, (h & OFFSET_MASK) * 2 + W_FLAGS);
  }

  casOf(h: number): number {
    const slabs = this.slabs;
    return (
      (slabs.pageU32(h, (h & OFFSET_MASK) * 2 + W_PACKED) & 0xffff) * 0x1_0000_0000 +
      slabs.pageU32(h, (h & OFFSET_MASK) * 2 + W_CAS_LO)
    );
  }

  /** Gives the item at word w of page words u the next cas. */
  private newCas(u: Uint32Array, w: number): void {
    if (!this.casEnabled) {
      u[w + W_CAS_LO] = 0;
      u[w + W_PACKED] = uint32At(u, w + W_PACKED) & 0xffff_0000;
      return;
    }
    this.nextCas = this.nextCas + 1 >= CAS_LIMIT ? 1 : this.nextCas + 1;
    u[w + W_CAS_LO] = this.nextCas % 0x1_0000_0000;
    u[w + W_PACKED] = (uint32At(u, w + W_PACKED) & 0xffff_0000) | Math.floor(this.nextCas / 0x1_0000_0000);
  }

  expiresAtOf(h: number): number {
    return this.slabs.pageF64(h, (h & OFFSET_MASK) + F_EXPIRES);
  }

  setExpiresAt(h: number, expiresAt: number): void {
    this.slabs.f64Of(h)[(h & OFFSET_MASK) + F_EXPIRES] = expiresAt;
  }

  /** When the item was last moved to the recent end of its LRU (written or read), in seconds since the epoch. */
  accessedAtOf(h: number): number {
    return this.slabs.pageU32(h, (h & OFFSET_MASK) * 2 + W_BUMPED);
  }

  /** When the item was written, ms since the epoch (kept to the second, as memcached does). */
  storedAtOf(h: number): number {
    return this.slabs.pageU32(h, (h & OFFSET_MASK) * 2 + W_STORED) * 1000;
  }

  hasBit(h: number, bit: number): boolean {
    return (this.slabs.pageByte(h, (h & OFFSET_MASK) * 8 + B_BITS) & bit) !== 0;
  }

  setBit(h: number, bit: number, on: boolean): void {
    const b = this.slabs.bytesOf(h);
    const at = (h & OFFSET_MASK) * 8 + B_BITS;
    const bits = byteAt(b, at);
    b[at] = on ? bits | bit : bits & ~bit;
  }

  /** The LRU (class index, or the large-item LRU) an item is in. */
  lruOf(h: number): number {
    return this.slabs.classOf(h);
  }

  /** The page holding item h: its bytes (from offset 0), and the ArrayBuffer under them. */
  pageOf(h: number): Buffer {
    return this.slabs.bytesOf(h);
  }

  bufferOf(h: number): ArrayBuffer {
    return this.slabs.bufferOf(h);
  }

  /** Where item h's key starts in its page; the value follows the key. */
  keyOffsetOf(h: number): number {
    return (h & OFFSET_MASK) * 8 + ITEM_HEADER_BYTES;
  }

  keyLengthOf(h: number): number {
    return this.slabs.pageByte(h, (h & OFFSET_MASK) * 8 + B_KLEN);
  }

  /** Whether item h has a buffer of its own (too large for any class), never written again. */
  isLarge(h: number): boolean {
    return this.slabs.isLarge(h);
  }

  /** Copies the item's value into sink (a large item's own buffer is passed by reference). */
  copyValue(h: number, sink: ByteSink): void {
    const b = this.slabs.bytesOf(h);
    const off = (h & OFFSET_MASK) * 8;
    const start = off + ITEM_HEADER_BYTES + this.keyLengthOf(h);
    const end = start + this.valueLength(h);
    if (this.lruOf(h) === this.slabs.classes.length) sink.bytes(b.subarray(start, end));
    else sink.range(b, start, end);
  }

  /** A copy of the value (off the hot path). */
  valueOf(h: number): Buffer {
    const b = this.slabs.bytesOf(h);
    const off = (h & OFFSET_MASK) * 8;
    const start = off + ITEM_HEADER_BYTES + this.keyLengthOf(h);
    return Buffer.from(b.subarray(start, start + this.valueLength(h)));
  }

  keyOf(h: number): string {
    const b = this.slabs.bytesOf(h);
    const off = (h & OFFSET_MASK) * 8;
    return b.toString('latin1', off + ITEM_HEADER_BYTES, off + ITEM_HEADER_BYTES + this.keyLengthOf(h));
  }

  /** Marks a live item stale (meta `md I`): a new cas, and the recache win is offered again. */
  invalidate(h: number): void {
    this.setBit(h, ItemBit.STALE, true);
    this.setBit(h, ItemBit.WIN_SENT, false);
    this.newCas(this.slabs.u32Of(h), (h & OFFSET_MASK) * 2);
  }

  /** A copy of the item behind a handle. */
  item(h: number): Item {
    return {
      key: this.keyOf(h),
      value: this.valueOf(h),
      flags: this.flagsOf(h),
      expiresAt: this.expiresAtOf(h),
      cas: this.casOf(h),
      storedAt: this.storedAtOf(h),
      fetched: this.hasBit(h, ItemBit.FETCHED),
      winSent: this.hasBit(h, ItemBit.WIN_SENT),
      stale: this.hasBit(h, ItemBit.STALE),
    };
  }

  // ---- convenience (copies; not for hot paths) ----

  /** A copy of a live item, moving it in the LRU as `find` does. */
  get(key: string, now = Date.now()): Item | undefined {
    const h = this.find(key, now);
    return h === NIL ? undefined : this.item(h);
  }

  /** Like get, without touching the LRU order. */
  peek(key: string, now = Date.now()): Item | undefined {
    const h = this.peekHandle(key, now);
    return h === NIL ? undefined : this.item(h);
  }

  /** Stores a value; returns a copy of the stored item, undefined when it could not be stored. */
  set(key: string, value: Buffer, flags = 0, expiresAt = 0, now = Date.now()): Item | undefined {
    const h = this.write(key, value, 0, value.length, flags, expiresAt, now);
    return h === NIL ? undefined : this.item(h);
  }

  /** Gives a live item a new expiry; returns a copy, or undefined when missing. */
  touch(key: string, expiresAt: number, now = Date.now()): Item | undefined {
    const h = this.touchHandle(key, expiresAt, now);
    return h === NIL ? undefined : this.item(h);
  }

  /** flush_all: at `at` (ms; <= now means now) every item stored up to then becomes invalid. */
  flush(at: number, now = Date.now()): void {
    if (at <= now) {
      this.index.clear();
      this.slabs.reset();
      this.newest.fill(NIL);
      this.oldest.fill(NIL);
      this.counts.fill(0);
      this.requestedBy.fill(0);
      this.bytes = 0;
      this.flushAt = 0;
    } else {
      this.flushAt = at;
    }
  }

  /** Looks at up to `budget` items, dropping the expired ones, from where the previous sweep stopped. Returns how many it dropped. */
  sweep(now = Date.now(), budget = 10_000): number {
    const index = this.index;
    if (this.sweepGeneration !== index.generation) {
      // the table was rebuilt since the last sweep: its slots hold other items now
      this.sweepGeneration = index.generation;
      this.sweepSlot = 0;
    }
    let dropped = 0;
    // budget counts items looked at; empty slots are skipped (a step ends at the table's end)
    for (let seen = 0; seen < budget && this.sweepSlot < index.slotCount; ) {
      const h = index.handleAt(this.sweepSlot);
      if (h === NIL) {
        this.sweepSlot++;
        continue;
      }
      seen++;
      if (this.isDead(h, now)) {
        // removal moves a later entry into this slot: look at it again
        this.reclaim(h);
        dropped++;
      } else {
        this.sweepSlot++;
      }
    }
    if (this.sweepSlot >= index.slotCount) this.sweepSlot = 0;
    return dropped;
  }

  /** Copies of the live items, each LRU least recent first; for stats and dumps, not for hot paths. */
  *entries(now = Date.now()): IterableIterator<Item> {
    for (let l = 0; l < this.oldest.length; l++) {
      for (
        let h = int32At(this.oldest, l);
        h !== NIL;
        h = this.slabs.pageI32(h, (h & OFFSET_MASK) * 2 + W_NEWER)
      )
        if (!this.isDead(h, now)) yield this.item(h);
    }
  }

  /** The least recently used live item of an LRU, NIL when it has none (for `stats items` age). */
  oldestIn(lru: number): number {
    return int32At(this.oldest, lru);
  }

  private isDead(h: number, now: number): boolean {
    const expiresAt = this.slabs.pageF64(h, (h & OFFSET_MASK) + F_EXPIRES);
    if (expiresAt !== 0 && expiresAt <= now) return true;
    const flushAt = this.flushAt;
    return (
      flushAt !== 0 &&
      flushAt <= now &&
      this.slabs.pageU32(h, (h & OFFSET_MASK) * 2 + W_STORED) * 1000 <= flushAt
    );
  }

  private reclaim(h: number): void {
    const l = this.lruOf(h);
    const unfetched = !this.hasBit(h, ItemBit.FETCHED);
    this.remove(h);
    this.reclaimed++;
    addAt(this.reclaimedBy, l, 1);
    if (unfetched) {
      this.expiredUnfetched++;
      addAt(this.expiredUnfetchedBy, l, 1);
    }
  }

  /** Drops an item: its index entry, its LRU links and its chunk. */
  private remove(h: number): void {
    this.index.remove(h, this.index.hashOf(h));
    this.free(h);
  }

  /** Unlinks an item and returns its chunk; its index entry stays (the caller removes it first). */
  private free(h: number): void {
    const l = this.lruOf(h);
    this.forget(h, l);
    if (l === this.slabs.classes.length) this.slabs.releaseLarge(h);
    else this.slabs.release(l, h);
  }

  /** Unlinks item h from LRU l and uncounts it; its chunk is the caller's to return or drop. */
  private forget(h: number, l: number): void {
    const counted = ITEM_OVERHEAD_BYTES + this.keyLengthOf(h) + this.valueLength(h);
    this.unlink(h);
    addAt(this.counts, l, -1);
    addAt(this.requestedBy, l, -counted);
    this.bytes -= counted;
  }

  /** Puts an unlinked item at the most recent end of its LRU. */
  private link(h: number): void {
    const l = this.lruOf(h);
    const words = this.slabs.i32Of(h);
    const w = (h & OFFSET_MASK) * 2;
    const newest = int32At(this.newest, l);
    words[w + W_OLDER] = newest;
    words[w + W_NEWER] = NIL;
    if (newest === NIL) this.oldest[l] = h;
    else this.slabs.i32Of(newest)[(newest & OFFSET_MASK) * 2 + W_NEWER] = h;
    this.newest[l] = h;
  }

  private unlink(h: number): void {
    const l = this.lruOf(h);
    const slabs = this.slabs;
    const words = slabs.i32Of(h);
    const w = (h & OFFSET_MASK) * 2;
    const newer = int32At(words, w + W_NEWER);
    const older = int32At(words, w + W_OLDER);
    if (newer === NIL) this.newest[l] = older;
    else slabs.i32Of(newer)[(newer & OFFSET_MASK) * 2 + W_OLDER] = older;
    if (older === NIL) this.oldest[l] = newer;
    else slabs.i32Of(older)[(older & OFFSET_MASK) * 2 + W_NEWER] = newer;
    words[w + W_NEWER] = NIL;
    words[w + W_OLDER] = NIL;
  }
}
