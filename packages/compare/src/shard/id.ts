import type { ShardId } from '../model.js';
import { parseShardText } from '../settings/front-door.js';

/**
 * Parses `i/n` (1 <= i <= n <= 256); throws HP_COMPARE_INVALID_SETTING naming the value — the
 * check the CLI's --shard and the Action's shard input make (settings/front-door.ts).
 */
export function parseShard(text: string): ShardId {
  return parseShardText(text);
}

/** The folder name of a shard's results: unique per shard, so merged artifacts do not collide. */
export function shardFolder(shard: ShardId): string {
  return `shard-${shard.index}-of-${shard.total}`;
}
