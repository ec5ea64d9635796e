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
export { Client, type ClientOptions, type ClientValue, createClient } from './client.js';
export { ERROR_CODES, HotpathMcError, type HotpathMcErrorCode } from './errors.js';
export { KetamaRing, type RingServer } from './ketama.js';
export type { ByteSink, Item } from './lru-store.js';
export { ITEM_OVERHEAD_BYTES, ItemBit, LruStore } from './lru-store.js';
export {
  encodeMetaArithmetic,
  encodeMetaDelete,
  encodeMetaGet,
  encodeMetaGetMulti,
  encodeMetaSet,
  type MetaArithmeticOptions,
  type MetaDeleteOptions,
  type MetaGetOptions,
  type MetaSetOptions,
  metaKeyToken,
} from './meta-encoder.js';
export {
  type MetaCode,
  type MetaParserReply,
  type MetaReply,
  MetaReplyParser,
  type MetaReplyParserOptions,
} from './meta-reply-parser.js';
export { KEY_MAX_LENGTH, LINE_MAX_BYTES } from './protocol-limits.js';
export {
  createServer,
  type MemcachedServer,
  SERVER_IDENTITY,
  SERVER_VERSION,
  type ServerOptions,
} from './server.js';
export { NIL, PAGE_BYTES, SlabAllocator, type SlabClass, type SlabOptions } from './slab-allocator.js';
export {
  encodeDecr,
  encodeDelete,
  encodeDelta,
  encodeFlushAll,
  encodeGat,
  encodeGet,
  encodeGets,
  encodeIncr,
  encodeNoop,
  encodeSet,
  encodeStats,
  encodeStore,
  encodeTouch,
  encodeVersion,
  type StorageCommand,
  type StoreOptions,
  validateKey,
} from './text-encoder.js';
export {
  type TextReply,
  TextReplyParser,
  type TextReplyParserOptions,
  type TextStatus,
  type TextValue,
} from './text-reply-parser.js';
