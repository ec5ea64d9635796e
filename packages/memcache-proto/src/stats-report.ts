import { ITEM_OVERHEAD_BYTES } from './lru-store.js';
import type { Session } from './session.js';

/** Writes `stats [group]` as memcached formats it: `STAT name value` lines then END. */
export function writeStats(conn: Session, group: string, ntok: number): void {
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

export function statsLines(conn: Session, group: string, ntok: number): StatLines | string | undefined {
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
        ['evictions', 'on'],
        ['num_threads', 1],
        ['cas_enabled', 'yes'],
        ['auth_enabled_ascii', conn.settings.users === undefined ? 'no' : 'yes'],
        ['auth_enabled_sasl', conn.settings.users === undefined ? 'no' : 'yes'],
        ['item_size_max', cache.itemSizeMax],
        ['idle_timeout', context.idleTimeoutSeconds],
        ['read_buf_max', conn.settings.maxInputBytes],
        ['write_buf_max', conn.settings.maxOutputBytes],
      ];
    case 'items': {
      if (store.size === 0) return [];
      let oldest = now;
      for (const item of store.entries(now)) {
        oldest = item.storedAt;
        break;
      }
      return [
        ['items:1:number', store.size],
        ['items:1:age', Math.floor((now - oldest) / 1000)],
        ['items:1:evicted', store.evictions],
        ['items:1:evicted_unfetched', store.evictedUnfetched],
        ['items:1:expired_unfetched', store.expiredUnfetched],
        ['items:1:reclaimed', store.reclaimed],
      ];
    }
    case 'slabs':
      return [
        ['1:chunk_size', ITEM_OVERHEAD_BYTES],
        ['1:used_chunks', store.size],
        ['1:mem_requested', store.usedBytes],
        ['active_slabs', store.size === 0 ? 0 : 1],
        ['total_malloced', store.usedBytes],
      ];
    default:
      return undefined;
  }
}
