import type { CodeDescription } from './code-description.js';

/** One piece of generated code from a `code-creation` event. */
export interface CodeEntry {
  start: number;
  size: number;
  /** What the code is (name, kind, tier); shared by all code with the same description. */
  desc: CodeDescription;
}

/** log2 of the page size used to index entries; 64 KiB pages. */
const PAGE_BITS = 16;
const PAGE_SIZE = 2 ** PAGE_BITS;

function pageOf(addr: number): number {
  return Math.floor(addr / PAGE_SIZE);
}

/**
 * Address → generated code, like V8's code map for dynamic code: adding code removes whatever it
 * overlaps, code moves and is deleted. Entries are indexed by 64 KiB page; each page keeps its
 * entries sorted by start and never overlapping, so a lookup is one map access and a binary search.
 * Work per event is bounded by the entry's size (callers cap sizes).
 */
export class DynamicCodeMap {
  private readonly pages = new Map<number, CodeEntry[]>();
  private readonly byStart = new Map<number, CodeEntry>();

  get size(): number {
    return this.byStart.size;
  }

  add(start: number, size: number, desc: CodeDescription): void {
    const end = start + Math.max(size, 1);
    this.removeOverlapping(start, end);
    const entry: CodeEntry = { start, size: Math.max(size, 1), desc };
    this.byStart.set(start, entry);
    for (let page = pageOf(start), last = pageOf(end - 1); page <= last; page++) {
      let list = this.pages.get(page);
      if (!list) this.pages.set(page, (list = []));
      list.splice(insertionIndex(list, start), 0, entry);
    }
  }

  /** Removes the entry starting at `start`; false when there is none. */
  delete(start: number): boolean {
    const entry = this.byStart.get(start);
    if (!entry) return false;
    this.unlink(entry);
    return true;
  }

  /** Moves the entry at `from` to `to`; false when there is none. */
  move(from: number, to: number): boolean {
    const entry = this.byStart.get(from);
    if (!entry) return false;
    this.unlink(entry);
    this.add(to, entry.size, entry.desc);
    return true;
  }

  /** The entry containing `addr`, or undefined. */
  find(addr: number): CodeEntry | undefined {
    const list = this.pages.get(pageOf(addr));
    if (!list) return undefined;
    // The last entry starting at or below addr, kept as the search narrows (mid is always inside the list).
    let lo = 0;
    let hi = list.length - 1;
    let found: CodeEntry | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const entry = list[mid];
      if (entry !== undefined && entry.start <= addr) {
        found = entry;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found !== undefined && addr < found.start + found.size ? found : undefined;
  }

  private removeOverlapping(start: number, end: number): void {
    for (let page = pageOf(start), last = pageOf(end - 1); page <= last; page++) {
      const list = this.pages.get(page);
      if (!list) continue;
      // A page's entries are sorted by start and do not overlap, so their ends are sorted too:
      // the ones overlapping [start, end) are the run that ends at the last one starting before
      // `end`, found by binary search instead of a scan of the page.
      for (let i = insertionIndex(list, end) - 1; i >= 0; i--) {
        const entry = list[i];
        if (entry === undefined || entry.start + entry.size <= start) break;
        this.unlink(entry);
      }
    }
  }

  private unlink(entry: CodeEntry): void {
    this.byStart.delete(entry.start);
    const end = entry.start + entry.size;
    for (let page = pageOf(entry.start), last = pageOf(end - 1); page <= last; page++) {
      const list = this.pages.get(page);
      if (!list) continue;
      const index = list.indexOf(entry);
      if (index >= 0) list.splice(index, 1);
      if (list.length === 0) this.pages.delete(page);
    }
  }
}

function insertionIndex(list: CodeEntry[], start: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const entry = list[mid];
    if (entry !== undefined && entry.start < start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
