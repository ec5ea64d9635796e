import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { ConcurrencyLimit } from './concurrency-limit.js';
import type { HotpathGuardError } from './errors.js';
import type { OverloadReason, ResolvedGuardOptions } from './guard-options.js';
import { HealthCheckRunner } from './health-check.js';
import { UtilizationWindow } from './utilization-window.js';

/** Loop idle time (ms) between a turn's end and the next turn's start above which the loop slept. */
const SLEEP_MS = 0.5;
/** At most this many requests of a turn share one clock reading. */
const MAX_CLOCK_STRIDE = 32;

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** What the admission controller tells its owner (the guard turns these into events). */
export interface AdmissionListener {
  onOverloaded(reason: OverloadReason): void;
  onRecovered(): void;
  onHealthCheckError(error: HotpathGuardError): void;
}

/**
 * Decides per request, at admission time, from what the loop is doing now:
 *
 * - turn: the time since the first request of the current loop turn was admitted. Requests read
 *   in the same poll phase run one after another; when this exceeds maxEventLoopDelay, the next
 *   request of the batch would already have waited that long, so it is shed — the batch is cut
 *   inside the busy iteration, which an interval-sampled lag cannot do. Marking the end of
 *   every turn costs a setImmediate (and a wake-up of the loop) per turn, a few percent of a
 *   hello-world request; so while turns stay short (under a quarter of maxEventLoopDelay) the
 *   heartbeat closes them instead, and a turn gets its own end marker only once it grows long.
 * - heartbeat: a timer every sampleInterval ms. Its lag, minus the poll-phase work this guard
 *   already bounded, is delay from elsewhere (timers, deferred work, GC); when it exceeds
 *   maxEventLoopDelay on two heartbeats in a row, requests are shed until it no longer does
 *   (one long block — start-up, a GC pause — is not an overload).
 * - sampled limits (utilisation, heap, RSS, health check) refreshed on each heartbeat.
 * - optionally a fixed or adaptive concurrency limit.
 */
export class AdmissionController {
  admitted = 0;
  shed = 0;
  overloaded = false;
  lastReason: OverloadReason | null = null;
  /** Lag of the last heartbeat not explained by bounded poll-phase work, ms. */
  lag = 0;
  /** Raw lag of the last heartbeat, ms. */
  rawLag = 0;
  utilization = 0;
  heapUsedBytes = 0;
  rssBytes = 0;
  closed = false;
  readonly concurrency: ConcurrencyLimit | undefined;

  private readonly maxDelay: number;
  private turnStart = -1;
  /**
   * Since when the requests of the current turn may have been waiting (ms): the turn's start,
   * or the start of the previous turn when that one was long and the loop has not slept since
   * (requests read now may have arrived just after the previous turn read its sockets).
   */
  private turnRef = -1;
  /** CPU time (µs) of the process at turnRef, -1 until read or estimated. */
  private refCpu = -1;
  /** Before this time (ms) the CPU floor is not checked again (it said no). */
  private nextCpuCheck = 0;
  /** Start and CPU time of the last turn closed by its end marker, -1 once used. */
  private lastTurnStart = -1;
  private lastTurnCpu = -1;
  /** Idle time of the loop (ms, ELU) when that turn ended. */
  private idleAtTurnEnd = 0;
  private turnOver = false;
  private admittedInTurn = 0;
  /** When the last request was admitted or shed (ms). */
  private lastAdmitAt = 0;
  /** A setImmediate will end the current turn. */
  private turnEndPending = false;
  /** Short turns are closed by the heartbeat (it runs often enough for that), long ones by a setImmediate. */
  private readonly lazyTurns: boolean;
  private readonly longTurn: number;
  /** Loop time per admitted request (ms, smoothed), from the heartbeat's readings. */
  costMs = 0;
  /**
   * Within a turn, the clock is read on every clockStride-th request: as many requests as take
   * a hundredth of maxEventLoopDelay at costMs each (at most 32; 1 until a cost is known, and
   * 1 for requests that cost more than that). Set by the heartbeat.
   */
  private clockStride = 1;
  private untilClock = 0;
  /** The loop was busy (> 90%) during the last heartbeat interval: the cost predictor is on. */
  private busy = false;
  private lastActive = 0;
  private lastAdmitted = 0;
  private tickWall = 0;
  /** Last reading of the CPU clock (µs) and when it was taken (ms). */
  private tickCpu = 0;
  private cpuWall = 0;
  /** Share of wall time this process got the CPU between the last two readings (0..1). */
  private cpuShare = 1;
  private ticksSinceCpu = 0;
  /** The previous turn was long: read the CPU clock at the start of the next one. */
  private longTurns = false;
  private pollWork = 0;
  private due: number;
  private sampledReason: OverloadReason | null = null;
  private shedSinceTick = false;
  private lagging = false;
  private lastOverloadAt = 0;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly window: UtilizationWindow;
  private readonly health: HealthCheckRunner | undefined;

  constructor(
    private readonly options: ResolvedGuardOptions,
    private readonly listener: AdmissionListener,
  ) {
    this.maxDelay = options.maxEventLoopDelay > 0 ? options.maxEventLoopDelay : Number.POSITIVE_INFINITY;
    this.longTurn = this.maxDelay / 4;
    this.lazyTurns = options.sampleInterval <= this.longTurn;
    this.concurrency = options.concurrency ? new ConcurrencyLimit(options.concurrency) : undefined;
    this.window = new UtilizationWindow(options.utilizationWindow, options.sampleInterval);
    this.due = performance.now() + options.sampleInterval;
    this.tickWall = performance.now();
    this.cpuWall = this.tickWall;
    this.tickCpu = cpuMicros();
    this.lastActive = performance.eventLoopUtilization().active;
    this.heartbeat = setTimeout(this.tick, options.sampleInterval);
    this.heartbeat.unref();
    if (options.healthCheck) {
      this.health = new HealthCheckRunner(
        options.healthCheck,
        options.healthCheckInterval,
        options.healthCheckTimeout,
        (error) => listener.onHealthCheckError(error),
      );
    }
    this.readMemory();
  }

  /**
   * The per-request decision: null admits, a reason sheds. Cheap: a few compares, and a clock
   * read on the first request of a turn and then on every `clockStride`-th (a clock read costs
   * 70-80 ns on some virtual machines, more than the rest of the decision).
   */
  admit(): OverloadReason | null {
    if (this.closed) return null;
    if (this.turnStart >= 0 && !this.turnOver && --this.untilClock > 0) {
      // the turn was fine at the last clock read, and the requests since then together are
      // expected to have taken under a hundredth of maxEventLoopDelay (see clockStride)
      if (this.sampledReason !== null) return this.shedNow(this.sampledReason, performance.now());
      if (this.concurrency !== undefined && !this.concurrency.tryAcquire()) {
        return this.shedNow('concurrency', performance.now());
      }
      this.admitted++;
      this.admittedInTurn++;
      return null;
    }
    this.untilClock = this.clockStride;
    const now = performance.now();
    this.lastAdmitAt = now;
    if (this.turnOver) return this.shedNow('eventLoopDelay', now);
    let predicted = 0;
    if (this.turnStart < 0) this.startTurn(now);
    else {
      predicted = this.busy ? this.admittedInTurn * this.costMs : 0;
      if (!this.turnEndPending && (now - this.turnStart > this.longTurn || predicted > this.longTurn)) {
        this.scheduleTurnEnd();
      }
    }
    // The first request of a fresh turn has not waited: it always runs (whatever it costs).
    // Any other is admitted only if it can be done within maxEventLoopDelay of the time it may
    // have arrived: its wait so far, the work this turn already queued, and its own cost.
    if (this.turnRef !== now || predicted > 0) {
      const own = this.busy ? this.ownCost : 0;
      if (
        (now - this.turnRef + own > this.maxDelay && this.usedCpuSinceRef(now)) ||
        predicted + own > this.maxDelay
      ) {
        this.turnOver = true;
        // a fresh turn must start with the next loop iteration, not when the heartbeat comes
        if (!this.turnEndPending) this.scheduleTurnEnd();
        return this.shedNow('eventLoopDelay', now);
      }
    }
    if (this.sampledReason !== null) return this.shedNow(this.sampledReason, now);
    if (this.concurrency !== undefined && !this.concurrency.tryAcquire()) {
      return this.shedNow('concurrency', now);
    }
    this.admitted++;
    this.admittedInTurn++;
    return null;
  }

  /** A request's own expected loop time (ms): the smoothed cost, at most half the budget. */
  private get ownCost(): number {
    return Math.min(this.costMs, this.maxDelay / 2);
  }

  private startTurn(now: number): void {
    this.turnStart = now;
    this.turnOver = false;
    this.admittedInTurn = 0;
    this.turnRef = now;
    this.refCpu = this.longTurns && this.overloaded ? cpuMicros() : -1;
    if (this.lastTurnStart >= 0) {
      // the previous turn was long and ended in the check phase; unless the loop slept since,
      // the sockets read now became readable while it ran
      if (performance.eventLoopUtilization().idle - this.idleAtTurnEnd < SLEEP_MS) {
        this.turnRef = this.lastTurnStart;
        this.refCpu = this.lastTurnCpu;
      }
      this.lastTurnStart = -1;
    }
    this.nextCpuCheck = 0;
    if (!this.lazyTurns) this.scheduleTurnEnd();
  }

  /** Stops timers; afterwards every request is admitted. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.heartbeat);
    this.health?.close();
  }

  private shedNow(reason: OverloadReason, now: number): OverloadReason {
    this.shed++;
    this.shedSinceTick = true;
    this.lastReason = reason;
    this.lastOverloadAt = now;
    this.concurrency?.onShed();
    if (!this.overloaded) {
      this.overloaded = true;
      this.listener.onOverloaded(reason);
    }
    return reason;
  }

  /**
   * True when this process really worked through at least half of maxEventLoopDelay of CPU
   * since turnRef. When the machine is contended, wall time also passes while the process is
   * descheduled; without this floor a turn would admit ever fewer requests and spend a growing
   * share of its CPU answering 503s, and a healthy server that was merely descheduled for a
   * moment would shed. The CPU clock (a getrusage call, slow on some virtual machines) is read
   * here at most once a millisecond, at the start of turns that follow a long turn while
   * overloaded, and on heartbeats while overloaded or lagging (otherwise on every tenth), never
   * per request.
   */
  private usedCpuSinceRef(now: number): boolean {
    if (now < this.nextCpuCheck) return false;
    if (this.refCpu < 0) {
      // no reading at turnRef: take the last one, and count all time between it and turnRef
      // as CPU (so the estimate of the CPU used since turnRef is a floor)
      this.refCpu = this.tickCpu + Math.max(0, this.turnRef - this.cpuWall) * 1000;
    }
    if ((cpuMicros() - this.refCpu) / 1000 > this.maxDelay / 2) return true;
    this.nextCpuCheck = now + 1;
    return false;
  }

  private scheduleTurnEnd(): void {
    this.turnEndPending = true;
    setImmediate(this.endTurn);
  }

  private readonly endTurn = (): void => {
    this.turnEndPending = false;
    if (this.turnStart < 0) return;
    this.lastTurnStart = this.turnStart;
    this.lastTurnCpu = this.turnRef === this.turnStart ? this.refCpu : -1;
    this.idleAtTurnEnd = performance.eventLoopUtilization().idle;
    this.finishTurn(performance.now());
  };

  private finishTurn(end: number): void {
    const turn = end - this.turnStart;
    this.longTurns = turn > this.longTurn;
    // work this turn admitted but deferred to later phases counts as bounded too
    const predicted = this.busy ? this.admittedInTurn * this.costMs : 0;
    this.pollWork += Math.max(turn, predicted);
    this.turnStart = -1;
    this.turnOver = false;
  }

  private readonly tick = (): void => {
    if (this.closed) return;
    // a short turn (or run of short turns) still open ended with its last request
    if (this.turnStart >= 0 && !this.turnEndPending) this.finishTurn(this.lastAdmitAt);
    const now = performance.now();
    const options = this.options;
    this.rawLag = now > this.due ? now - this.due : 0;
    // lag the admission turns already bounded is not held against the next turn
    this.lag = this.rawLag > this.pollWork ? this.rawLag - this.pollWork : 0;
    this.pollWork = 0;
    this.due = now + options.sampleInterval;
    const elapsed = now - this.tickWall;
    this.tickWall = now;
    // the CPU clock on every heartbeat only under pressure, otherwise on every tenth
    if (++this.ticksSinceCpu >= 10 || this.overloaded || this.rawLag > this.longTurn) {
      const cpu = cpuMicros();
      const span = now - this.cpuWall;
      if (span > 0) this.cpuShare = Math.min(1, (cpu - this.tickCpu) / 1000 / span);
      this.tickCpu = cpu;
      this.cpuWall = now;
      this.ticksSinceCpu = 0;
    }
    this.heartbeat.refresh();
    this.updateCost(elapsed);
    const stride = this.costMs > 0 ? Math.floor(this.maxDelay / 100 / this.costMs) : 1;
    this.clockStride = Math.max(1, Math.min(MAX_CLOCK_STRIDE, stride));

    let reason: OverloadReason | null = null;
    const lagging = this.lag > this.maxDelay;
    if (lagging && this.lagging) reason = 'eventLoopDelay';
    this.lagging = lagging;
    this.window.record(now);
    this.utilization = this.window.utilization(now);
    if (
      reason === null &&
      options.maxEventLoopUtilization > 0 &&
      this.utilization > options.maxEventLoopUtilization
    ) {
      reason = 'eventLoopUtilization';
    }
    if (options.maxHeapUsedBytes > 0 || options.maxRssBytes > 0) {
      this.readMemory();
      if (reason === null && options.maxHeapUsedBytes > 0 && this.heapUsedBytes > options.maxHeapUsedBytes) {
        reason = 'heapUsedBytes';
      }
      if (reason === null && options.maxRssBytes > 0 && this.rssBytes > options.maxRssBytes)
        reason = 'rssBytes';
    }
    if (reason === null && !this.healthy) reason = 'healthCheck';
    this.sampledReason = reason;

    if (reason !== null) {
      this.lastReason = reason;
      this.lastOverloadAt = now;
      if (!this.overloaded) {
        this.overloaded = true;
        this.listener.onOverloaded(reason);
      }
    } else if (this.overloaded && !this.shedSinceTick && now - this.lastOverloadAt >= options.recoveryTime) {
      this.overloaded = false;
      this.listener.onRecovered();
    }
    this.shedSinceTick = false;
  };

  /**
   * Loop time per admitted request over the last heartbeat interval (the process's CPU time,
   * kept between half and all of the active loop time, divided by admissions; smoothed). Lets the turn rule see work a handler defers to later phases
   * (setImmediate, promises resolved later): a turn that admitted n requests has queued about
   * n x cost of work even if it ran quickly itself. Only used while the loop is > 90% busy, so
   * background work on an idle server cannot inflate it into shedding.
   */
  private updateCost(elapsed: number): void {
    const active = performance.eventLoopUtilization().active;
    const admitted = this.admitted;
    const activeDelta = active - this.lastActive;
    const admittedDelta = admitted - this.lastAdmitted;
    this.lastActive = active;
    this.lastAdmitted = admitted;
    this.busy = elapsed > 0 && activeDelta > 0.9 * elapsed;
    if (admittedDelta > 0) {
      // CPU time rather than loop wall time, so a process descheduled by a busy machine does
      // not look much more expensive per request than it is — but at least half the wall time,
      // the same compromise as the turn rule's CPU floor
      const cpuElapsed = elapsed * this.cpuShare;
      const sample = Math.max(Math.min(activeDelta, cpuElapsed), activeDelta / 2) / admittedDelta;
      // rise at once (a cost underestimated lets a whole batch in), decay smoothly
      this.costMs = sample > this.costMs ? sample : this.costMs * 0.7 + sample * 0.3;
    }
  }

  /** Result of the latest health check (true when none is configured). */
  get healthy(): boolean {
    return this.health === undefined || this.health.healthy;
  }

  /** Reads heap (and RSS when limited) into the public fields. */
  readMemory(): void {
    this.heapUsedBytes = getHeapStatistics().used_heap_size;
    this.rssBytes = process.memoryUsage.rss();
  }
}
