import { parseU64 } from './ascii-numbers.js';
import { internalError } from './checked-index.js';
import {
  type ClientCodec,
  type ClientReply,
  type ClientValue,
  type RetrieveMode,
  type StoreStatus,
  unexpectedReply,
} from './client-codec.js';
import { HotpathMcError } from './errors.js';
import {
  encodeMetaArithmetic,
  encodeMetaDelete,
  encodeMetaGet,
  encodeMetaGetMulti,
  encodeMetaSet,
} from './meta-encoder.js';
import { type MetaCode, type MetaReply, MetaReplyParser } from './meta-reply-parser.js';

/** Meta codes of a storage reply, as the text protocol's words. */
const STORE_CODES: Partial<Record<MetaCode, StoreStatus>> = {
  HD: 'STORED',
  NS: 'NOT_STORED',
  EX: 'EXISTS',
  NF: 'NOT_FOUND',
};

const GET = { value: true, flags: true } as const;
const GETS = { value: true, flags: true, cas: true } as const;

function metaReply(reply: ClientReply, what: string): MetaReply {
  if (reply.type !== 'meta-reply') throw unexpectedReply(reply, what);
  return reply;
}

/** A `VA` reply as the text protocol's value: key, flags, value, and cas when asked for. */
function toValue(reply: MetaReply, key: string, withCas: boolean): ClientValue {
  if (reply.value === undefined) throw internalError(`the VA reply to ${key} has no value`);
  const value: ClientValue = { key, flags: reply.flags ?? 0, value: reply.value };
  if (withCas) {
    if (reply.cas === undefined) throw new HotpathMcError('HP_MC_PROTOCOL', `gets ${key}: reply has no cas`);
    value.cas = reply.cas;
  }
  return value;
}

/**
 * The meta protocol: get/gets/gat/touch as `mg`, every storage command as `ms` (mode flag M,
 * cas as C), delete as `md`, incr/decr as `ma … v`, getMulti as quiet `mg … O<i> q` lines
 * ended by `mn`. Replies are matched in order; getMulti's hits by their opaque index.
 */
export const metaCodec: ClientCodec = {
  protocol: 'meta',
  createParser: (onReply) => new MetaReplyParser({ onReply }),
  endsBatch: (reply) => reply.type === 'meta-reply' && reply.code === 'MN',
  multiIsBatch: true,
  encodeRetrieve(mode, key, exptime) {
    if (mode === 'gat') return encodeMetaGet(key, { value: true, flags: true, touch: exptime });
    return encodeMetaGet(key, mode === 'gets' ? GETS : GET);
  },
  readValue(reply: ClientReply, mode: RetrieveMode, key: string) {
    const meta = metaReply(reply, `${mode} ${key}`);
    if (meta.code === 'VA') return toValue(meta, key, mode === 'gets');
    if (meta.code === 'EN') return undefined;
    throw unexpectedReply(reply, `${mode} ${key}`);
  },
  encodeGetMulti: (keys) => encodeMetaGetMulti(keys, GET),
  readMulti(replies, keys, into) {
    for (const reply of replies) {
      const meta = metaReply(reply, 'get');
      if (meta.code === 'EN') continue;
      const key = meta.opaque === undefined ? undefined : keys[meta.opaque];
      if (meta.code !== 'VA' || key === undefined) throw unexpectedReply(reply, 'get');
      into.set(key, toValue(meta, key, false));
    }
  },
  encodeStore(command, key, value, options) {
    return encodeMetaSet(key, value, {
      mode: command,
      flags: options.flags,
      exptime: options.exptime,
      cas: options.cas,
      quiet: options.noreply,
    });
  },
  readStore(reply, what) {
    const status = STORE_CODES[metaReply(reply, what).code];
    if (status === undefined) throw unexpectedReply(reply, what);
    return status;
  },
  encodeDelete: (key) => encodeMetaDelete(key),
  readDelete(reply, what) {
    const code = metaReply(reply, what).code;
    if (code !== 'HD' && code !== 'NF') throw unexpectedReply(reply, what);
    return code === 'HD';
  },
  encodeDelta: (command, key, delta) => encodeMetaArithmetic(key, { mode: command, delta, value: true }),
  readDelta(reply, what) {
    const meta = metaReply(reply, what);
    if (meta.code === 'NF') return undefined;
    if (meta.code !== 'VA') throw unexpectedReply(reply, what);
    const digits = meta.value;
    if (digits === undefined) throw internalError(`the VA reply to ${what} has no value`);
    let end = digits.length;
    while (end > 0 && digits[end - 1] === 32) end--;
    const value = parseU64(digits, 0, end);
    if (value < 0n) throw new HotpathMcError('HP_MC_PROTOCOL', `${what}: the new value is not a number`);
    return value;
  },
  encodeTouch: (key, exptime) => encodeMetaGet(key, { touch: exptime }),
  readTouch(reply, what) {
    const code = metaReply(reply, what).code;
    if (code !== 'HD' && code !== 'EN') throw unexpectedReply(reply, what);
    return code === 'HD';
  },
};
