import { describe, expect, it } from 'vitest';
import { Cache, StoreMode } from '../src/cache.js';
import { type StatsSource, statsLines, writeStats } from '../src/stats-report.js';

/** The report reads only a cache and settings: a plain object serves, no connection needed. */
function source(): StatsSource & { cache: Cache; replies: string[]; reply(text: string): void } {
  const replies: string[] = [];
  return {
    cache: new Cache({ memoryLimitBytes: 1 << 20, itemSizeMax: 1024 }),
    settings: {
      version: '1.6.18',
      identity: 'hotpath-memcached 0.0.0-test',
      verbosity: 1,
      users: undefined,
      maxInputBytes: 4096,
      maxOutputBytes: 8192,
      port: 11311,
      listen: '127.0.0.1',
      maxConnections: 7,
      idleTimeoutSeconds: 30,
      evictions: false,
      casEnabled: true,
      flushEnabled: false,
      shutdownEnabled: true,
      protocol: 'ascii',
      maxReqsPerEvent: 20,
    },
    budget: { limit: 1 << 22, used: 300, closed: 2 },
    replies,
    reply: (text) => replies.push(text),
  };
}

describe('stats report', () => {
  it('reports the settings it is given', () => {
    const lines = statsLines(source(), 'settings', 2);
    expect(Array.isArray(lines) && Object.fromEntries(lines)).toMatchObject({
      maxbytes: 1 << 20,
      maxconns: 7,
      tcpport: 11311,
      inter: '127.0.0.1',
      verbosity: 1,
      auth_enabled_ascii: 'no',
      item_size_max: 1024,
      idle_timeout: 30,
      read_buf_max: 4096,
      write_buf_max: 8192,
      read_buf_mem_limit: 1 << 22,
      evictions: 'off',
      cas_enabled: 'yes',
      flush_enabled: 'no',
      shutdown_command: 'yes',
      binding_protocol: 'ascii',
      reqs_per_event: 20,
    });
  });

  it('counts from the cache, resets on `stats reset`, and formats STAT lines', () => {
    const s = source();
    const value = Buffer.from('v');
    s.cache.storeItem(StoreMode.SET, 'k', value, 0, 1, 0, 0, 0, Date.now());
    s.cache.get('k', Date.now());
    s.cache.get('missing', Date.now());
    const general = statsLines(s, '', 1);
    expect(Array.isArray(general) && Object.fromEntries(general)).toMatchObject({
      version: '1.6.18',
      hotpath_version: 'hotpath-memcached 0.0.0-test',
      cmd_get: 2,
      get_hits: 1,
      get_misses: 1,
      curr_items: 1,
      read_buf_bytes: 300,
      read_buf_oom: 2,
    });
    expect(statsLines(s, 'reset', 2)).toBe('RESET\r\n');
    expect(s.cache.stats.cmdGet).toBe(0);
    writeStats(s, 'settings', 2);
    expect(s.replies).toHaveLength(1);
    expect(s.replies[0]).toMatch(/^STAT maxbytes 1048576\r\n(STAT \S+ \S+\r\n)+END\r\n$/);
    writeStats(s, 'nope', 2);
    expect(s.replies[1]).toBe('ERROR\r\n');
  });
});
