import { type EventLoopUtilization, performance } from 'node:perf_hooks';

/**
 * Event-loop utilisation over a sliding window: a ring of cumulative readings taken at each
 * sample tick; the utilisation is the difference between now and the oldest reading still
 * inside the window (not since process start).
 */
export class UtilizationWindow {
  private readonly readings: EventLoopUtilization[];
  private readonly times: Float64Array;
  private next = 0;
  private filled = 0;

  constructor(
    private readonly windowMs: number,
    sampleIntervalMs: number,
  ) {
    const size = Math.max(2, Math.ceil(windowMs / Math.max(1, sampleIntervalMs)) + 1);
    this.readings = new Array(size);
    this.times = new Float64Array(size);
    this.record(performance.now());
  }

  /** Stores a cumulative reading; call once per sample tick. */
  record(now: number): void {
    this.readings[this.next] = performance.eventLoopUtilization();
    this.times[this.next] = now;
    this.next = (this.next + 1) % this.readings.length;
    if (this.filled < this.readings.length) this.filled++;
  }

  /** Utilisation (0..1) from the oldest reading inside the window until now. */
  utilization(now: number): number {
    const size = this.readings.length;
    let oldest = (this.next - this.filled + size) % size;
    // skip readings older than the window, but keep at least the newest one
    for (let i = 0; i < this.filled - 1 && now - (this.times[oldest] ?? now) > this.windowMs; i++) {
      oldest = (oldest + 1) % size;
    }
    return performance.eventLoopUtilization(performance.eventLoopUtilization(), this.readings[oldest])
      .utilization;
  }
}
