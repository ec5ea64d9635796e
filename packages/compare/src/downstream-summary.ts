// The reading side of the probe's `downstream` record: the windows of one round's processes (a
// cluster's workers, a server and its children) merged into one — counters summed, endpoints by
// name, functions by name + checkout-relative file + line, stacks by their merged frames and
// endpoint — and the per-request figures the metrics are made of. Pure: tested on recorded data.
import {
  DOWNSTREAM_LIMITS,
  type DownstreamEndpoint,
  type DownstreamFunction,
  type DownstreamStack,
  type DownstreamWindow,
  OTHER,
} from './downstream-model.js';

/** Keys to rows, bounded: past `limit` rows, everything goes to the one keyed OTHER. */
class Rows<T> {
  readonly rows: T[] = [];
  private readonly index = new Map<string, number>();
  constructor(
    private readonly limit: number,
    private readonly other: () => T,
  ) {}

  /** The row of `key` (made by `make` when new), or OTHER's when the bound is reached. */
  at(key: string, make: () => T): number {
    const known = this.index.get(key);
    if (known !== undefined) return known;
    const full = this.rows.length >= this.limit;
    const otherKnown = full ? this.index.get(OTHER) : undefined;
    if (otherKnown !== undefined) return otherKnown;
    const index = this.rows.length;
    this.rows.push(full ? this.other() : make());
    this.index.set(full ? OTHER : key, index);
    return index;
  }
}

/** Sorts rows by waiting (largest first) and returns the old index → new index map. */
function byWaiting<T extends { waitingMicros: number }>(rows: T[]): { sorted: T[]; renumber: number[] } {
  const order = rows
    .map((_, i) => i)
    .sort((a, b) => (rows[b]?.waitingMicros ?? 0) - (rows[a]?.waitingMicros ?? 0));
  const renumber: number[] = [];
  order.forEach((old, i) => {
    renumber[old] = i;
  });
  return { sorted: order.map((i) => rows[i] as T), renumber };
}

/** The merged rows so far: endpoints by name, functions by name + file + line, stacks by frames + endpoint. */
function emptyRows() {
  return {
    endpoints: new Rows<DownstreamEndpoint>(DOWNSTREAM_LIMITS.endpoints, () => ({
      endpoint: OTHER,
      transport: 'tcp',
      calls: 0,
      waitingMicros: 0,
      connections: 0,
      bytesOut: 0,
      bytesIn: 0,
    })),
    functions: new Rows<DownstreamFunction>(DOWNSTREAM_LIMITS.functions, () => ({
      name: OTHER,
      file: OTHER,
      line: 0,
      column: 0,
      calls: 0,
      waitingMicros: 0,
    })),
    stacks: new Rows<DownstreamStack>(DOWNSTREAM_LIMITS.stacks, () => ({
      frames: [],
      endpoint: 0,
      calls: 0,
      waitingMicros: 0,
    })),
  };
}

/** Adds one window's endpoints, functions (each file as `locate` names it) and stacks to `rows`. */
function addRows(
  rows: ReturnType<typeof emptyRows>,
  window: DownstreamWindow,
  locate: (file: string) => string,
): void {
  const endpointAt = window.endpoints.map((e) => {
    const at = rows.endpoints.at(e.endpoint, () => ({
      ...e,
      calls: 0,
      waitingMicros: 0,
      connections: 0,
      bytesOut: 0,
      bytesIn: 0,
    }));
    const row = rows.endpoints.rows[at] as DownstreamEndpoint;
    row.calls += e.calls;
    row.waitingMicros += e.waitingMicros;
    row.connections += e.connections;
    row.bytesOut += e.bytesOut;
    row.bytesIn += e.bytesIn;
    if (!row.protocol && e.protocol) row.protocol = e.protocol;
    return at;
  });
  const functionAt = window.functions.map((f) => {
    const file = locate(f.file);
    const at = rows.functions.at(`${f.name}\u0000${file}\u0000${f.line}`, () => ({
      ...f,
      file,
      calls: 0,
      waitingMicros: 0,
      resumedCalls: 0,
      resumedMicros: 0,
      outsideCalls: undefined,
    }));
    const row = rows.functions.rows[at] as DownstreamFunction;
    row.calls += f.calls;
    row.waitingMicros += f.waitingMicros;
    row.resumedCalls = (row.resumedCalls ?? 0) + (f.resumedCalls ?? 0);
    row.resumedMicros = (row.resumedMicros ?? 0) + (f.resumedMicros ?? 0);
    if (f.outsideCalls) row.outsideCalls = (row.outsideCalls ?? 0) + f.outsideCalls;
    return at;
  });
  for (const s of window.stacks) {
    const frames = s.frames.map((f) => functionAt[f] ?? 0);
    const endpoint = endpointAt[s.endpoint] ?? 0;
    const at = rows.stacks.at(`${frames.join(',')}>${endpoint}`, () => ({
      frames,
      endpoint,
      calls: 0,
      waitingMicros: 0,
    }));
    const row = rows.stacks.rows[at] as DownstreamStack;
    row.calls += s.calls;
    row.waitingMicros += s.waitingMicros;
  }
}

/**
 * The windows of one round's processes as one: sums, with each function's file as `locate` names
 * it (measure/ makes them checkout-relative when it reads a probe's window). Undefined when no
 * process recorded a window.
 */
export function mergeDownstream(
  windows: readonly (DownstreamWindow | undefined)[],
  locate: (file: string) => string = (file) => file,
): DownstreamWindow | undefined {
  const present = windows.filter((w): w is DownstreamWindow => w !== undefined);
  if (!present.length) return undefined;
  const rows = emptyRows();
  const requestsWithCalls = { withCalls: 0, calls: 0, unionMicros: 0, sumMicros: 0 };
  let requests = 0;
  let processes = 0;
  for (const window of present) {
    requests += window.requests;
    processes += window.processes ?? 1;
    for (const key of ['withCalls', 'calls', 'unionMicros', 'sumMicros'] as const)
      requestsWithCalls[key] += window.requestsWithCalls[key];
    addRows(rows, window, locate);
  }
  const endpoints = byWaiting(rows.endpoints.rows);
  const functions = byWaiting(rows.functions.rows);
  return {
    requests,
    endpoints: endpoints.sorted,
    requestsWithCalls,
    functions: functions.sorted,
    stacks: byWaiting(rows.stacks.rows).sorted.map((s) => ({
      ...s,
      frames: s.frames.map((f) => functions.renumber[f] ?? 0),
      endpoint: endpoints.renumber[s.endpoint] ?? 0,
    })),
    processes,
  };
}

/** One endpoint's figures per incoming request (and per call). */
export interface EndpointPerRequest {
  endpoint: string;
  protocol?: string;
  calls: number;
  /** Waiting µs per request, the sum of its calls' durations. */
  waitingMicros: number;
  /** Waiting µs per call. */
  waitingPerCallMicros: number;
  connections: number;
  bytesOut: number;
  bytesIn: number;
}

/** A window's figures per incoming request: what the metrics compare, base → head. */
export interface DownstreamPerRequest {
  requests: number;
  /** Calls per request, over every endpoint. */
  calls: number;
  /** Per request, the time at least one of its calls was in flight (over all requests, with calls or not), µs. */
  waitingMicros: number;
  /** Per request, the sum of its calls' durations, µs: above waitingMicros when calls overlap. */
  callMicros: number;
  /** waitingMicros / callMicros: 1 when every request's calls run in series, lower when they overlap. */
  seriality?: number;
  /**
   * The share of the calls made in an incoming request's async context (1 without calls): low
   * when a promise library or a pool runs the calls outside it (bluebird under knex < 0.95), or
   * when the process calls out on timers of its own. Below ON_PATH_MIN, waiting per request is
   * not measured: it would count only the few calls it can place.
   */
  onPath: number;
  connections: number;
  endpoints: EndpointPerRequest[];
}

/** The share of a window's calls made in an incoming request's context; 1 without calls. */
export function onPathShare(window: DownstreamWindow): number {
  const calls = window.endpoints.reduce((sum, e) => sum + e.calls, 0);
  return calls > 0 ? Math.min(1, window.requestsWithCalls.calls / calls) : 1;
}

/** Per-request figures of a (merged) window; undefined without requests to divide by. */
export function downstreamPerRequest(window: DownstreamWindow | undefined): DownstreamPerRequest | undefined {
  if (!window || window.requests <= 0) return undefined;
  const n = window.requests;
  const { unionMicros, sumMicros } = window.requestsWithCalls;
  const endpoints = window.endpoints.map((e) => ({
    endpoint: e.endpoint,
    ...(e.protocol ? { protocol: e.protocol } : {}),
    calls: e.calls / n,
    waitingMicros: e.waitingMicros / n,
    waitingPerCallMicros: e.calls ? e.waitingMicros / e.calls : 0,
    connections: e.connections / n,
    bytesOut: e.bytesOut / n,
    bytesIn: e.bytesIn / n,
  }));
  return {
    requests: n,
    calls: window.endpoints.reduce((sum, e) => sum + e.calls, 0) / n,
    waitingMicros: unionMicros / n,
    callMicros: sumMicros / n,
    ...(sumMicros > 0 ? { seriality: unionMicros / sumMicros } : {}),
    onPath: onPathShare(window),
    connections: window.endpoints.reduce((sum, e) => sum + e.connections, 0) / n,
    endpoints,
  };
}

/**
 * One round's record: its processes' windows merged, or undefined unless every process has one (a
 * partial sum would understate the calls). What the round's metrics and its waiting table read.
 */
export function roundDownstream(
  monitors: readonly { downstream?: DownstreamWindow }[],
): DownstreamWindow | undefined {
  if (monitors.length === 0 || !monitors.every((m) => m.downstream)) return undefined;
  return mergeDownstream(monitors.map((m) => m.downstream));
}
