import { float64At } from './checked-index.js';
import type { LruStore } from './lru-store.js';
import { NIL, SlabAllocator } from './slab-allocator.js';

/** A class must have this many pages to give one to another class. */
const MIN_PAGES_TO_GIVE = 3;
/** A class holding this many pages' worth of free chunks, quietly, gives a page back to the budget. */
const FREE_PAGES_TO_RECLAIM = 2.5;

export interface SlabAutomoveOptions {
  /** Runs a decision looks back over (memcached's slab_automove_window). Default 30. */
  window?: number;
  /** A class evicting younger items than this fraction of the oldest class's age gets a page (slab_automove_ratio). Default 0.8. */
  ratio?: number;
}

/** What one run did: a page from class `from` to class `to` (-1: back to the page budget, which the large items share). */
export interface SlabMove {
  from: number;
  to: number;
}

/**
 * Moves slab pages between classes as the mix of item sizes changes, by memcached's automove
 * rules (slab_automove=1), run once a second by the server:
 *
 * - a class that holds more than 2.5 pages of free chunks and has neither evicted, failed a
 *   write, nor grown during the whole window gives a page back to the budget;
 * - otherwise the class whose least recently used item is youngest among those that evicted in
 *   more than half of the window's runs (and in this one) takes a page from the class whose
 *   least recently used item is oldest (averaged over the window), when its age is below
 *   `ratio` times that; the large items (their own LRU) take it as budget.
 *
 * Items on a moved page go to free chunks of their class elsewhere when there are any, else
 * they are evicted (LruStore.movePage).
 */
export class SlabAutomover {
  private readonly store: LruStore;
  private readonly window: number;
  private readonly ratio: number;
  private readonly lrus: number;
  /** Per LRU and window slot: age (s), dirty, evicted. */
  private readonly age: Float64Array;
  private readonly dirty: Uint8Array;
  private readonly evicted: Uint8Array;
  private readonly evictionsBefore: Float64Array;
  private readonly failuresBefore: Float64Array;
  private readonly pagesBefore: Float64Array;
  private runs = 0;

  constructor(store: LruStore, options: SlabAutomoveOptions = {}) {
    this.store = store;
    this.window = options.window ?? 30;
    this.ratio = options.ratio ?? 0.8;
    this.lrus = store.slabs.classes.length + 1;
    const slots = this.lrus * this.window;
    this.age = new Float64Array(slots);
    this.dirty = new Uint8Array(slots);
    this.evicted = new Uint8Array(slots);
    this.evictionsBefore = Float64Array.from(store.evictedBy);
    this.failuresBefore = Float64Array.from(store.outOfMemoryBy);
    this.pagesBefore = Float64Array.from({ length: this.lrus }, (_, l) => this.pages(l));
  }

  /** Pages of LRU l (the large items' bytes in pages for the last one). */
  private pages(l: number): number {
    const slabs = this.store.slabs;
    if (l < slabs.classes.length) return slabs.classAt(l).pages;
    return Math.ceil(float64At(this.store.requestedBy, l) / (1 << 20));
  }

  /** One decision at `now` (ms): samples every LRU, moves at most one page; returns the move made. */
  run(now: number): SlabMove | undefined {
    const store = this.store;
    const slabs = store.slabs;
    const seconds = Math.floor(now / 1000);
    const w = this.window;
    this.runs++;
    const slot = this.runs % w;
    let oldest = -1;
    let oldestAge = -1;
    let youngest = -1;
    let youngestAge = Number.POSITIVE_INFINITY;
    let youngestEvicting = false;
    let reclaim = -1;
    for (let l = 0; l < this.lrus; l++) {
      const at = l * w + slot;
      const evictions = float64At(store.evictedBy, l);
      const failures = float64At(store.outOfMemoryBy, l);
      const pages = this.pages(l);
      const evictedNow =
        evictions > float64At(this.evictionsBefore, l) || failures > float64At(this.failuresBefore, l);
      this.evicted[at] = evictedNow ? 1 : 0;
      this.dirty[at] = evictedNow || pages > float64At(this.pagesBefore, l) ? 1 : 0;
      this.evictionsBefore[l] = evictions;
      this.failuresBefore[l] = failures;
      this.pagesBefore[l] = pages;
      const tail = store.oldestIn(l);
      this.age[at] = tail === NIL ? 0 : Math.max(0, seconds - store.accessedAtOf(tail));
      let ageSum = 0;
      let dirtySum = 0;
      let evictedSum = 0;
      for (let i = l * w; i < (l + 1) * w; i++) {
        ageSum += float64At(this.age, i);
        dirtySum += this.dirty[i] ?? 0;
        evictedSum += this.evicted[i] ?? 0;
      }
      const age = ageSum / w;
      const isClass = l < slabs.classes.length;
      if (isClass && reclaim < 0 && dirtySum === 0) {
        const cls = slabs.classAt(l);
        if (cls.pages > 1 && cls.pages * cls.perPage - cls.used > cls.perPage * FREE_PAGES_TO_RECLAIM)
          reclaim = l;
      }
      if (isClass && age > oldestAge && pages >= MIN_PAGES_TO_GIVE) {
        oldest = l;
        oldestAge = age;
      }
      if (age < youngestAge && evictedSum > w / 2) {
        youngest = l;
        youngestAge = age;
        youngestEvicting = evictedNow;
      }
    }
    if (reclaim >= 0) {
      const page = this.emptiestPage(reclaim);
      store.movePage(page, -1, now);
      return { from: reclaim, to: -1 };
    }
    if (
      this.runs > w &&
      youngest >= 0 &&
      oldest >= 0 &&
      youngest !== oldest &&
      youngestEvicting &&
      youngestAge < oldestAge * this.ratio
    ) {
      const page = store.pageOfClass(oldest);
      if (page < 0) return undefined;
      const to = youngest < slabs.classes.length ? youngest : -1;
      store.movePage(page, to, now);
      return { from: oldest, to };
    }
    return undefined;
  }

  /** The page of class c with the most free chunks (the fewest items to move). */
  private emptiestPage(c: number): number {
    const slabs = this.store.slabs;
    const free = new Map<number, number>();
    for (const h of slabs.freeChunks(c)) {
      const p = SlabAllocator.page(h);
      free.set(p, (free.get(p) ?? 0) + 1);
    }
    let best = -1;
    let most = -1;
    for (let p = 0; p < slabs.pageCount; p++) {
      if (slabs.pageOwner(p) !== c) continue;
      const n = free.get(p) ?? 0;
      if (n > most) {
        most = n;
        best = p;
      }
    }
    return best;
  }
}
