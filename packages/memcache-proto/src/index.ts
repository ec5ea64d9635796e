export type { Item } from './lru-store.js';
export { ITEM_OVERHEAD_BYTES, LruStore } from './lru-store.js';
