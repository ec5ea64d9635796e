// What a server waited for in one measured window: the probe's `downstream` field of
// `<pid>-<window>.monitor.json` (see measure/probe-downstream.ts), and the merge of a round's
// processes (downstream-summary.ts). One zod schema; the types are inferred from it.
// Results files are untrusted: every array and text is bounded.
import { z } from 'zod';

import { DOWNSTREAM_LIMITS } from './downstream-limits.js';

export { DOWNSTREAM_LIMITS, OTHER } from './downstream-limits.js';

/** The protocols the probe recognises, by port and by the first bytes a connection exchanges. */
export const DownstreamProtocolSchema = z.enum(['http', 'https', 'postgres', 'redis', 'memcache', 'mysql']);

const text = z.string().max(DOWNSTREAM_LIMITS.text);
const count = z.number().int().nonnegative();
const micros = z.number().nonnegative();

/** One endpoint's exchanges in the window. */
export const DownstreamEndpointSchema = z.object({
  /** `host:port` as the client asked for it (`[::1]:6379`), or a Unix socket's path. */
  endpoint: text,
  transport: z.enum(['tcp', 'unix']),
  /** Absent where neither the port nor the first bytes told it. */
  protocol: DownstreamProtocolSchema.optional(),
  /** Exchanges that ended in the window: writes, then the data that answered them (one call). */
  calls: count,
  /** The sum of the calls' durations, from the first write to the last data of the answer, µs. */
  waitingMicros: micros,
  /** Connections opened in the window. */
  connections: count,
  bytesOut: count,
  bytesIn: count,
});

/**
 * A function of the user's code on the stacks that issued calls: `calls` and `waitingMicros`
 * count the calls it issued itself (it was the first user frame: outside node_modules, `node:`
 * and Node's internals). Estimates: the probe takes a call's stack at most once per 2 ms, held to
 * 0.3 % of the main thread, and each stack taken stands for the calls to its endpoint since the
 * one before (the calls after the window's last stack stand with it).
 */
export const DownstreamFunctionSchema = z.object({
  name: text,
  /** The script's path or file:// URL as the process saw it (checkout-relative once merged). */
  file: text,
  /** 1-based line and column of the function, 0 when unknown. */
  line: count,
  column: count,
  calls: count,
  waitingMicros: micros,
  /**
   * The calls it made as the function that resumed from an await (the outermost user frame of
   * the call's synchronous stack), and their waiting: the code that awaits them, where `calls`
   * names the helper that issued them. Estimates as `calls`; absent in records before 2026-12.
   */
  resumedCalls: count.optional(),
  resumedMicros: micros.optional(),
  /**
   * Of `calls`, those made outside any request: no incoming request's async context was open
   * (a timer's job, a queue consumer, work after the response). Absent when none, or when the
   * requests' contexts were off (`waiting: calls`), and in records before 2026-12-06.
   */
  outsideCalls: count.optional(),
});

/** A distinct stack of user frames (outermost first) and the endpoint its calls went to (estimates, as functions'). */
export const DownstreamStackSchema = z.object({
  /** Indices into functions, outermost first; the last one issued the calls. Empty: no user frame. */
  frames: z.array(count).max(DOWNSTREAM_LIMITS.frames),
  /** Index into endpoints: the stack's leaf in a waiting flame graph. */
  endpoint: count,
  calls: count,
  waitingMicros: micros,
});

/** Waiting on the requests' path: their calls by the incoming request (its async context) that made them. */
export const DownstreamRequestsSchema = z.object({
  /** Requests that made at least one call and ended in the window. */
  withCalls: count,
  /** Calls those requests made. */
  calls: count,
  /** Per request, the time at least one of its calls was in flight (their union), summed, µs. */
  unionMicros: micros,
  /** Per request, the sum of its calls' durations, summed, µs (≥ unionMicros; equal in series). */
  sumMicros: micros,
});

/** One process's window (monitor.json `downstream`), or a round's processes merged. */
export const DownstreamWindowSchema = z.object({
  /** Incoming requests the process's HTTP server received in the window. */
  requests: count,
  endpoints: z.array(DownstreamEndpointSchema).max(DOWNSTREAM_LIMITS.endpoints + 1),
  requestsWithCalls: DownstreamRequestsSchema,
  /** Sorted by waitingMicros, largest first. */
  functions: z.array(DownstreamFunctionSchema).max(DOWNSTREAM_LIMITS.functions + 1),
  stacks: z.array(DownstreamStackSchema).max(DOWNSTREAM_LIMITS.stacks + 1),
  /** Processes merged (1 in a monitor.json). */
  processes: count.optional(),
});

export type DownstreamProtocol = z.infer<typeof DownstreamProtocolSchema>;
export type DownstreamEndpoint = z.infer<typeof DownstreamEndpointSchema>;
export type DownstreamFunction = z.infer<typeof DownstreamFunctionSchema>;
export type DownstreamStack = z.infer<typeof DownstreamStackSchema>;
export type DownstreamRequests = z.infer<typeof DownstreamRequestsSchema>;
export type DownstreamWindow = z.infer<typeof DownstreamWindowSchema>;

// ── report: what the requests waited for, base → head (verdict/downstream-diff.ts) ─────────

/** One endpoint's calls per request base → head (figures per request, means over each side's rounds). */
export interface DownstreamEndpointRow {
  /** `host:port` or a Unix socket's path, as the server's client named it. */
  endpoint: string;
  /** http, https, postgres, redis, memcache or mysql, where the probe could tell. */
  protocol?: string;
  base: { calls: number; waitingPerCall: number; connections: number; bytes: number };
  head: { calls: number; waitingPerCall: number; connections: number; bytes: number };
  /** head − base, calls per request. */
  callsChange: number;
  /** Paired interval of the per-pair change of calls per request, with two pairs or more. */
  callsCi?: [number, number];
  /**
   * Where the row was seen: only in head ('new'), only in base ('vanished'), or on both sides
   * ('changed', whether or not its figures moved: its interval says that).
   */
  status: 'new' | 'vanished' | 'changed';
}

/** A function of the user's code that made downstream calls: its calls and waiting per request. */
export interface WaitingFunctionRow {
  name: string;
  file: string;
  line: number;
  /** Calls it made per request, and the sum of their durations per request (µs). */
  base: { calls: number; waiting: number };
  head: { calls: number; waiting: number };
  /** head − base, waiting µs per request; its paired interval with two pairs or more. */
  change: number;
  ci?: [number, number];
  /** head − base, calls per request, and its paired interval. */
  callsChange: number;
  callsCi?: [number, number];
  /**
   * Where the row was seen: only in head ('new'), only in base ('vanished'), or on both sides
   * ('changed', whether or not its figures moved: its interval says that).
   */
  status: 'new' | 'vanished' | 'changed';
  /**
   * Background work: at least 90 % of its calls, both sides together, were made outside any
   * request (a timer's job, a queue consumer); its figures per request are the job's calls over
   * the requests served meanwhile. Absent otherwise.
   */
  background?: true;
}

/** What the requests waited for, base → head (both sides need the probe's downstream record). */
export interface DownstreamDiff {
  /** The endpoints whose calls per request changed most, largest first. */
  endpoints: DownstreamEndpointRow[];
  /** The functions whose waiting per request changed most, largest first. */
  functions: WaitingFunctionRow[];
  /**
   * Per side, the requests' time with a call in flight over the sum of their calls' durations
   * (mean over rounds): 1 when a request's calls run one after another, 1/3 for three together.
   */
  seriality: { base?: number; head?: number };
  /**
   * Per side, the share of the calls made in an incoming request's async context (mean over
   * rounds). Below a half, waiting per request is not measured and no "in series" is said: a
   * promise library or pool ran the calls outside it. Absent in older reports.
   */
  onPath?: { base: number; head: number };
  /** Head's calls overlap clearly less than base's: awaited in series, by this function. */
  inSeries?: { name: string; file: string; line: number };
  pairs: number;
  rounds: { base: number; head: number };
}
