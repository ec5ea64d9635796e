import { describe, expect, it } from 'vitest';
import { hashKey, KEY_LENGTH_BYTE, KeyIndex } from '../src/key-index.js';
import { LruStore } from '../src/lru-store.js';
import { ITEM_HEADER_BYTES, NIL, SlabAllocator } from '../src/slab-allocator.js';
import { present } from './helpers.js';

/** A chunk holding key, as the store lays it out (length byte, then the bytes after the header). */
function chunkWithKey(slabs: SlabAllocator, key: string): number {
  const h = slabs.alloc(0);
  const b = slabs.bytesOf(h);
  const off = SlabAllocator.offset(h);
  b[off + KEY_LENGTH_BYTE] = key.length;
  b.write(key, off + ITEM_HEADER_BYTES, 'latin1');
  return h;
}

const bytes = (key: string) => Buffer.from(key, 'latin1');

describe('KeyIndex', () => {
  it('keeps a probe run whole across the table end when entries before it are removed', () => {
    const slabs = new SlabAllocator({ limitBytes: 1 << 20 });
    const index = new KeyIndex(slabs);
    const slots = index.slotCount;
    // five keys that all start at the last slot: the run wraps to slots 0..3
    const keys = ['a', 'b', 'c', 'd', 'e'];
    const handles = keys.map((key) => chunkWithKey(slabs, key));
    const hash = slots - 1;
    for (const h of handles) index.insert(h, hash);
    // a key that belongs at slot 1 sits behind the wrapped run
    const other = chunkWithKey(slabs, 'z');
    index.insert(other, 1);
    expect(index.find(bytes('z'), 0, 1, 1)).toBe(other);
    const [a, , c] = handles;
    expect(index.remove(present(a), hash)).toBe(true);
    expect(index.remove(present(c), hash)).toBe(true);
    expect(index.find(bytes('a'), 0, 1, hash)).toBe(NIL);
    expect(index.find(bytes('c'), 0, 1, hash)).toBe(NIL);
    for (const i of [1, 3, 4]) expect(index.find(bytes(present(keys[i])), 0, 1, hash)).toBe(handles[i]);
    expect(index.find(bytes('z'), 0, 1, 1)).toBe(other);
    expect(index.size).toBe(4);
    // the same hash with other bytes is not a match
    expect(index.find(bytes('q'), 0, 1, hash)).toBe(NIL);
    expect(index.remove(present(a), hash)).toBe(false);
  });

  it('leaves an entry at its home slot when the gap is behind it across the table end', () => {
    const slabs = new SlabAllocator({ limitBytes: 1 << 20 });
    const index = new KeyIndex(slabs);
    const last = index.slotCount - 1;
    const a = chunkWithKey(slabs, 'a');
    const y = chunkWithKey(slabs, 'y');
    index.insert(a, last);
    index.insert(y, index.slotCount); // home slot 0
    expect(index.remove(a, last)).toBe(true);
    expect(index.find(bytes('y'), 0, 1, index.slotCount)).toBe(y);
    expect(index.handleAt(0)).toBe(y);
  });

  it('hashes every byte: keys one byte apart land apart', () => {
    const key = Buffer.from('memcaslap-key-0000000000000000000000000000000000000000000000000000');
    const seen = new Set<number>();
    for (const [i, byte] of key.entries()) {
      const changed = Buffer.from(key);
      changed[i] = byte ^ 1;
      seen.add(hashKey(changed, 0, changed.length) & 0xfff);
    }
    // 68 variants in 4096 slots: a hash that ignored bytes would put many in the same slot
    expect(seen.size).toBeGreaterThan(60);
    expect(hashKey(key, 0, key.length)).toBe(
      hashKey(Buffer.concat([Buffer.from('xx'), key]), 2, key.length + 2),
    );
  });
});

describe('LruStore with its key index', () => {
  it('agrees with a Map through growth, replacement, deletion, expiry and sweeps', () => {
    const store = new LruStore(64 << 20);
    const model = new Map<string, { value: string; expiresAt: number }>();
    let seed = 12345;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    let now = 1_000_000;
    for (let step = 0; step < 40_000; step++) {
      const key = `key:${random(6000)}`;
      const op = random(10);
      if (op < 5) {
        const value = `v${step}`;
        const expiresAt = random(4) === 0 ? now + 1 + random(2000) : 0;
        store.set(key, Buffer.from(value), 0, expiresAt, now);
        model.set(key, { value, expiresAt });
      } else if (op < 7) {
        expect(store.delete(key)).toBe(model.has(key));
        model.delete(key);
      } else {
        const want = model.get(key);
        const live = want !== undefined && (want.expiresAt === 0 || want.expiresAt > now);
        expect(store.peek(key, now)?.value.toString()).toBe(live ? want.value : undefined);
        if (!live) model.delete(key); // a lookup drops an expired item
      }
      if (step % 5000 === 4999) {
        now += 1000;
        store.sweep(now, 1_000_000);
        for (const [k, v] of model) if (v.expiresAt !== 0 && v.expiresAt <= now) model.delete(k);
        expect(store.size).toBe(model.size);
      }
    }
    const stored = new Map([...store.entries(now)].map((item) => [item.key, item.value.toString()]));
    expect(stored).toEqual(new Map([...model].map(([k, v]) => [k, v.value])));
  });

  it('treats string keys as bytes: a character above U+00FF is refused by name, and never found', () => {
    const store = new LruStore(1 << 20);
    expect(() => store.set('caf\u0113', Buffer.from('v'))).toThrow(/U\+0100.*"caf\u0113"/);
    store.set('caf\u00e9', Buffer.from('latin1'));
    expect(store.get('caf\u00e9')?.value.toString()).toBe('latin1');
    expect(store.get('caf\u0113')).toBeUndefined();
    expect(store.get('caf\u00e9')?.key).toBe('caf\u00e9');
  });
});
