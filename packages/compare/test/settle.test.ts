import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probePath } from '../src/measure/probe-path.js';
import { runRound } from '../src/measure/round.js';
import { SETTLE_SECONDS, settleSeconds } from '../src/measure/round-windows.js';
import type { MemoryWindow, ScenarioRound } from '../src/model.js';
import { resolveSettings } from '../src/settings/schema.js';
import { retainedOver, roundMetrics } from '../src/verdict/round-pairs.js';
import { defined } from './helpers/defined.js';
import { levelled } from './helpers/levelled.js';

// The window's opening collection comes a settle period before the window, within the warm-up: a
// full collection throws away optimized code that V8 makes again in the second after it, which the
// window must not measure. Its retained bytes are then over the settle's requests and the window's.

describe('the settle period between the opening collection and the window', () => {
  it('is the warm-up’s last second at most, half of a short one, none with memory off or no warm-up', () => {
    expect(SETTLE_SECONDS).toBe(1);
    expect(settleSeconds({ warmup: 2, memory: 'on' })).toBe(1);
    expect(settleSeconds({ warmup: 10, memory: 'on' })).toBe(1);
    expect(settleSeconds({ warmup: 1, memory: 'on' })).toBe(0.5);
    expect(settleSeconds({ warmup: 0, memory: 'on' })).toBe(0);
    expect(settleSeconds({ warmup: 2, memory: 'off' })).toBe(0);
  });

  it('divides retained bytes by the window’s and the settle’s requests, and only those', () => {
    const memory: MemoryWindow = {
      heapStart: 1_000_000,
      heapEnd: 1_300_000,
      externalStart: 0,
      externalEnd: 0,
      arrayBuffersStart: 0,
      arrayBuffersEnd: 0,
      allocatedBytes: 2_000_000,
      gcMicros: 4000,
      gcMaxMicros: 1000,
      gcCount: 4,
    };
    const round = {
      scenario: 'x',
      load: {
        requests: { total: 1000, mean: 200, perSecond: [] },
        latency: { mean: 1, p50: 1, p90: 2, p99: 3, max: 4 },
        errors: 0,
        non2xx: 0,
      },
      monitors: [{ cpuMicros: 0, mainThreadCpuMicros: 0, utilization: 0.5, memory }],
      profilers: [],
      settleRequests: 500,
    } as unknown as ScenarioRound;
    expect(retainedOver(round)).toBe(1500);
    const metrics = roundMetrics(round);
    expect(metrics.retainedBytesPerRequest).toBe(200);
    expect(metrics.retainedOver).toBe(1500);
    // Allocation and GC time count from the window's start: over the window's requests.
    expect(metrics.allocatedBytesPerRequest).toBe(2000);
    expect(metrics.gcTimePerRequest).toBe(4);
    const { settleRequests: _, ...without } = round;
    expect(roundMetrics(without as ScenarioRound).retainedBytesPerRequest).toBe(300);
    expect(roundMetrics(without as ScenarioRound).retainedOver).toBeUndefined();
  });
});

const SERVER = `let served = 0;
require('node:http').createServer((req, res) => {
  served++;
  const items = Array.from({ length: 20 }, (_, i) => ({ i, s: 'item ' + i }));
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ served, items }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

describe('a real server’s round with memory on (warm-up 1.5 s: settle 0.75 s)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-settle-'));
    writeFileSync(join(dir, 'server.cjs'), SERVER);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const round = async (memory: 'on' | 'off', keepDir: string): Promise<ScenarioRound> => {
    const settings = resolveSettings({
      config: { scenarios: [{ name: 'json', url: '/' }] },
      overrides: { start: 'x', duration: '1', warmup: '1.5', connections: '4', profiler: 'none', memory },
    });
    const result = await runRound(
      { side: 'head', command: 'node server.cjs', cwd: dir, root: dir },
      1,
      levelled(settings),
      { probePath: probePath(), env: process.env, keepDir },
    );
    return defined(result.scenarios[0], 'the scenario');
  };

  it('takes the opening collection before the settle load, and counts the settle in retained bytes only', async () => {
    const keep = mkdtempSync(join(dir, 'on-'));
    const scenario = await round('on', keep);
    const settle = defined(scenario.settleRequests, 'settle requests');
    expect(settle).toBeGreaterThan(0);
    expect(scenario.survivors?.warmupRequests).toBeGreaterThan(0);
    const memory = defined(scenario.monitors[0]?.memory, "the window's memory");
    const metrics = roundMetrics(scenario);
    expect(metrics.retainedOver).toBe(scenario.load.requests.total + settle);
    expect(metrics.retainedBytesPerRequest).toBeCloseTo(
      (memory.heapEnd - memory.heapStart + memory.externalEnd - memory.externalStart) /
        (scenario.load.requests.total + settle),
      6,
    );
    // The survivors profile is the load's after the window: written once the window's files were.
    const files = readdirSync(keep);
    const survivors = files.find((f) => f.endsWith('.survivors.heapprofile'));
    const monitor = files.find((f) => f.endsWith('.monitor.json'));
    const written = statSync(join(keep, defined(survivors, 'the survivors file'))).mtimeMs;
    const closed = statSync(join(keep, defined(monitor, 'the monitor file'))).mtimeMs;
    expect(written - closed).toBeGreaterThan(500);
  });

  it('with memory off: no collection, so no settle, and the warm-up runs whole', async () => {
    const scenario = await round('off', mkdtempSync(join(dir, 'off-')));
    expect(scenario.settleRequests).toBeUndefined();
    expect(scenario.monitors[0]?.memory).toBeUndefined();
    expect(roundMetrics(scenario).retainedOver).toBeUndefined();
  });
});
