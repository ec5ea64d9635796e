import { connect } from 'node:net';
import { encodeSet, type TextReply, TextReplyParser } from '@hotpath/memcache-proto';
import { HotpathLoadError } from './errors.js';
import { memcacheKey } from './memcache-protocol.js';
import type { MemcacheTarget } from './options.js';

const BATCH = 256;

/**
 * Stores the first `hitRatio` share of the key space before a get/mix run, so that the share
 * of gets that hit is the hit ratio asked for. Resolves with the number of keys stored.
 */
export function preloadMemcache(target: MemcacheTarget, timeoutSeconds: number): Promise<number> {
  const keys = target.operation === 'set' ? 0 : Math.floor(target.keySpace * target.hitRatio);
  if (keys === 0) return Promise.resolve(0);
  const value = Buffer.alloc(target.valueSize, 'x');
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.host, port: target.port, noDelay: true });
    let next = 0;
    let answered = 0;
    let stored = 0;
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(stored);
    };
    const timer = setTimeout(
      () =>
        finish(
          new HotpathLoadError(
            'HP_LOAD_UNREACHABLE',
            `memcache server ${target.host}:${target.port} did not store the ${keys} preload keys within ${timeoutSeconds} s`,
          ),
        ),
      Math.max(timeoutSeconds, 1) * 1000 * Math.max(1, Math.ceil(keys / 10_000)),
    );
    const sendBatch = () => {
      const parts: Buffer[] = [];
      for (let i = 0; i < BATCH && next < keys; i++, next++)
        parts.push(encodeSet(memcacheKey(target, next), value));
      socket.write(Buffer.concat(parts));
    };
    const onReply = (reply: TextReply) => {
      answered++;
      if (reply.type === 'status' && reply.status === 'STORED') stored++;
      if (answered === keys) finish();
      else if (answered === next) sendBatch();
    };
    const parser = new TextReplyParser({ onReply });
    socket.on('connect', sendBatch);
    socket.on('data', (chunk: Buffer) => {
      try {
        parser.push(chunk);
      } catch (cause) {
        finish(
          new HotpathLoadError('HP_LOAD_UNREACHABLE', `memcache preload got a bad reply: ${String(cause)}`, {
            cause,
          }),
        );
      }
    });
    socket.on('error', (cause) =>
      finish(
        new HotpathLoadError(
          'HP_LOAD_UNREACHABLE',
          `cannot connect to ${target.host}:${target.port}: ${cause.message}`,
          {
            cause,
          },
        ),
      ),
    );
    socket.on('close', () =>
      finish(
        new HotpathLoadError(
          'HP_LOAD_UNREACHABLE',
          `memcache server ${target.host}:${target.port} closed the connection`,
        ),
      ),
    );
  });
}
