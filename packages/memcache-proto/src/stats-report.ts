import type { AuthUsers } from './authfile.js';
import type { Cache } from './cache.js';
import { float64At } from './checked-index.js';
import type { LruStore } from './lru-store.js';
import { NIL } from './slab-allocator.js';

/** The settings `stats` and `stats settings` show (a server's ConnectionSettings has them all). */
export interface StatsSettings {
  readonly version: string;
  readonly identity: string;
  readonly verbosity: number;
  readonly users: AuthUsers | undefined;
  readonly maxInputBytes: number;
  readonly maxOutputBytes: number;
  readonly port: number;
  readonly listen: string;
  readonly maxConnections: number;
  readonly idleTimeoutSeconds: number;
  readonly evictions: boolean;
  readonly casEnabled: boolean;
  readonly flushEnabled: boolean;
  readonly shutdownEnabled: boolean;
  readonly protocol: 'auto' | 'ascii' | 'binary';
  readonly maxReqsPerEvent: number;
}

/**
 * What the stats report reads: the cache (its store, its counters, which `stats reset` zeroes,
 * and its item size limit) and the settings. A protocol session is one; the report needs no more.
 */
export interface StatsSource {
  readonly cache: Pick<Cache, 'store' | 'stats' | 'itemSizeMax'>;
  readonly settings: StatsSettings;
  /** The shared buffer budget: its limit, what it holds, how many connections it closed. */
  readonly budget: { readonly limit: number; readonly used: number; readonly closed: number };
}

/** A StatsSource that takes the reply too: the text protocol's `stats` command. */
export interface StatsReplyTarget extends StatsSource {
  reply(text: string): void;
}

/** Writes `stats [group]` as memcached formats it: `STAT name value` lines then END. */
export function writeStats(conn: StatsReplyTarget, group: string, ntok: number): void {
  const lines = statsLines(conn, group, ntok);
  if (lines === undefined) {
    conn.reply('ERROR\r\n');
    return;
  }
  if (typeof lines === 'string') {
    conn.reply(lines);
    return;
  }
  let text = '';
  for (const [name, value] of lines) text += `STAT ${name} ${value}\r\n`;
  conn.reply(`${text}END\r\n`);
}

export type StatLines = [string, string | number | bigint][];

export function statsLines(conn: StatsSource, group: string, ntok: number): StatLines | string | undefined {
  const cache = conn.cache;
  const store = cache.store;
  const stats = cache.stats;
  const context = conn.settings;
  const now = Date.now();
  if (ntok === 1) {
    const usage = process.resourceUsage();
    return [
      ['pid', process.pid],
      ['uptime', Math.floor((now - stats.startedAt) / 1000)],
      ['time', Math.floor(now / 1000)],
      ['version', conn.settings.version],
      ['hotpath_version', conn.settings.identity],
      ['pointer_size', 64],
      ['rusage_user', (usage.userCPUTime / 1e6).toFixed(6)],
      ['rusage_system', (usage.systemCPUTime / 1e6).toFixed(6)],
      ['max_connections', context.maxConnections],
      ['curr_connections', stats.currConnections],
      ['total_connections', stats.totalConnections],
      ['rejected_connections', stats.rejectedConnections],
      ['read_buf_bytes', conn.budget.used],
      ['read_buf_oom', conn.budget.closed],
      ['connection_structures', stats.currConnections],
      ['cmd_get', stats.cmdGet],
      ['cmd_set', stats.cmdSet],
      ['cmd_flush', stats.cmdFlush],
      ['cmd_touch', stats.cmdTouch],
      ['cmd_meta', stats.cmdMeta],
      ['get_hits', stats.getHits],
      ['get_misses', stats.getMisses],
      ['get_expired', stats.getExpired],
      ['get_flushed', stats.getFlushed],
      ['delete_misses', stats.deleteMisses],
      ['delete_hits', stats.deleteHits],
      ['incr_misses', stats.incrMisses],
      ['incr_hits', stats.incrHits],
      ['decr_misses', stats.decrMisses],
      ['decr_hits', stats.decrHits],
      ['cas_misses', stats.casMisses],
      ['cas_hits', stats.casHits],
      ['cas_badval', stats.casBadval],
      ['touch_hits', stats.touchHits],
      ['touch_misses', stats.touchMisses],
      ['auth_cmds', stats.authCmds],
      ['auth_errors', stats.authErrors],
      ['bytes_read', stats.bytesRead],
      ['bytes_written', stats.bytesWritten],
      ['limit_maxbytes', store.limitBytes],
      ['threads', 1],
      ['bytes', store.usedBytes],
      ['curr_items', store.size],
      ['total_items', store.totalItems],
      ['expired_unfetched', store.expiredUnfetched],
      ['evicted_unfetched', store.evictedUnfetched],
      ['evictions', store.evictions],
      ['reclaimed', store.reclaimed],
      ['slabs_moved', store.pagesMoved],
      ['slab_reassign_rescues', store.pageItemsRescued],
      ['slab_reassign_evictions_nomem', store.pageItemsEvicted],
    ];
  }
  switch (group) {
    case 'reset':
      stats.reset();
      return 'RESET\r\n';
    case 'settings':
      return [
        ['maxbytes', store.limitBytes],
        ['maxconns', context.maxConnections],
        ['tcpport', context.port],
        ['udpport', 0],
        ['inter', context.listen],
        ['verbosity', conn.settings.verbosity],
        ['evictions', conn.settings.evictions ? 'on' : 'off'],
        ['num_threads', 1],
        ['cas_enabled', conn.settings.casEnabled ? 'yes' : 'no'],
        ['flush_enabled', conn.settings.flushEnabled ? 'yes' : 'no'],
        ['shutdown_command', conn.settings.shutdownEnabled ? 'yes' : 'no'],
        ['binding_protocol', conn.settings.protocol === 'auto' ? 'auto-negotiate' : conn.settings.protocol],
        ['reqs_per_event', conn.settings.maxReqsPerEvent],
        ['slab_reassign', 'yes'],
        ['auth_enabled_ascii', conn.settings.users === undefined ? 'no' : 'yes'],
        ['auth_enabled_sasl', conn.settings.users === undefined ? 'no' : 'yes'],
        ['item_size_max', cache.itemSizeMax],
        ['idle_timeout', context.idleTimeoutSeconds],
        ['read_buf_max', conn.settings.maxInputBytes],
        ['write_buf_max', conn.settings.maxOutputBytes],
        ['read_buf_mem_limit', conn.budget.limit],
      ];
    case 'items':
      return itemsReport(store, now);
    case 'slabs':
      return slabsReport(store);
    default:
      return undefined;
  }
}

/** `stats items`: per slab class with items, memcached's names (the large-item LRU is not a class). */
function itemsReport(store: LruStore, now: number): StatLines {
  const lines: StatLines = [];
  const classes = store.slabs.classes;
  for (let c = 0; c < classes.length; c++) {
    const count = store.countIn(c);
    if (count === 0 && store.evictedBy[c] === 0 && store.reclaimedBy[c] === 0) continue;
    const id = c + 1;
    const oldest = store.oldestIn(c);
    const age = oldest === NIL ? 0 : Math.floor((now - store.storedAtOf(oldest)) / 1000);
    lines.push(
      [`items:${id}:number`, count],
      [`items:${id}:age`, age],
      [`items:${id}:mem_requested`, float64At(store.requestedBy, c)],
      [`items:${id}:evicted`, float64At(store.evictedBy, c)],
      [`items:${id}:evicted_unfetched`, float64At(store.evictedUnfetchedBy, c)],
      [`items:${id}:expired_unfetched`, float64At(store.expiredUnfetchedBy, c)],
      [`items:${id}:reclaimed`, float64At(store.reclaimedBy, c)],
    );
  }
  return lines;
}

/** `stats slabs`: the pages and chunks of every class that has pages, then the totals. */
function slabsReport(store: LruStore): StatLines {
  const lines: StatLines = [];
  let active = 0;
  for (const cls of store.slabs.classes) {
    if (cls.pages === 0) continue;
    active++;
    const id = cls.id;
    const total = cls.pages * cls.perPage;
    lines.push(
      [`${id}:chunk_size`, cls.chunkSize],
      [`${id}:chunks_per_page`, cls.perPage],
      [`${id}:total_pages`, cls.pages],
      [`${id}:total_chunks`, total],
      [`${id}:used_chunks`, cls.used],
      [`${id}:free_chunks`, total - cls.used],
      [`${id}:free_chunks_end`, 0],
      [`${id}:mem_requested`, float64At(store.requestedBy, id - 1)],
    );
  }
  lines.push(['active_slabs', active], ['total_malloced', store.slabs.mallocedBytes]);
  return lines;
}
