// The code that waits (bundled into probe.cjs with probe-downstream.ts): for a call, the user's
// frames on the stack — outside node_modules, `node:` and Node's internals, async frames included —
// interned as functions (by file and position) and stacks (frames + endpoint), bounded, with each
// window's calls and waiting per function that issued them and per stack (a waiting flame graph).
import { DOWNSTREAM_LIMITS, OTHER } from '../downstream-limits.js';
import type { DownstreamFunction, DownstreamStack } from '../downstream-model.js';
import type { Endpoint, StackGroup } from './probe-downstream-endpoints.js';

/** Frames V8 records where a call starts: enough to get past a driver's own (pg: about 12). */
const STACK_LIMIT = 32;

/**
 * The least time between two stacks taken (ms), on average. Each stack stands for the calls to its
 * endpoint since the one before (a StackGroup), each with its own waiting.
 */
export const STACK_INTERVAL_MS = 2;

/**
 * The share of the main thread's time the stacks may take: after a stack that took d ms, the next
 * comes some d / STACK_BUDGET later (at least STACK_INTERVAL_MS). A stack costs 10–50 µs of CPU
 * (more than a call's own client work): one per 2 ms was 2–2.5 % of a core, and on a route with
 * one call at 2 000 req/s (Node 24) CPU per request read 4.4 % [0.6, 8.1] lower without them. At
 * 0.3 %, a 40 µs stack is followed by 13 ms without one: some 75 stacks a second.
 *
 * Which call gets the stack is drawn by count, not by the clock: after each stack, the number of
 * calls to the next is a geometric draw whose mean is the calls that come in that time at the
 * call rate, smoothed over the last stacks. A clock alone picks the first call after each interval: the call
 * after the longest pause, and, on a route whose requests repeat at about the interval, the same
 * call of each request (a route awaiting three queries in series read 0.36–0.64 of its calls made
 * by the function that resumed to make two of three, 2026-12-07). Drawn by count, every call is
 * as likely as any other to be sampled, and each stack stands for the calls since the last.
 */
export const STACK_BUDGET = 0.003;

/** The weight of the newest reading in a smoothed one (the call rate, a stack's cost). */
const SMOOTHING = 0.2;

/** `previous` moved toward `sample` by SMOOTHING; the sample itself when there is none yet. */
const smoothed = (previous: number, sample: number): number =>
  previous > 0 ? previous + SMOOTHING * (sample - previous) : sample;

/**
 * The most one stack's time counts for (ms). A stack's time is read off the clock: one taken while
 * the process waited for its CPU (a database or the load generator on the same core) read
 * milliseconds, and alone it set the interval to the next stack at d / STACK_BUDGET — a second
 * and more, a window's calls standing with one or two stacks.
 */
export const STACK_COST_CAP_MS = 0.5;

/**
 * The smoothed cost of a stack after one that took `took` ms (each capped at STACK_COST_CAP_MS),
 * and the interval it sets to the next: at least STACK_INTERVAL_MS, cost / STACK_BUDGET.
 */
export function stackInterval(cost: number, took: number): { cost: number; interval: number } {
  const next = smoothed(cost, Math.min(Math.max(0, took), STACK_COST_CAP_MS));
  return { cost: next, interval: Math.max(STACK_INTERVAL_MS, next / STACK_BUDGET) };
}

/** Calls to the next stack: geometric with mean `mean` (at least 1). */
export function callsToNextStack(mean: number, random = Math.random()): number {
  if (!(mean > 1)) return 1;
  return 1 + Math.floor(Math.log(1 - random) / Math.log(1 - 1 / mean));
}

const ANONYMOUS = '(anonymous)';

/** A frame of the user's code, as the stack gives it. */
interface CallSiteLike {
  getFileName(): string | undefined | null;
  getFunctionName(): string | null;
  getMethodName(): string | null;
  getTypeName(): string | null;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
  getEnclosingLineNumber?(): number | null;
  getEnclosingColumnNumber?(): number | null;
  /** An async frame: a function awaiting the one above it (below every synchronous frame). */
  isAsync?(): boolean;
}

/** A call's user frames, and the function among them that resumed from an await to make it. */
export interface UserFrames {
  /** Function indices, outermost first. */
  frames: number[];
  /**
   * The outermost user frame of the call's synchronous stack (-1: none): after an `await`, the
   * function that resumed and made the call — in `for (…) await ask(id)` the loop's function, not
   * `ask`. A request's first call, made before any await, names the function the request started
   * in (its handler).
   */
  resumed: number;
}

function rawCallSites(_error: Error, sites: CallSiteLike[]): CallSiteLike[] {
  return sites;
}

/** The functions and stacks of the calls' user code, and the open window's figures for them. */
export class WaitingCode {
  /** Functions by file, then by position (line × 2^20 + column). */
  private readonly functionIndex = new Map<string, Map<number, number>>();
  private readonly functions: { name: string; file: string; line: number; column: number }[] = [];
  private fnCalls: number[] = [];
  private fnWaiting: number[] = [];
  private resumedCalls: number[] = [];
  private resumedWaiting: number[] = [];
  /** By function: of its calls, those made outside any request. */
  private fnOutside: number[] = [];
  /** Stacks by a hash of their frames and endpoint; each hash's stacks listed. */
  private readonly stackIndex = new Map<number, number[]>();
  private readonly stacks: { frames: number[]; endpoint: Endpoint }[] = [];
  private stackCalls: number[] = [];
  private stackWaiting: number[] = [];

  constructor(
    private readonly probeFile: string,
    private readonly otherEndpoint: Endpoint,
  ) {}

  /** A new window: no calls yet, the next call's stack is due. */
  reset(): void {
    this.fnCalls = [];
    this.fnWaiting = [];
    this.resumedCalls = [];
    this.resumedWaiting = [];
    this.fnOutside = [];
    this.stackCalls = [];
    this.stackWaiting = [];
    this.countdown = 0;
    this.callsSinceStack = 0;
    this.lastStackAt = Number.NEGATIVE_INFINITY;
    this.callRate = 0;
  }

  /**
   * Calls that ended in the window, `calls` of them waiting `micros` in all, for the function that
   * issued them (by the stack that stands for them), the function that resumed to make them, and
   * that stack; `outside` of them were made outside any request.
   */
  add(fn: number, resumed: number, stack: number, calls: number, micros: number, outside = 0): void {
    if (fn >= 0) {
      this.fnCalls[fn] = (this.fnCalls[fn] ?? 0) + calls;
      this.fnWaiting[fn] = (this.fnWaiting[fn] ?? 0) + micros;
      if (outside > 0) this.fnOutside[fn] = (this.fnOutside[fn] ?? 0) + outside;
    }
    if (resumed >= 0) {
      this.resumedCalls[resumed] = (this.resumedCalls[resumed] ?? 0) + calls;
      this.resumedWaiting[resumed] = (this.resumedWaiting[resumed] ?? 0) + micros;
    }
    this.stackCalls[stack] = (this.stackCalls[stack] ?? 0) + calls;
    this.stackWaiting[stack] = (this.stackWaiting[stack] ?? 0) + micros;
  }

  /** The calls `held` ended before a stack stood for them, given to `stacked`'s function and stack. */
  addHeld(stacked: StackGroup, held: StackGroup): void {
    if (held.heldCalls > 0)
      this.add(stacked.fn, stacked.resumed, stacked.stack, held.heldCalls, held.heldMicros, held.heldOutside);
  }

  /** The window's functions (by waiting, largest first) and stacks, their endpoints numbered by `endpointAt`. */
  rows(endpointAt: Map<Endpoint, number>): { functions: DownstreamFunction[]; stacks: DownstreamStack[] } {
    const used = new Set<number>();
    const stackRows: { frames: number[]; endpoint: Endpoint; calls: number; waiting: number }[] = [];
    this.stackCalls.forEach((calls, index) => {
      if (!calls) return;
      const stack = this.stacks[index] as { frames: number[]; endpoint: Endpoint };
      for (const frame of stack.frames) used.add(frame);
      stackRows.push({ ...stack, calls, waiting: this.stackWaiting[index] ?? 0 });
    });
    const order = [...used].sort((a, b) => (this.fnWaiting[b] ?? 0) - (this.fnWaiting[a] ?? 0));
    const renumber = new Map(order.map((fn, i) => [fn, i]));
    const functions: DownstreamFunction[] = order.map((fn) => ({
      ...(this.functions[fn] as { name: string; file: string; line: number; column: number }),
      calls: this.fnCalls[fn] ?? 0,
      waitingMicros: Math.round(this.fnWaiting[fn] ?? 0),
      resumedCalls: this.resumedCalls[fn] ?? 0,
      resumedMicros: Math.round(this.resumedWaiting[fn] ?? 0),
      ...(this.fnOutside[fn] ? { outsideCalls: this.fnOutside[fn] } : {}),
    }));
    const stacks: DownstreamStack[] = stackRows
      .sort((a, b) => b.waiting - a.waiting)
      .map((row) => ({
        frames: row.frames.map((fn) => renumber.get(fn) as number),
        endpoint: endpointAt.get(row.endpoint) ?? 0,
        calls: row.calls,
        waitingMicros: Math.round(row.waiting),
      }));
    return { functions, stacks };
  }

  /** Calls to go before the next stack is taken (see STACK_BUDGET); 0: the next call's. */
  private countdown = 0;
  /** Calls started since the last stack, and when it was taken (performance.now(), ms). */
  private callsSinceStack = 0;
  private lastStackAt = Number.NEGATIVE_INFINITY;
  /**
   * Calls per ms, smoothed over the last stacks: the rate since one stack alone depends on the
   * call it fell on (after a long pause or a short one), and so would the next draw.
   */
  private callRate = 0;
  /** A stack's cost (ms), smoothed over the process's stacks (see stackInterval). */
  private stackCost = 0;

  /** Whether the call being made now gets a stack (see STACK_BUDGET); userFrames, which takes it, draws the next. */
  stackDue(): boolean {
    return this.countdown <= 0;
  }

  /** A call started in the window (after its stack, if it got one). */
  callStarted(): void {
    this.countdown--;
    this.callsSinceStack++;
  }

  /** The user's frames on the stack now; the calls to the next stack are drawn from what this one cost (STACK_BUDGET). */
  userFrames(below: (...args: never[]) => unknown): UserFrames {
    const started = performance.now();
    const frames = this.framesBelow(below);
    const took = performance.now() - started;
    const { cost, interval } = stackInterval(this.stackCost, took);
    this.stackCost = cost;
    const elapsed = started - this.lastStackAt;
    if (elapsed > 0 && Number.isFinite(elapsed))
      this.callRate = smoothed(this.callRate, this.callsSinceStack / elapsed);
    this.countdown = callsToNextStack(this.callRate * interval);
    this.callsSinceStack = 0;
    this.lastStackAt = started;
    return frames;
  }

  private framesBelow(below: (...args: never[]) => unknown): UserFrames {
    const prepare = Error.prepareStackTrace;
    const limit = Error.stackTraceLimit;
    let sites: CallSiteLike[] | undefined;
    try {
      Error.prepareStackTrace = rawCallSites as typeof Error.prepareStackTrace;
      Error.stackTraceLimit = STACK_LIMIT;
      const holder: { stack?: unknown } = {};
      Error.captureStackTrace(holder, below);
      sites = holder.stack as CallSiteLike[] | undefined;
    } catch {
      sites = undefined;
    } finally {
      Error.prepareStackTrace = prepare;
      Error.stackTraceLimit = limit;
    }
    const frames: number[] = [];
    let resumed = -1;
    if (!Array.isArray(sites)) return { frames, resumed };
    // innermost first on the stack, the async frames after every synchronous one; the record
    // keeps them outermost first, so the first synchronous user frame met is the outermost one
    for (let i = sites.length - 1; i >= 0 && frames.length < DOWNSTREAM_LIMITS.frames; i--) {
      const site = sites[i] as CallSiteLike;
      const file = site.getFileName();
      if (!file || !this.isUserFile(file)) continue;
      const fn = this.functionOf(site, file);
      frames.push(fn);
      if (resumed < 0 && !site.isAsync?.()) resumed = fn;
    }
    return { frames, resumed };
  }

  /** The function that issued a call: the innermost named user frame (else the innermost). */
  issuing(frames: number[]): number {
    for (let i = frames.length - 1; i >= 0; i--) {
      const fn = frames[i] as number;
      if (this.functions[fn]?.name !== ANONYMOUS) return fn;
    }
    return frames.length ? (frames[frames.length - 1] as number) : -1;
  }

  private isUserFile(file: string): boolean {
    if (file.startsWith('node:') || file.startsWith('internal/') || file === this.probeFile) return false;
    return !file.includes('/node_modules/') && !file.includes('\\node_modules\\');
  }

  private functionOf(site: CallSiteLike, file: string): number {
    const line = site.getEnclosingLineNumber?.() ?? site.getLineNumber() ?? 0;
    const column = site.getEnclosingColumnNumber?.() ?? site.getColumnNumber() ?? 0;
    let byPosition = this.functionIndex.get(file);
    const position = line * 1_048_576 + column;
    const known = byPosition?.get(position);
    if (known !== undefined) return known;
    if (this.functions.length >= DOWNSTREAM_LIMITS.functions) return this.otherFunction();
    if (!byPosition) {
      byPosition = new Map();
      this.functionIndex.set(file, byPosition);
    }
    const type = site.getTypeName();
    const name =
      site.getFunctionName() ?? (site.getMethodName() ? `${type ?? ''}.${site.getMethodName()}` : null);
    const index = this.functions.length;
    this.functions.push({
      name: (name || ANONYMOUS).slice(0, DOWNSTREAM_LIMITS.text),
      file: file.slice(0, DOWNSTREAM_LIMITS.text),
      line,
      column,
    });
    byPosition.set(position, index);
    return index;
  }

  private otherFunction(): number {
    const key = this.functionIndex.get(OTHER)?.get(0);
    if (key !== undefined) return key;
    const index = this.functions.length;
    this.functions.push({ name: OTHER, file: OTHER, line: 0, column: 0 });
    this.functionIndex.set(OTHER, new Map([[0, index]]));
    return index;
  }

  stackOf(frames: number[], endpoint: Endpoint): number {
    let hash = endpoint.key.length;
    for (const frame of frames) hash = (Math.imul(hash, 31) + frame + 1) | 0;
    const candidates = this.stackIndex.get(hash);
    if (candidates) {
      for (const index of candidates) {
        const stack = this.stacks[index] as { frames: number[]; endpoint: Endpoint };
        if (stack.endpoint === endpoint && sameFrames(stack.frames, frames)) return index;
      }
    }
    if (this.stacks.length >= DOWNSTREAM_LIMITS.stacks) return this.otherStack();
    const index = this.stacks.length;
    this.stacks.push({ frames, endpoint });
    if (candidates) candidates.push(index);
    else this.stackIndex.set(hash, [index]);
    return index;
  }

  private otherStack(): number {
    const candidates = this.stackIndex.get(-1);
    if (candidates?.[0] !== undefined) return candidates[0];
    const index = this.stacks.length;
    this.stacks.push({ frames: [this.otherFunction()], endpoint: this.otherEndpoint });
    this.stackIndex.set(-1, [index]);
    return index;
  }
}

function sameFrames(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
