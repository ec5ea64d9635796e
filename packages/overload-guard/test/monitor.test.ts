import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMonitor, type MonitorOptions } from '../src/index.js';

function burn(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // busy: the event loop cannot turn
  }
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Wall-clock figures (how long a delay reads, what utilisation a burning loop shows) are in
// bench/run.mjs; here only what holds on any machine however loaded: a blocked loop is seen,
// busy reads above idle, windows follow the snapshots, the series is bounded and in order.
describe('createMonitor', () => {
  it('sees a blocked event loop as delay and utilisation, in the window of its snapshot', async () => {
    const resolution = 5;
    const monitor = createMonitor({ resolution });
    try {
      monitor.snapshot();
      for (let i = 0; i < 5; i++) {
        burn(60);
        await turn();
      }
      const busy = monitor.snapshot();
      // Each turn was blocked for at least 60 ms of wall time: a slower machine only adds to that.
      expect(busy.eventLoopDelay.count).toBeGreaterThan(0);
      expect(busy.eventLoopDelay.max).toBeGreaterThanOrEqual(60 - 2 * resolution);
      expect(busy.eventLoopDelay.p90).toBeLessThanOrEqual(busy.eventLoopDelay.max);
      expect(busy.eventLoopDelay.min).toBeLessThanOrEqual(busy.eventLoopDelay.p50);

      // A snapshot opens a new window: one taken at once (no turn between) has seen nothing.
      const empty = monitor.snapshot();
      expect(empty.eventLoopDelay).toEqual({
        min: 0,
        mean: 0,
        p50: 0,
        p90: 0,
        p99: 0,
        max: 0,
        stddev: 0,
        count: 0,
      });
      const opened = performance.now();

      await sleep(200);
      const closing = performance.now();
      const idle = monitor.snapshot();
      expect(idle.windowMs).toBeGreaterThanOrEqual(closing - opened);
      expect(idle.eventLoopUtilization).toBeLessThan(busy.eventLoopUtilization);
      expect(idle.timestamp).toBeGreaterThanOrEqual(busy.timestamp);
      expect(idle.rssBytes).toBeGreaterThan(idle.heapUsedBytes);
      expect(idle.heapTotalBytes).toBeGreaterThanOrEqual(idle.heapUsedBytes);
    } finally {
      monitor.close();
    }
  });

  it('keeps a per-interval series whose utilisation follows the load, bounded by seriesLength', async () => {
    const createdElu = performance.eventLoopUtilization();
    const monitor = createMonitor({ sampleInterval: 50, seriesLength: 4, utilizationWindow: 200 });
    try {
      // Busy until the series has filled (it is sampled between the burns).
      while (monitor.series().length < 4) {
        burn(20);
        await turn();
      }
      burn(100);
      await turn();
      const busy = monitor.series();
      const busyWindow = monitor.snapshot().eventLoopUtilizationWindow;
      expect(busy).toHaveLength(4);

      // Idle until four new samples have replaced the busy ones.
      const lastBusy = busy.at(-1)?.timestamp ?? 0;
      while ((monitor.series()[0]?.timestamp ?? 0) <= lastBusy) await sleep(50);
      await sleep(250); // the 200 ms window now holds idle time only
      const idle = monitor.series();
      expect(idle).toHaveLength(4);
      const timestamps = idle.map((sample) => sample.timestamp);
      expect(timestamps).toEqual([...timestamps].sort((a, b) => a - b));
      expect(Math.max(...idle.map((s) => s.eventLoopUtilization))).toBeLessThan(
        Math.min(...busy.map((s) => s.eventLoopUtilization)),
      );
      // The sliding window forgot the busy phase, unlike a reading since the monitor started.
      const idleWindow = monitor.snapshot().eventLoopUtilizationWindow;
      expect(idleWindow).toBeLessThan(busyWindow);
      expect(idleWindow).toBeLessThan(performance.eventLoopUtilization(createdElu).utilization);
    } finally {
      monitor.close();
    }
  });

  it('counts active handles such as a listening server', async () => {
    const monitor = createMonitor({ sampleInterval: 0 });
    const server = createServer();
    try {
      const before = monitor.snapshot().activeHandles;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      expect(monitor.snapshot().activeHandles).toBeGreaterThan(before);
      expect(monitor.series()).toEqual([]);
    } finally {
      server.close();
      monitor.close();
    }
  });

  it('never keeps a process alive', () => {
    const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const script = `import(${JSON.stringify(dist)}).then(({ createMonitor }) => { createMonitor({ sampleInterval: 10 }); console.log('started'); });`;
    const child = spawnSync(process.execPath, ['-e', script], { timeout: 10_000, encoding: 'utf8' });
    expect(child.stdout.trim()).toBe('started');
    expect(child.status).toBe(0);
  });

  it('rejects options outside their range, naming the value and what was expected', () => {
    expect(() => createMonitor({ resolution: 0 })).toThrow(
      /invalid resolution 0: expected a number of milliseconds >= 1/,
    );
    expect(() => createMonitor({ sampleInterval: 5 })).toThrow(/invalid sampleInterval 5: expected 0 or/);
    expect(() => createMonitor({ seriesLength: 1.5 })).toThrow(/invalid seriesLength 1.5/);
    expect(() => createMonitor({ utilizationWindow: 'x' as unknown as number })).toThrow(
      expect.objectContaining({ code: 'HP_GUARD_INVALID_OPTION' }),
    );
    expect(() => createMonitor({ resolution: Number.NaN })).toThrow(
      /invalid resolution NaN: expected a number/,
    );
    expect(() => createMonitor({ utilizationWindow: Number.POSITIVE_INFINITY })).toThrow(
      /invalid utilizationWindow Infinity/,
    );
    expect(() => createMonitor(5 as unknown as MonitorOptions)).toThrow(
      /createMonitor: invalid options 5: expected an object of options/,
    );
  });

  it('takes null as no options, as undefined (the defaults)', () => {
    const monitor = createMonitor(null as unknown as MonitorOptions);
    // the default series: one entry a second, none yet
    expect(monitor.series()).toEqual([]);
    monitor.close();
  });
});
