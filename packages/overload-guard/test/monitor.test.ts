import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMonitor } from '../src/index.js';

function burn(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // busy: the event loop cannot turn
  }
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createMonitor', () => {
  it('sees a blocked event loop as delay and utilisation', async () => {
    const monitor = createMonitor({ resolution: 5 });
    try {
      monitor.snapshot();
      for (let i = 0; i < 5; i++) {
        burn(60);
        await turn();
      }
      const busy = monitor.snapshot();
      expect(busy.eventLoopDelay.max).toBeGreaterThan(40);
      expect(busy.eventLoopDelay.count).toBeGreaterThan(0);
      expect(busy.eventLoopDelay.p90).toBeLessThanOrEqual(busy.eventLoopDelay.max);
      expect(busy.eventLoopUtilization).toBeGreaterThan(0.8);

      await sleep(200);
      const idle = monitor.snapshot();
      expect(idle.eventLoopDelay.max).toBeLessThan(busy.eventLoopDelay.max);
      expect(idle.eventLoopUtilization).toBeLessThan(0.5);
      expect(idle.rssBytes).toBeGreaterThan(idle.heapUsedBytes);
      expect(idle.heapTotalBytes).toBeGreaterThanOrEqual(idle.heapUsedBytes);
      expect(idle.windowMs).toBeGreaterThanOrEqual(150);
    } finally {
      monitor.close();
    }
  });

  it('keeps a per-interval series whose utilisation follows the load, bounded by seriesLength', async () => {
    const monitor = createMonitor({ sampleInterval: 50, seriesLength: 4, utilizationWindow: 200 });
    try {
      const end = Date.now() + 400;
      while (Date.now() < end) {
        burn(20);
        await turn();
      }
      const busy = monitor.series();
      expect(busy.length).toBeGreaterThan(0);
      expect(busy.length).toBeLessThanOrEqual(4);
      expect(busy.at(-1)!.eventLoopUtilization).toBeGreaterThan(0.6);
      expect(monitor.snapshot().eventLoopUtilizationWindow).toBeGreaterThan(0.6);

      await sleep(500);
      const idle = monitor.series();
      expect(idle).toHaveLength(4);
      expect(idle.at(-1)!.eventLoopUtilization).toBeLessThan(0.5);
      expect(idle.at(-1)!.timestamp).toBeGreaterThan(idle[0]!.timestamp);
      // the sliding window forgot the busy phase, unlike a since-start reading
      expect(monitor.snapshot().eventLoopUtilizationWindow).toBeLessThan(0.5);
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
    try {
      createMonitor({ utilizationWindow: 'x' as unknown as number });
    } catch (error) {
      expect((error as { code: string }).code).toBe('HP_GUARD_INVALID_OPTION');
    }
  });
});
