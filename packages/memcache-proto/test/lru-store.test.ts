import { describe, expect, it } from 'vitest';
import { ITEM_OVERHEAD_BYTES, LruStore } from '../src/index.js';

const itemBytes = (key: string, value: Buffer) => key.length + value.length + ITEM_OVERHEAD_BYTES;

describe('LruStore', () => {
  it('evicts the least recently used item when over its byte limit', () => {
    const value = Buffer.alloc(100, 1);
    const store = new LruStore(itemBytes('a', value) * 2);
    store.set('a', value);
    store.set('b', value);
    expect(store.get('a')?.value).toBe(value); // a is now most recent
    store.set('c', value);
    expect(store.get('b')).toBeUndefined();
    expect(store.get('a')).toBeDefined();
    expect(store.get('c')).toBeDefined();
    expect(store.evictions).toBe(1);
    expect(store.usedBytes).toBe(itemBytes('a', value) * 2);
  });

  it('expires items lazily and gives every write a new cas', () => {
    const store = new LruStore(1 << 20);
    const first = store.set('k', Buffer.from('v1'), 7, 1_000);
    const second = store.set('k', Buffer.from('v2'), 7, 2_000);
    expect(second.cas).toBeGreaterThan(first.cas);
    expect(store.get('k', 1_500)?.value.toString()).toBe('v2');
    expect(store.get('k', 2_000)).toBeUndefined();
    expect(store.size).toBe(0);
    expect(store.usedBytes).toBe(0);
  });

  it('rejects a limit that is not a positive integer', () => {
    expect(() => new LruStore(-1)).toThrow(/limitBytes must be a positive integer, got -1/);
  });
});
