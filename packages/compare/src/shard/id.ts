import { HotpathCompareError } from '../errors.js';
import type { ShardId } from '../model.js';

/** Parses `i/n` (1 <= i <= n <= 256); throws HP_COMPARE_INVALID_SETTING naming the value. */
export function parseShard(text: string): ShardId {
  const match = /^\s*(\d{1,3})\s*\/\s*(\d{1,3})\s*$/.exec(text);
  const index = Number(match?.[1]);
  const total = Number(match?.[2]);
  if (!match || index < 1 || total < 1 || index > total || total > 256) {
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `invalid shard ${JSON.stringify(text)}: expected i/n with 1 <= i <= n <= 256, e.g. 1/4`,
    );
  }
  return { index, total };
}

/** The folder name of a shard's results: unique per shard, so merged artifacts do not collide. */
export function shardFolder(shard: ShardId): string {
  return `shard-${shard.index}-of-${shard.total}`;
}
