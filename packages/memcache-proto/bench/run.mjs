// LruStore set/get throughput on 100k keys with 100-byte values.
import { LruStore } from '../dist/index.js';

const store = new LruStore(64 << 20);
const value = Buffer.alloc(100, 120);
const keys = Array.from({ length: 100_000 }, (_, i) => `key:${i}`);
const start = process.hrtime.bigint();
for (let round = 0; round < 10; round++) {
  for (const key of keys) store.set(key, value);
  for (const key of keys) store.get(key);
}
const ms = Number(process.hrtime.bigint() - start) / 1e6;
console.log(
  `LruStore: ${((2_000_000 / ms) * 1000).toFixed(0)} ops/s (${store.size} items, ${store.usedBytes} bytes)`,
);
