import { randomBytes } from 'node:crypto';
import { endianness } from 'node:os';
import { byteAt, int32At, internalError } from './checked-index.js';
import { ITEM_HEADER_BYTES, NIL, type SlabAllocator } from './slab-allocator.js';

/** Byte of an item's chunk that holds its key's length; the key's bytes start at ITEM_HEADER_BYTES. */
export const KEY_LENGTH_BYTE = 14;
const OFFSET_BITS = 17;
const OFFSET_MASK = (1 << OFFSET_BITS) - 1;
/** Slots of a new index (a power of two). */
const INITIAL_SLOTS = 1 << 12;
/** The table doubles once more than half of its slots are taken. */
const MAX_LOAD = 0.5;

const LITTLE_ENDIAN = endianness() === 'LE';

/** A per-process seed, so that which keys collide cannot be known from outside. */
const SEED = randomBytes(4).readInt32LE(0);

/**
 * A 32-bit hash of bytes [s, e): four bytes at a time, each block multiplied and rotated into
 * the state, then a final avalanche so that the low bits (the slot) depend on every byte.
 */
export function hashKey(b: Uint8Array, s: number, e: number): number {
  let h = SEED ^ (e - s);
  let i = s;
  for (const last = e - 3; i < last; i += 4) {
    // biome-ignore lint/style/noNonNullAssertion: i < e - 3 and [s, e) lies within b, so bytes i..i+3 exist (checked reads here cost the get path its inlining)
    let k = b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  // biome-ignore lint/style/noNonNullAssertion: i < e and [s, e) lies within b (checked reads here cost the lookup its inlining)
  for (let shift = 0; i < e; i++, shift += 8) k |= b[i]! << shift;
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, 0x1b873593);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function noPage(h: number): never {
  throw internalError(`indexed handle ${h} names page ${h >>> OFFSET_BITS}, which does not exist`);
}

/**
 * Finds an item's handle by its key's bytes, without a JavaScript string per key or per lookup:
 * an open-addressing table (linear probing) of (hash, handle) pairs in one Int32Array, whose
 * keys are compared where the items keep them, in their slab chunks. A lookup touches one slot
 * (usually) and the item it finds, which the caller reads next anyway. Deletion shifts the
 * following entries back, so there are no tombstones and lookups stay short as items come and go.
 */
export class KeyIndex {
  /** slots[2i] = hash, slots[2i + 1] = handle (NIL when the slot is empty). */
  private slots = new Int32Array(INITIAL_SLOTS * 2).fill(NIL);
  private mask = INITIAL_SLOTS - 1;
  private growAt = INITIAL_SLOTS * MAX_LOAD;
  /** Entries in the table. */
  size = 0;
  /** Bumped when the table is rebuilt, so that an iteration knows its position is void. */
  generation = 0;
  private readonly slabs: SlabAllocator;

  constructor(slabs: SlabAllocator) {
    this.slabs = slabs;
  }

  /** The handle of the item whose key is kb[ks, ke) (hash: hashKey of those bytes), or NIL. */
  find(kb: Uint8Array, ks: number, ke: number, hash: number): number {
    const slots = this.slots;
    const mask = this.mask;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      // biome-ignore lint/style/noNonNullAssertion: i is masked to mask = slotCount - 1, so 2i + 1 < slots.length (the probe loop of every lookup)
      const h = slots[2 * i + 1]!;
      if (h === NIL) return NIL;
      if (slots[2 * i] === hash && this.keyIs(h, kb, ks, ke)) return h;
    }
  }

  /** Adds an item that is not in the index yet. */
  insert(h: number, hash: number): void {
    if (this.size >= this.growAt) this.grow();
    this.place(this.slots, this.mask, h, hash);
    this.size++;
  }

  /** Removes the item with handle h, whose key hashes to `hash`; false when it is not indexed. */
  remove(h: number, hash: number): boolean {
    const slots = this.slots;
    const mask = this.mask;
    let i = hash & mask;
    for (; ; i = (i + 1) & mask) {
      const at = int32At(slots, 2 * i + 1);
      if (at === NIL) return false;
      if (at === h) break;
    }
    this.removeAt(i);
    return true;
  }

  /** Points the entry of handle h (whose key hashes to `hash`) at handle `to`: the item moved. */
  replace(h: number, to: number, hash: number): void {
    const slots = this.slots;
    const mask = this.mask;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const at = int32At(slots, 2 * i + 1);
      if (at === NIL) throw internalError(`handle ${h} is not in the key index`);
      if (at === h) {
        slots[2 * i + 1] = to;
        return;
      }
    }
  }

  /** The handle in slot i (NIL when empty); for iteration with `slotCount`. */
  handleAt(i: number): number {
    return int32At(this.slots, 2 * i + 1);
  }

  get slotCount(): number {
    return this.mask + 1;
  }

  clear(): void {
    this.slots = new Int32Array(INITIAL_SLOTS * 2).fill(NIL);
    this.mask = INITIAL_SLOTS - 1;
    this.growAt = INITIAL_SLOTS * MAX_LOAD;
    this.size = 0;
    this.generation++;
  }

  /** The hash of an indexed item's key, read from its chunk. */
  hashOf(h: number): number {
    const b = this.slabs.bytesOf(h);
    const start = (h & OFFSET_MASK) * 8 + ITEM_HEADER_BYTES;
    return hashKey(b, start, start + byteAt(b, start - ITEM_HEADER_BYTES + KEY_LENGTH_BYTE));
  }

  /** Empties slot i and moves later entries of its probe run back into the gap. */
  private removeAt(i: number): void {
    const slots = this.slots;
    const mask = this.mask;
    let gap = i;
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const h = int32At(slots, 2 * j + 1);
      if (h === NIL) break;
      const hash = int32At(slots, 2 * j);
      const home = hash & mask;
      // the entry at j may move to the gap unless its home lies cyclically in (gap, j]
      const stays = gap <= j ? gap < home && home <= j : gap < home || home <= j;
      if (stays) continue;
      slots[2 * gap] = hash;
      slots[2 * gap + 1] = h;
      gap = j;
    }
    slots[2 * gap + 1] = NIL;
    this.size--;
  }

  private place(slots: Int32Array, mask: number, h: number, hash: number): void {
    let i = hash & mask;
    while (slots[2 * i + 1] !== NIL) i = (i + 1) & mask;
    slots[2 * i] = hash;
    slots[2 * i + 1] = h;
  }

  /** Doubles the table. */
  private grow(): void {
    const old = this.slots;
    const slotCount = (this.mask + 1) * 2;
    const slots = new Int32Array(slotCount * 2).fill(NIL);
    const mask = slotCount - 1;
    for (let i = 0; i < old.length; i += 2) {
      const h = int32At(old, i + 1);
      if (h !== NIL) this.place(slots, mask, h, int32At(old, i));
    }
    this.slots = slots;
    this.mask = mask;
    this.growAt = (mask + 1) * MAX_LOAD;
    this.generation++;
  }

  /**
   * Whether the item h has the key kb[ks, ke). The stored key starts 8-byte aligned, so on a
   * little-endian machine it is compared a word at a time.
   */
  private keyIs(h: number, kb: Uint8Array, ks: number, ke: number): boolean {
    // the page views are looked up and checked here rather than through slabs.bytesOf/i32Of:
    // keyIs must stay small enough to be inlined into the lookup
    const page = h >>> OFFSET_BITS;
    const b = this.slabs.bytes[page];
    if (b === undefined) noPage(h);
    const off = (h & OFFSET_MASK) * 8;
    const n = ke - ks;
    if (b[off + KEY_LENGTH_BYTE] !== n) return false;
    const start = off + ITEM_HEADER_BYTES;
    let i = 0;
    if (LITTLE_ENDIAN) {
      const words = this.slabs.i32[page];
      if (words === undefined) noPage(h);
      const w = start >>> 2;
      for (; i + 4 <= n; i += 4) {
        const j = ks + i;
        // biome-ignore lint/style/noNonNullAssertion: i + 4 <= n = ke - ks, so bytes j..j+3 lie in [ks, ke) of kb (checked reads here cost the get path its inlining)
        const four = kb[j]! | (kb[j + 1]! << 8) | (kb[j + 2]! << 16) | (kb[j + 3]! << 24);
        if (words[w + (i >>> 2)] !== four) return false;
      }
    }
    for (; i < n; i++) if (b[start + i] !== kb[ks + i]) return false;
    return true;
  }
}
