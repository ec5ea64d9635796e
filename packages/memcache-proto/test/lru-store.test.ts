import { describe, expect, it } from 'vitest';
import { ITEM_OVERHEAD_BYTES, LruStore } from '../src/index.js';
import { present } from './helpers.js';

const itemBytes = (key: string, value: Buffer) => key.length + value.length + ITEM_OVERHEAD_BYTES;

describe('LruStore', () => {
  it('evicts the least recently used item when over its byte limit', () => {
    const value = Buffer.alloc(100, 1);
    const store = new LruStore(itemBytes('a', value) * 2);
    store.set('a', value, 0, 0, 0);
    store.set('b', value, 0, 0, 0);
    expect(store.get('a', 65_000)?.value).toEqual(value); // a is now most recent
    store.set('c', value, 0, 0, 65_000);
    expect(store.get('b', 65_000)).toBeUndefined();
    expect(store.get('a', 65_000)?.value).toEqual(value);
    expect(store.get('c', 65_000)?.value).toEqual(value);
    expect(store.evictions).toBe(1);
    expect(store.usedBytes).toBe(itemBytes('a', value) * 2);
  });

  it('expires items lazily and gives every write a new cas', () => {
    const store = new LruStore(1 << 20);
    const first = store.set('k', Buffer.from('v1'), 7, 1_000);
    const second = store.set('k', Buffer.from('v2'), 7, 2_000);
    expect(present(second).cas).toBeGreaterThan(present(first).cas);
    expect(store.get('k', 1_500)?.value.toString()).toBe('v2');
    expect(store.get('k', 2_000)).toBeUndefined();
    expect(store.size).toBe(0);
    expect(store.usedBytes).toBe(0);
  });

  it('keeps an item read again within a minute in place, as memcached does', () => {
    const value = Buffer.alloc(100, 1);
    const store = new LruStore(itemBytes('a', value) * 2);
    store.set('a', value, 0, 0, 1_000);
    store.set('b', value, 0, 0, 1_000);
    store.get('a', 60_500); // too soon to move
    store.set('c', value, 0, 0, 60_600);
    expect(store.get('a', 60_600)).toBeUndefined();
    expect(store.get('b', 60_600)?.key).toBe('b');
  });

  it('moves a key written again to the most recent end and evicts in recency order', () => {
    const value = Buffer.alloc(100, 1);
    const store = new LruStore(itemBytes('a', value) * 3);
    store.set('a', value, 0, 0, 1_000);
    store.set('b', value, 0, 0, 1_000);
    store.set('c', value, 0, 0, 1_000);
    store.set('a', Buffer.alloc(100, 2), 0, 0, 2_000); // a is now the newest
    expect([...store.entries(2_000)].map((item) => item.key)).toEqual(['b', 'c', 'a']);
    store.set('d', value, 0, 0, 3_000);
    store.set('e', value, 0, 0, 3_000);
    expect([...store.entries(3_000)].map((item) => item.key)).toEqual(['a', 'd', 'e']);
    expect(store.evictions).toBe(2);
    expect(store.usedBytes).toBe(itemBytes('a', value) * 3);
    store.delete('d');
    expect([...store.entries(3_000)].map((item) => item.key)).toEqual(['a', 'e']);
    store.flush(3_000, 3_000);
    expect([...store.entries(3_000)]).toEqual([]);
    store.set('f', value, 0, 0, 4_000);
    expect([...store.entries(4_000)].map((item) => item.key)).toEqual(['f']);
  });

  it('sweeps expired items in bounded steps and honours a delayed flush', () => {
    const store = new LruStore(1 << 20);
    for (let i = 0; i < 10; i++) store.set(`k${i}`, Buffer.from('v'), 0, i < 6 ? 2_000 : 0, 1_000);
    // a step looks at 4 of the 10 items (in index order), so it cannot drop all 6 expired ones
    const first = store.sweep(3_000, 4);
    expect(first).toBeLessThanOrEqual(4);
    expect(first + store.sweep(3_000, 100)).toBe(6);
    expect(store.size).toBe(4);
    store.flush(5_000, 3_000);
    expect(store.get('k7', 4_000)?.value.toString()).toBe('v');
    expect(store.get('k7', 5_000)).toBeUndefined();
    store.set('later', Buffer.from('w'), 0, 0, 6_000);
    expect(store.get('later', 6_000)?.value.toString()).toBe('w');
  });

  it("keeps values in slab chunks: a copy comes back, the cas is the item's, a key over 255 bytes is refused", () => {
    const store = new LruStore(1 << 20);
    const value = Buffer.from('hello');
    const stored = present(store.set('k', value, 3, 0, 1_000));
    value.fill(0); // the store copied the bytes
    const item = present(store.get('k', 1_000));
    expect(item).toMatchObject({ key: 'k', flags: 3, expiresAt: 0, storedAt: 1_000, fetched: false });
    expect(item.value.toString()).toBe('hello');
    // the cas is a positive integer, the one the write gave, unchanged by reads; a touch keeps it too
    expect(Number.isSafeInteger(item.cas) && item.cas > 0).toBe(true);
    expect(item.cas).toBe(stored.cas);
    expect(store.touch('k', 9_000, 1_000)?.cas).toBe(item.cas);
    expect(store.slabs.mallocedBytes).toBe(1 << 20);
    expect(() => store.set('x'.repeat(256), value)).toThrow(RangeError);
  });

  it('rejects a limit that is not a positive integer', () => {
    expect(() => new LruStore(-1)).toThrow(/limitBytes must be a positive integer, got -1/);
  });
});
