import { internalError } from './checked-index.js';
import type { ReplyStream } from './client-connection.js';
import { HotpathMcError } from './errors.js';
import type { MetaParserReply } from './meta-reply-parser.js';
import {
  encodeDelete,
  encodeDelta,
  encodeGat,
  encodeGet,
  encodeGets,
  encodeStore,
  encodeTouch,
  type StorageCommand,
  type StoreOptions,
} from './text-encoder.js';
import { TextReplyParser, type TextValue } from './text-reply-parser.js';

/** Any reply a client connection sees, in text or meta mode. */
export type ClientReply = MetaParserReply;

/** A value read by get, gets, gat and getMulti (the same shape in both protocols). */
export type ClientValue = TextValue;

/** What a storage command can answer. */
export type StoreStatus = 'STORED' | 'NOT_STORED' | 'EXISTS' | 'NOT_FOUND';

export type RetrieveMode = 'get' | 'gets' | 'gat';

/**
 * How the client speaks one protocol: the reply parser, and per operation an encoder and a
 * reader turning the reply into the public result. flush_all, version and stats are text
 * commands in both modes (meta has none), so they are not here.
 */
export interface ClientCodec {
  readonly protocol: 'text' | 'meta';
  createParser(onReply: (reply: ClientReply) => void): ReplyStream;
  /** For batch requests: the reply that ends a batch. */
  endsBatch(reply: ClientReply): boolean;
  /** True when getMulti is sent as a batch (requestBatch), false for one reply (request). */
  readonly multiIsBatch: boolean;
  encodeRetrieve(mode: RetrieveMode, key: string, exptime: number): Buffer;
  readValue(reply: ClientReply, mode: RetrieveMode, key: string): ClientValue | undefined;
  encodeGetMulti(keys: readonly string[]): Buffer;
  /** Adds the hits among `replies` to `into`, by key. */
  readMulti(replies: readonly ClientReply[], keys: readonly string[], into: Map<string, ClientValue>): void;
  encodeStore(command: StorageCommand, key: string, value: Buffer | string, options: StoreOptions): Buffer;
  readStore(reply: ClientReply, what: string): StoreStatus;
  encodeDelete(key: string): Buffer;
  /** True when the key existed. */
  readDelete(reply: ClientReply, what: string): boolean;
  encodeDelta(command: 'incr' | 'decr', key: string, delta: bigint | number): Buffer;
  /** The new value, or undefined when the key is missing. */
  readDelta(reply: ClientReply, what: string): bigint | undefined;
  encodeTouch(key: string, exptime: number): Buffer;
  /** True when the key existed. */
  readTouch(reply: ClientReply, what: string): boolean;
}

/** HP_MC_SERVER_ERROR for an error reply or a reply the request cannot have. */
export function unexpectedReply(reply: ClientReply, what: string): HotpathMcError {
  const text =
    reply.type === 'error'
      ? `${reply.kind}${reply.message ? ` ${reply.message}` : ''}`
      : reply.type === 'meta-reply'
        ? reply.code
        : JSON.stringify(reply.type);
  return new HotpathMcError('HP_MC_SERVER_ERROR', `${what}: server replied ${text}`);
}

const STORE_STATUSES = new Set<string>(['STORED', 'NOT_STORED', 'EXISTS', 'NOT_FOUND']);

/** The text protocol: get/gets/gat, set/add/…/cas, delete, incr/decr, touch. */
export const textCodec: ClientCodec = {
  protocol: 'text',
  createParser: (onReply) => new TextReplyParser({ onReply }),
  endsBatch: () => true,
  multiIsBatch: false,
  encodeRetrieve(mode, key, exptime) {
    return mode === 'get' ? encodeGet(key) : mode === 'gets' ? encodeGets(key) : encodeGat(exptime, key);
  },
  readValue(reply, mode, key) {
    if (reply.type !== 'values') throw unexpectedReply(reply, `${mode} ${key}`);
    return reply.values[0];
  },
  encodeGetMulti: (keys) => encodeGet(keys),
  readMulti(replies, _keys, into) {
    const reply = replies[0];
    if (reply === undefined) throw internalError('a text get batch has no reply');
    if (reply.type !== 'values') throw unexpectedReply(reply, 'get');
    for (const value of reply.values) into.set(value.key, value);
  },
  encodeStore,
  readStore(reply, what) {
    if (reply.type !== 'status' || !STORE_STATUSES.has(reply.status)) throw unexpectedReply(reply, what);
    return reply.status as StoreStatus;
  },
  encodeDelete: (key) => encodeDelete(key),
  readDelete(reply, what) {
    if (reply.type !== 'status') throw unexpectedReply(reply, what);
    return reply.status === 'DELETED';
  },
  encodeDelta: (command, key, delta) => encodeDelta(command, key, delta),
  readDelta(reply, what) {
    if (reply.type === 'number') return reply.value;
    if (reply.type === 'status' && reply.status === 'NOT_FOUND') return undefined;
    throw unexpectedReply(reply, what);
  },
  encodeTouch: (key, exptime) => encodeTouch(key, exptime),
  readTouch(reply, what) {
    if (reply.type !== 'status') throw unexpectedReply(reply, what);
    return reply.status === 'TOUCHED';
  },
};
