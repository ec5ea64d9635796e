import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probePath } from '../src/measure/probe-path.js';
import { runRound } from '../src/measure/round.js';
import type { MonitorSummary } from '../src/model.js';
import { resolveSettings } from '../src/settings/schema.js';
import { levelled } from './helpers/levelled.js';

// The event loop's own CPU time, both ways the probe reads it: process.threadCpuUsage() (Node
// 22.19+, 24: what the Action runs) and Linux's /proc/<pid>/task/<pid> (Node 20). A real server
// hashes a password per request with pbkdf2Sync (on the main thread) or pbkdf2 (on libuv's pool).

const FIXTURES = new URL('./fixtures/', import.meta.url).pathname;
const settings = levelled(
  resolveSettings({
    overrides: { start: 'x', url: '/auth', duration: '1', warmup: '0.3', connections: '4', rounds: '1' },
  }),
);

async function oneRound(mode: 'sync' | 'async', node: string, extra: Record<string, string> = {}) {
  const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}`, ...extra };
  const round = await runRound(
    { side: 'head', command: `HASH_MODE=${mode} HASH_ITERATIONS=20000 node hash-server.cjs`, cwd: FIXTURES },
    1,
    settings,
    { probePath: probePath(), env },
  );
  const [monitor] = round.scenarios[0]?.monitors ?? [];
  expect(monitor).toBeDefined();
  return monitor as MonitorSummary;
}

function expectMainThreadShare(sync: MonitorSummary, async: MonitorSummary) {
  for (const m of [sync, async]) {
    expect(m.mainThreadCpuMicros).toBeGreaterThan(0);
    // one thread of the process cannot have used more than the process (clock granularity aside)
    expect(m.mainThreadCpuMicros).toBeLessThanOrEqual(m.cpuMicros * 1.02 + 20_000);
  }
  // pbkdf2Sync: the hashing is the main thread's; pbkdf2: the pool's, the main thread only serves
  expect(sync.mainThreadCpuMicros / sync.cpuMicros).toBeGreaterThan(0.7);
  expect(async.mainThreadCpuMicros / async.cpuMicros).toBeLessThan(0.5);
}

describe("the event loop's own CPU time", () => {
  it('Node 20: read from /proc (schedstat)', async () => {
    const node = process.execPath;
    if (typeof (process as { threadCpuUsage?: unknown }).threadCpuUsage === 'function') {
      // a newer Node runs the suite: force the /proc path, which Node 20 takes on its own
      const sync = await oneRound('sync', node, { HOTPATH_THREAD_CPU: 'proc' });
      const async = await oneRound('async', node, { HOTPATH_THREAD_CPU: 'proc' });
      expect(sync.mainThreadCpuSource).toMatch(/^proc-/);
      expectMainThreadShare(sync, async);
      return;
    }
    const sync = await oneRound('sync', node);
    const async = await oneRound('async', node);
    expect(sync.mainThreadCpuSource).toBe('proc-schedstat');
    expect(async.mainThreadCpuSource).toBe('proc-schedstat');
    expectMainThreadShare(sync, async);
  });

  // .ci/run installs node@24 from npm and sets HOTPATH_NODE24; in CI a missing Node 24 fails.
  const node24 = process.env.HOTPATH_NODE24 ?? '/tmp/node24/node_modules/.bin/node';
  it.skipIf(!existsSync(node24) && !process.env.CI)('Node 24: process.threadCpuUsage()', async () => {
    expect(existsSync(node24), `no Node 24 binary at ${node24} (set HOTPATH_NODE24)`).toBe(true);
    const sync = await oneRound('sync', node24);
    const async = await oneRound('async', node24);
    expect(sync.mainThreadCpuSource).toBe('threadCpuUsage');
    expect(async.mainThreadCpuSource).toBe('threadCpuUsage');
    expectMainThreadShare(sync, async);
  });
});
