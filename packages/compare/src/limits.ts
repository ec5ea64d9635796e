import { HotpathCompareError } from './errors.js';
import type { ShardId, Side } from './model.js';
import { MAX_SHARDS } from './settings/front-door.js';

// The report job reads results that jobs running pull-request code wrote. Each file's shape is
// checked by schema.ts; these are the bounds on the whole: how many files and bytes, shards and
// rounds, checked before the data they bound is parsed, so a crafted input ends in a clear error
// rather than in an out-of-memory kill or a merge that does not end.

const MiB = 1024 * 1024;

/** The documented limits of the report stage (README: "Limits of the report stage"). */
export const RESULTS_LIMITS = {
  /** Results files (hotpath-results.json) below the folders given. */
  files: 256,
  /** Shards of a run: `i/n` with n at most this (as parseShard accepts). */
  shards: MAX_SHARDS,
  /** Bytes of one results or profile file. */
  fileBytes: 256 * MiB,
  /** Bytes of every results file and every profile they name, each profile counted once. */
  totalBytes: 1024 * MiB,
  /**
   * Both byte totals are also at most this fraction of the heap limit (a file takes several times
   * its size while JSON is parsed and checked, and each reference to a profile costs a share
   * table), so a smaller heap gets the clear error too.
   */
  heapShare: 1 / 8,
  /**
   * Profile bytes as the merge reads them: each profile counted at every round that names it
   * (parsed once, but merged once per reference; this bounds the merge's time).
   */
  referencedProfileBytes: 1024 * MiB,
} as const;

/** A limit of the report stage was exceeded: the error names the limit and the value. */
export function limitError(
  what: string,
  value: number | string,
  limit: number | string,
  hint = '',
): HotpathCompareError {
  return new HotpathCompareError(
    'HP_COMPARE_RESULTS_LIMIT',
    `${what} is ${value}: expected at most ${limit}${hint ? ` (${hint})` : ''}`,
  );
}

/** What checkShardBounds needs of a shard: its id, its rounds per side and order, its settings' rounds. */
export interface ShardCounts {
  shard: ShardId;
  rounds: number;
  base: { length: number };
  head: { length: number };
  order: readonly Side[];
  scenarios: number;
  /** Scenario results in the shard's rounds, over both sides. */
  windows: number;
}

/**
 * A shard's id and its rounds against the settings it carries: i/n with 1 <= i <= n <= 256, at
 * most `rounds` rounds per side (the fixed count, or max-rounds with rounds auto; at most 1000), an order of at most both sides' rounds,
 * at most one result per scenario and round. `where` names the shard's file or the API.
 */
export function checkShardBounds(counts: ShardCounts, where: string): void {
  const { shard } = counts;
  const id = `shard ${shard.index}/${shard.total} (${where})`;
  if (!Number.isSafeInteger(shard.total) || shard.total < 1 || shard.total > RESULTS_LIMITS.shards)
    throw limitError(`the shard count of ${id}`, shard.total, RESULTS_LIMITS.shards);
  if (!Number.isSafeInteger(shard.index) || shard.index < 1 || shard.index > shard.total)
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS_LIMIT',
      `the shard index of ${id} is ${shard.index}: expected 1 to ${shard.total}`,
    );
  for (const side of ['base', 'head'] as const) {
    const n = counts[side].length;
    if (n > counts.rounds)
      throw limitError(
        `the number of ${side} rounds in ${id}`,
        n,
        counts.rounds,
        `the rounds setting the shard carries (max-rounds with rounds auto)`,
      );
  }
  if (counts.order.length > counts.base.length + counts.head.length)
    throw limitError(
      `the round order of ${id}`,
      `${counts.order.length} entries long`,
      `${counts.base.length + counts.head.length}, one per round`,
    );
  const windows = (counts.base.length + counts.head.length) * counts.scenarios;
  if (counts.windows > windows)
    throw limitError(
      `the number of scenario results in ${id}`,
      counts.windows,
      windows,
      `${counts.scenarios} scenarios in each of its rounds`,
    );
}
