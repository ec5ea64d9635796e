import { describeValue, GUARD_ERROR_CODES, HotpathGuardError } from './errors.js';

/** The user's check: true is healthy; false, a throw, a rejection or anything else is not. */
export type HealthCheck = () => boolean | Promise<boolean>;

/**
 * Runs the custom health check every `interval` ms, one check at a time, and keeps the result of
 * the latest one in `healthy`.
 *
 * A check is in flight from its call until it settles or `timeout` ms pass, whichever comes first
 * (`timeout` <= `interval`, so a check is always over by the time the next one is due). A check
 * that times out counts as unhealthy and is abandoned: its late answer is ignored, and the next
 * check is called on the next interval as usual. So a check that hangs, throws or answers false
 * makes the guard shed for that interval only; the first check that answers true ends it.
 */
export class HealthCheckRunner {
  healthy = true;
  private closed = false;
  /** Number of the check in flight, 0 when none is. */
  private inFlight = 0;
  private lastId = 0;
  private readonly interval: NodeJS.Timeout;
  private timeout: NodeJS.Timeout | undefined;

  constructor(
    private readonly check: HealthCheck,
    intervalMs: number,
    private readonly timeoutMs: number,
    private readonly onError: (error: HotpathGuardError) => void,
  ) {
    this.interval = setInterval(this.run, intervalMs);
    this.interval.unref();
    this.run();
  }

  /** Stops both timers; a check still in flight is ignored when it settles. Idempotent. */
  close(): void {
    this.closed = true;
    this.inFlight = 0;
    clearInterval(this.interval);
    clearTimeout(this.timeout);
  }

  private readonly run = (): void => {
    if (this.closed) return;
    // the timer of the previous check is due at the same moment as this one; whichever of the
    // two runs first ends that check
    if (this.inFlight !== 0) this.timedOut();
    clearTimeout(this.timeout);
    const id = ++this.lastId;
    this.inFlight = id;
    // one timer per check (once per interval, not per request)
    this.timeout = setTimeout(this.timedOut, this.timeoutMs);
    this.timeout.unref();
    let result: unknown;
    try {
      result = this.check();
    } catch (error) {
      this.settle(id, false, error);
      return;
    }
    if (typeof result === 'boolean') this.settle(id, result, undefined);
    else if (result !== null && typeof (result as PromiseLike<unknown>)?.then === 'function') {
      (result as PromiseLike<unknown>).then(
        (value) => {
          if (typeof value === 'boolean') this.settle(id, value, undefined);
          else this.settle(id, false, notBoolean(value));
        },
        (error: unknown) => this.settle(id, false, error),
      );
    } else this.settle(id, false, notBoolean(result));
  };

  private settle(id: number, healthy: boolean, error: unknown): void {
    if (id !== this.inFlight) return; // timed out, or the guard was closed
    this.inFlight = 0;
    clearTimeout(this.timeout);
    this.healthy = healthy;
    if (error !== undefined) {
      this.onError(
        new HotpathGuardError(
          'HP_GUARD_HEALTH_CHECK_FAILED',
          `${GUARD_ERROR_CODES.HP_GUARD_HEALTH_CHECK_FAILED}: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        ),
      );
    }
  }

  private readonly timedOut = (): void => {
    if (this.inFlight === 0 || this.closed) return;
    this.inFlight = 0;
    this.healthy = false;
    this.onError(
      new HotpathGuardError(
        'HP_GUARD_HEALTH_CHECK_TIMEOUT',
        `healthCheck did not settle within healthCheckTimeout (${this.timeoutMs} ms); counted as unhealthy until the next check`,
      ),
    );
  };
}

function notBoolean(value: unknown): Error {
  return new TypeError(`healthCheck answered ${describeValue(value)}: expected true or false`);
}
