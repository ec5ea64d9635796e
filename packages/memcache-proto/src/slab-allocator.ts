import { internalError } from './checked-index.js';

/** memcached's slab page: every size class grows by whole pages of this size. */
export const PAGE_BYTES = 1024 * 1024;
/** Bytes of item metadata at the start of every chunk (see LruStore for the layout). */
export const ITEM_HEADER_BYTES = 40;
/** memcached's item struct: its smallest chunk is this plus `-n`, as ours is (same classes). */
const CLASS_BASE_BYTES = 48;
/** Chunks start at multiples of 8 bytes, so a handle keeps offset / 8. */
const ALIGN = 8;
const OFFSET_BITS = 17; // PAGE_BYTES / ALIGN = 2^17 slots per page
const OFFSET_MASK = (1 << OFFSET_BITS) - 1;
/** Largest chunk carved from a page (memcached's slab_chunk_max: half a page). */
const CHUNK_MAX = PAGE_BYTES / 2;
/** Handles stay small integers (V8 Smis, below 2^30): at most 8191 pages of handles. */
const MAX_PAGES = (1 << 30) >>> OFFSET_BITS;
/** pageClass of a large item's own buffer. */
const LARGE = -1;
/** The "no chunk" handle. */
export const NIL = -1;

export interface SlabOptions {
  /** Page budget in bytes (memcached's -m); each class may still take its first page. */
  limitBytes: number;
  /** Chunk size growth factor between classes (memcached's -f). Default 1.25. */
  growthFactor?: number;
  /** Minimum space for key + value in the smallest chunk (memcached's -n). Default 48. */
  minChunkBytes?: number;
}

/** One size class: chunks of one size carved from whole pages, a free list through the chunks. */
export interface SlabClass {
  readonly id: number;
  readonly chunkSize: number;
  readonly perPage: number;
  pages: number;
  /** Chunks handed out. */
  used: number;
  /** Head of the free list (each free chunk's first word holds the next), NIL when empty. */
  free: number;
  freeCount: number;
  /** Next never-used chunk of the newest page, NIL when the page is full. */
  carve: number;
  carveLeft: number;
}

/**
 * memcached's slab allocator: items live in chunks of size classes growing by a factor (`-f`)
 * from a minimum (`-n`), carved from 1 MB pages that are allocated once and never returned,
 * so storing an item allocates no JavaScript object. Items larger than half a page get a buffer
 * of their own (memcached chains chunks instead), counted in `mallocedBytes` as well.
 *
 * A chunk is named by a handle: page index << 17 | offset / 8, a small integer. The pages are
 * reachable as bytes, 32-bit words and 64-bit floats over the same memory.
 */
export class SlabAllocator {
  readonly classes: SlabClass[] = [];
  readonly limitBytes: number;
  /** The bytes, words (Int32 and Uint32) and doubles of every page, by page index. */
  readonly bytes: Buffer[] = [];
  /** Each page's ArrayBuffer (its bytes start at offset 0): views over it are the cheapest to make. */
  readonly buffers: ArrayBuffer[] = [];
  readonly i32: Int32Array[] = [];
  readonly u32: Uint32Array[] = [];
  readonly f64: Float64Array[] = [];
  /** Pages (and large-item buffers) allocated, in bytes. */
  mallocedBytes = 0;
  /** The class index owning each page; LARGE for a large item's own buffer. */
  private readonly pageClass: number[] = [];

  /** Page indexes of freed large-item buffers, to reuse. */
  private readonly freePageIndexes: number[] = [];

  /** The class index of the page holding a handle's chunk; classes.length for a large item. */
  classOf(h: number): number {
    const c = this.pageClass[h >>> OFFSET_BITS] ?? noPage(h);
    return c === LARGE ? this.classes.length : c;
  }

  /** Whether h is a large item's own buffer (a comparison only: small enough to inline on the get path). */
  isLarge(h: number): boolean {
    return this.pageClass[h >>> OFFSET_BITS] === LARGE;
  }

  /** Class c (an index into `classes`, as classFor and classOf give). */
  classAt(c: number): SlabClass {
    return this.classes[c] ?? noClass(c);
  }

  // The views of the page holding a handle's chunk (a handle this allocator handed out).

  bytesOf(h: number): Buffer {
    return this.bytes[h >>> OFFSET_BITS] ?? noPage(h);
  }

  bufferOf(h: number): ArrayBuffer {
    return this.buffers[h >>> OFFSET_BITS] ?? noPage(h);
  }

  i32Of(h: number): Int32Array {
    return this.i32[h >>> OFFSET_BITS] ?? noPage(h);
  }

  u32Of(h: number): Uint32Array {
    return this.u32[h >>> OFFSET_BITS] ?? noPage(h);
  }

  f64Of(h: number): Float64Array {
    return this.f64[h >>> OFFSET_BITS] ?? noPage(h);
  }

  // Reads of the page holding chunk h, at an index inside that chunk (the caller computes it
  // from the handle and a field of the 40-byte item header). These four carry every read of an
  // item's metadata on the get path, so they must stay under 27 bytes of bytecode: V8 inlines a
  // function that small wherever it is called, while a checked lookup and read here (twice the
  // size) left reads out of line on the get path and cost the 100-key get 6-10 % in the protocol
  // microbench. h is a handle this allocator handed out and the caller still holds, so its page
  // exists; code off the get path uses the checked bytesOf & co.

  pageByte(h: number, i: number): number {
    // biome-ignore lint/style/noNonNullAssertion: h names a live chunk of an existing page and i lies inside that chunk (see above)
    return this.bytes[h >>> OFFSET_BITS]![i]!;
  }

  pageI32(h: number, i: number): number {
    // biome-ignore lint/style/noNonNullAssertion: h names a live chunk of an existing page and i lies inside that chunk (see above)
    return this.i32[h >>> OFFSET_BITS]![i]!;
  }

  pageU32(h: number, i: number): number {
    // biome-ignore lint/style/noNonNullAssertion: h names a live chunk of an existing page and i lies inside that chunk (see above)
    return this.u32[h >>> OFFSET_BITS]![i]!;
  }

  pageF64(h: number, i: number): number {
    // biome-ignore lint/style/noNonNullAssertion: h names a live chunk of an existing page and i lies inside that chunk (see above)
    return this.f64[h >>> OFFSET_BITS]![i]!;
  }

  constructor(options: SlabOptions) {
    this.limitBytes = options.limitBytes;
    const factor = options.growthFactor ?? 1.25;
    let size = CLASS_BASE_BYTES + (options.minChunkBytes ?? 48);
    while (this.classes.length < 62 && size < CHUNK_MAX / factor) {
      if (size % ALIGN !== 0) size += ALIGN - (size % ALIGN);
      this.addClass(size);
      size *= factor;
    }
    this.addClass(CHUNK_MAX);
  }

  private addClass(chunkSize: number): void {
    this.classes.push({
      id: this.classes.length + 1,
      chunkSize,
      perPage: Math.floor(PAGE_BYTES / chunkSize),
      pages: 0,
      used: 0,
      free: NIL,
      freeCount: 0,
      carve: NIL,
      carveLeft: 0,
    });
  }

  /** The class index (into `classes`) for an item of this many bytes; -1 when it needs a large buffer. */
  classFor(itemBytes: number): number {
    const classes = this.classes;
    if (itemBytes > CHUNK_MAX) return -1;
    let lo = 0;
    let hi = classes.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.classAt(mid).chunkSize >= itemBytes) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** A free chunk of class c, or NIL when the class is full and the page budget is spent. */
  alloc(c: number): number {
    const cls = this.classAt(c);
    let h = cls.free;
    if (h !== NIL) {
      cls.free = this.pageI32(h, (h & OFFSET_MASK) * 2);
      cls.freeCount--;
    } else {
      if (cls.carveLeft === 0 && !this.grow(cls)) return NIL;
      h = cls.carve;
      cls.carveLeft--;
      cls.carve = cls.carveLeft === 0 ? NIL : h + cls.chunkSize / ALIGN;
    }
    cls.used++;
    return h;
  }

  /** Returns a chunk of class c to its free list. */
  release(c: number, h: number): void {
    const cls = this.classAt(c);
    this.i32Of(h)[(h & OFFSET_MASK) * 2] = cls.free;
    cls.free = h;
    cls.freeCount++;
    cls.used--;
  }

  /** Whether class c could hand out a chunk without evicting. */
  hasRoom(c: number): boolean {
    const cls = this.classAt(c);
    return cls.free !== NIL || cls.carveLeft > 0 || this.mayGrow(cls);
  }

  private mayGrow(cls: SlabClass): boolean {
    return (
      (cls.pages === 0 || this.mallocedBytes + PAGE_BYTES <= this.limitBytes) && this.bytes.length < MAX_PAGES
    );
  }

  private grow(cls: SlabClass): boolean {
    if (!this.mayGrow(cls)) return false;
    const page = this.newPage(PAGE_BYTES, cls.id - 1);
    cls.pages++;
    cls.carve = page << OFFSET_BITS;
    cls.carveLeft = cls.perPage;
    return true;
  }

  /** Whether a large item of this many bytes fits in the page budget now. */
  largeFits(itemBytes: number): boolean {
    return this.mallocedBytes + Math.ceil(itemBytes / ALIGN) * ALIGN <= this.limitBytes;
  }

  /** A buffer of its own for an item too large for any class; NIL past the page budget. */
  allocLarge(itemBytes: number): number {
    const size = Math.ceil(itemBytes / ALIGN) * ALIGN;
    if (this.mallocedBytes + size > this.limitBytes || this.bytes.length >= MAX_PAGES) return NIL;
    return this.newPage(size, LARGE) << OFFSET_BITS;
  }

  releaseLarge(h: number): void {
    this.dropMemory(h >>> OFFSET_BITS);
  }

  /** The class index owning page p (LARGE, -1, for a large item's buffer or a released page). */
  pageOwner(p: number): number {
    return this.pageClass[p] ?? noPage(p << OFFSET_BITS);
  }

  /** Number of page indexes handed out so far (some may be released). */
  get pageCount(): number {
    return this.bytes.length;
  }

  /**
   * Takes page p out of its class's allocation: its free chunks leave the class's free list and
   * carving stops there, so the class hands out no chunk of it any more. Returns one byte per
   * chunk of the page: 1 where the chunk holds no item. The caller then moves or drops the
   * items of the other chunks and ends with releasePage or adoptPage.
   */
  detachPage(p: number): Uint8Array {
    const cls = this.classAt(this.pageOwner(p));
    const empty = new Uint8Array(cls.perPage);
    let prev = NIL;
    for (let h = cls.free; h !== NIL; ) {
      const next = this.pageI32(h, (h & OFFSET_MASK) * 2);
      if (h >>> OFFSET_BITS === p) {
        empty[((h & OFFSET_MASK) * ALIGN) / cls.chunkSize] = 1;
        if (prev === NIL) cls.free = next;
        else this.i32Of(prev)[(prev & OFFSET_MASK) * 2] = next;
        cls.freeCount--;
      } else {
        prev = h;
      }
      h = next;
    }
    if (cls.carve !== NIL && cls.carve >>> OFFSET_BITS === p) {
      for (let i = cls.perPage - cls.carveLeft; i < cls.perPage; i++) empty[i] = 1;
      cls.carve = NIL;
      cls.carveLeft = 0;
    }
    return empty;
  }

  /** The handles on class c's free list (not the never-carved rest of its newest page). */
  *freeChunks(c: number): IterableIterator<number> {
    for (let h = this.classAt(c).free; h !== NIL; h = this.pageI32(h, (h & OFFSET_MASK) * 2)) yield h;
  }

  /** The handle of chunk i of page p (of the class owning p). */
  chunkOf(p: number, i: number): number {
    return (p << OFFSET_BITS) + (i * this.classAt(this.pageOwner(p)).chunkSize) / ALIGN;
  }

  /** A free chunk of class c from its free list only (no carving, no new page), or NIL. */
  allocFree(c: number): number {
    const cls = this.classAt(c);
    const h = cls.free;
    if (h === NIL) return NIL;
    cls.free = this.pageI32(h, (h & OFFSET_MASK) * 2);
    cls.freeCount--;
    cls.used++;
    return h;
  }

  /** A chunk of class c left its class without going back to the free list (its page is detached). */
  forgetChunk(c: number): void {
    this.classAt(c).used--;
  }

  /** Returns a detached page's memory: the page budget (-m) gains a page. */
  releasePage(p: number): void {
    this.classAt(this.pageOwner(p)).pages--;
    this.dropMemory(p);
  }

  /** Gives a detached page to class c, whose next chunks are carved from it. */
  adoptPage(p: number, c: number): void {
    this.classAt(this.pageOwner(p)).pages--;
    const cls = this.classAt(c);
    this.pageClass[p] = c;
    cls.pages++;
    const first = p << OFFSET_BITS;
    if (cls.carveLeft === 0) {
      cls.carve = first;
      cls.carveLeft = cls.perPage;
      return;
    }
    const words = this.i32Of(first);
    for (let i = cls.perPage - 1; i >= 0; i--) {
      const h = first + (i * cls.chunkSize) / ALIGN;
      words[(h & OFFSET_MASK) * 2] = cls.free;
      cls.free = h;
      cls.freeCount++;
    }
  }

  /** Frees the memory of page p (a large item's buffer or a detached page) and keeps its index for reuse. */
  private dropMemory(page: number): void {
    this.mallocedBytes -= this.bytes[page]?.length ?? 0;
    this.pageClass[page] = LARGE;
    const empty = EMPTY_PAGE;
    this.bytes[page] = empty.bytes;
    this.buffers[page] = EMPTY_BUFFER;
    this.i32[page] = empty.i32;
    this.u32[page] = empty.u32;
    this.f64[page] = empty.f64;
    this.freePageIndexes.push(page);
  }

  private newPage(size: number, owner: number): number {
    const bytes = Buffer.allocUnsafeSlow(size);
    const buffer = bytes.buffer;
    const page = this.freePageIndexes.pop() ?? this.bytes.length;
    this.pageClass[page] = owner;
    this.bytes[page] = bytes;
    this.buffers[page] = buffer;
    this.i32[page] = new Int32Array(buffer, 0, size >>> 2);
    this.u32[page] = new Uint32Array(buffer, 0, size >>> 2);
    this.f64[page] = new Float64Array(buffer, 0, size >>> 3);
    this.mallocedBytes += size;
    return page;
  }

  /** Frees every chunk and large buffer: pages stay with their classes, as in memcached. */
  reset(): void {
    for (const cls of this.classes) {
      cls.free = NIL;
      cls.freeCount = 0;
      cls.used = 0;
      cls.carve = NIL;
      cls.carveLeft = 0;
    }
    for (const [page, c] of this.pageClass.entries()) {
      const first = page << OFFSET_BITS;
      if (c === LARGE) {
        if (this.bytesOf(first).length > 0) this.releaseLarge(first);
        continue;
      }
      const cls = this.classAt(c);
      const words = this.i32Of(first);
      for (let i = cls.perPage - 1; i >= 0; i--) {
        const h = (page << OFFSET_BITS) + (i * cls.chunkSize) / ALIGN;
        words[(h & OFFSET_MASK) * 2] = cls.free;
        cls.free = h;
        cls.freeCount++;
      }
    }
  }

  /** Page index of a handle. */
  static page(h: number): number {
    return h >>> OFFSET_BITS;
  }

  /** Byte offset of a handle's chunk within its page. */
  static offset(h: number): number {
    return (h & OFFSET_MASK) * ALIGN;
  }
}

function noPage(h: number): never {
  throw internalError(`handle ${h} names page ${h >>> OFFSET_BITS}, which does not exist`);
}

function noClass(c: number): never {
  throw internalError(`slab class index ${c} does not exist`);
}

const EMPTY_BUFFER = new ArrayBuffer(0);
const EMPTY_PAGE = {
  bytes: Buffer.from(EMPTY_BUFFER),
  i32: new Int32Array(EMPTY_BUFFER),
  u32: new Uint32Array(EMPTY_BUFFER),
  f64: new Float64Array(EMPTY_BUFFER),
};
