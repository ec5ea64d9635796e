export { type AuthUsers, parseAuthfile, readAuthfile } from './authfile.js';
export {
  Cache,
  type CacheOptions,
  DeltaResult,
  expiryFromExptime,
  REALTIME_MAXDELTA,
  StoreMode,
  StoreResult,
} from './cache.js';
export { ERROR_CODES, HotpathMcError, type HotpathMcErrorCode } from './errors.js';
export type { Item } from './lru-store.js';
export { ITEM_OVERHEAD_BYTES, LruStore } from './lru-store.js';
export { createServer, type MemcachedServer, SERVER_VERSION, type ServerOptions } from './server.js';
export { KEY_MAX_LENGTH } from './text-protocol.js';
