import { describe, expect, it } from 'vitest';
import { LruStore } from '../src/index.js';
import { SlabAutomover } from '../src/slab-automove.js';

const MB = 1024 * 1024;
const T0 = 1_800_000_000_000; // ms; the automover runs on a clock the test advances

function value(size: number, seed: number): Buffer {
  return Buffer.alloc(size, String.fromCharCode(97 + (seed % 26)));
}

describe('slab automove', () => {
  it('moves pages from a class of old items to a class that keeps evicting young ones', () => {
    const store = new LruStore(8 * MB);
    const slabs = store.slabs;
    for (let i = 0; i < 60_000; i++) store.set(`small:${i}`, value(100, i), 0, 0, T0);
    const small = slabs.classFor(40 + 12 + 100);
    const big = slabs.classFor(40 + 12 + 5000);
    const smallPages = slabs.classAt(small).pages;
    expect(smallPages).toBeGreaterThanOrEqual(7);
    expect(slabs.classAt(big).pages).toBe(0);
    const mover = new SlabAutomover(store);
    const moves = [];
    let n = 0;
    for (let second = 1; second <= 60; second++) {
      const now = T0 + second * 1000;
      for (let i = 0; i < 400; i++, n++) store.set(`big:${n}`, value(5000, n), 0, 0, now);
      const move = mover.run(now);
      if (move !== undefined) moves.push(move);
    }
    expect(moves.length).toBeGreaterThan(0);
    expect(moves.every((m) => m.from === small && m.to === big)).toBe(true);
    expect(slabs.classAt(big).pages).toBe(1 + moves.length);
    expect(slabs.classAt(small).pages).toBe(smallPages - moves.length);
    expect(slabs.mallocedBytes).toBeLessThanOrEqual(8 * MB + MB); // one first page over the budget
    // the big class now holds more than one page's worth of the newest items
    const perPage = slabs.classAt(big).perPage;
    let kept = 0;
    for (let i = n - 1; i >= 0 && store.peek(`big:${i}`, T0 + 61_000) !== undefined; i--) kept++;
    expect(kept).toBeGreaterThan(perPage * 2);
    expect(store.peek(`big:${n - 1}`, T0 + 61_000)?.value.equals(value(5000, n - 1))).toBe(true);
  });

  it('gives quiet free pages back to the budget, moving the items still on them', () => {
    const store = new LruStore(16 * MB);
    const slabs = store.slabs;
    const count = 40_000; // about 6 pages of 152-byte chunks
    for (let i = 0; i < count; i++) store.set(`k:${i}`, value(100, i), 0, 0, T0);
    const cls = slabs.classFor(40 + 8 + 100);
    const pages = slabs.classAt(cls).pages;
    for (let i = 0; i < count; i++) if (i % 4 !== 0) store.delete(`k:${i}`);
    const malloced = slabs.mallocedBytes;
    const mover = new SlabAutomover(store);
    const moves = [];
    for (let second = 1; second <= 40; second++) {
      const move = mover.run(T0 + second * 1000);
      if (move !== undefined) moves.push(move);
    }
    expect(moves.length).toBeGreaterThan(0);
    expect(moves.every((m) => m.from === cls && m.to === -1)).toBe(true);
    expect(slabs.classAt(cls).pages).toBe(pages - moves.length);
    expect(slabs.mallocedBytes).toBe(malloced - moves.length * MB);
    expect(store.pageItemsRescued).toBeGreaterThan(0);
    expect(store.pageItemsEvicted).toBe(0);
    // every item left reads back whole, wherever it was moved to
    for (let i = 0; i < count; i += 4) {
      expect(store.peek(`k:${i}`, T0)?.value.equals(value(100, i)), `k:${i}`).toBe(true);
    }
    expect(store.size).toBe(count / 4);
  });

  it('moves nothing while the mix is steady', () => {
    const store = new LruStore(4 * MB);
    const mover = new SlabAutomover(store);
    let n = 0;
    for (let second = 1; second <= 40; second++) {
      for (let i = 0; i < 2000; i++, n++) store.set(`s:${n}`, value(100, n), 0, 0, T0 + second * 1000);
      expect(mover.run(T0 + second * 1000)).toBeUndefined();
    }
    expect(store.pagesMoved).toBe(0);
  });
});
