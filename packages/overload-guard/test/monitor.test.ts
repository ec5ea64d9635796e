import { describe, expect, it } from 'vitest';
import { createMonitor } from '../src/index.js';

function burn(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // busy: the event loop cannot turn
  }
}

describe('createMonitor', () => {
  it('sees a blocked event loop as delay and utilisation', async () => {
    const monitor = createMonitor({ resolution: 5 });
    try {
      monitor.snapshot();
      for (let i = 0; i < 5; i++) {
        burn(60);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const busy = monitor.snapshot();
      expect(busy.eventLoopDelay.max).toBeGreaterThan(40);
      expect(busy.eventLoopUtilization).toBeGreaterThan(0.8);

      await new Promise((resolve) => setTimeout(resolve, 200));
      const idle = monitor.snapshot();
      expect(idle.eventLoopDelay.max).toBeLessThan(busy.eventLoopDelay.max);
      expect(idle.eventLoopUtilization).toBeLessThan(0.5);
      expect(idle.rssBytes).toBeGreaterThan(idle.heapUsedBytes);
    } finally {
      monitor.close();
    }
  });

  it('rejects a resolution that is not a positive number of ms', () => {
    expect(() => createMonitor({ resolution: 0 })).toThrow(/resolution must be .* got 0/);
  });
});
