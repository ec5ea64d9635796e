import type { ConcurrencyOptions } from './guard-options.js';

type Policy = Required<ConcurrencyOptions>;

/**
 * A limit on requests in flight. 'fixed' keeps its limit; 'aimd' adds one per limit's worth of
 * fast completions and multiplies by `backoffRatio` on a slow one or a shed; 'gradient' compares
 * a short-term latency average with a long-term one and shrinks the limit when recent latency
 * grows (queueing), otherwise lets it grow by about the square root of the limit.
 */
export class ConcurrencyLimit {
  limit: number;
  inFlight = 0;
  private readonly policy: Policy;
  private shortRtt = 0;
  private longRtt = 0;
  private samples = 0;

  constructor(policy: Policy) {
    this.policy = policy;
    this.limit = policy.initialLimit;
  }

  /** True when one more request fits; the caller must then call `release` when it ends. */
  tryAcquire(): boolean {
    if (this.inFlight >= Math.floor(this.limit)) return false;
    this.inFlight++;
    return true;
  }

  /** A request admitted by tryAcquire ended after `latency` ms. */
  release(latency: number): void {
    const inFlight = this.inFlight;
    this.inFlight = inFlight > 0 ? inFlight - 1 : 0;
    const p = this.policy;
    if (p.policy === 'aimd') {
      if (latency > p.latencyThreshold) this.setLimit(this.limit * p.backoffRatio);
      else if (inFlight * 2 >= this.limit) this.setLimit(this.limit + 1 / this.limit);
    } else if (p.policy === 'gradient') {
      this.samples++;
      this.shortRtt = this.samples === 1 ? latency : this.shortRtt * 0.9 + latency * 0.1;
      this.longRtt = this.samples === 1 ? latency : this.longRtt * 0.995 + latency * 0.005;
      // recent latency at most 2x the long-term average counts as no queueing
      const gradient = Math.max(0.5, Math.min(1, (2 * this.longRtt) / Math.max(this.shortRtt, 1e-3)));
      const target = this.limit * gradient + Math.sqrt(this.limit);
      this.setLimit(this.limit * 0.9 + target * 0.1);
      // after a long overload ends, let the inflated long-term average come back down faster
      if (this.longRtt > this.shortRtt * 2) this.longRtt *= 0.95;
    }
  }

  /** A request was shed by another limit: aimd backs off. */
  onShed(): void {
    if (this.policy.policy === 'aimd') this.setLimit(this.limit * this.policy.backoffRatio);
  }

  private setLimit(value: number): void {
    this.limit = Math.min(this.policy.maxLimit, Math.max(this.policy.minLimit, value));
  }
}
