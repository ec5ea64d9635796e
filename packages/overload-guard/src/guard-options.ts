import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';

/** Why a request was shed, or which limit keeps the guard overloaded. */
export type OverloadReason =
  | 'eventLoopDelay'
  | 'eventLoopUtilization'
  | 'heapUsedBytes'
  | 'rssBytes'
  | 'healthCheck'
  | 'concurrency';

/** Answers a shed request instead of the default 503; gets node's own request/response objects. */
export type ShedHandler = (req: IncomingMessage, res: ServerResponse, reason: OverloadReason) => void;

/** Options of the optional adaptive concurrency limit (an alternative to delay-based shedding). */
export interface ConcurrencyOptions {
  /** 'fixed' keeps `initialLimit`; 'aimd' and 'gradient' adapt it from observed latencies. */
  policy?: 'fixed' | 'aimd' | 'gradient';
  /** Starting limit on requests in flight (default 20). */
  initialLimit?: number;
  /** Lowest the limit may go (default 1). */
  minLimit?: number;
  /** Highest the limit may go (default 1000). */
  maxLimit?: number;
  /** aimd: latency above which the limit is cut (ms, default 100). */
  latencyThreshold?: number;
  /** aimd: factor the limit is multiplied by on a slow or shed request (default 0.9). */
  backoffRatio?: number;
}

export interface GuardOptions {
  /** Shed when a request would wait longer than this in the event loop, in ms (default 100; 0 = off). */
  maxEventLoopDelay?: number;
  /** Shed while utilisation over `utilizationWindow` is above this, 0..1 (default 0 = off). */
  maxEventLoopUtilization?: number;
  /** Width of the sliding utilisation window, in ms (default 1000). */
  utilizationWindow?: number;
  /** Shed while V8's used heap is above this many bytes (default 0 = off). */
  maxHeapUsedBytes?: number;
  /** Shed while the resident set is above this many bytes (default 0 = off). */
  maxRssBytes?: number;
  /** Heartbeat and sampling period, in ms (default 10). */
  sampleInterval?: number;
  /** Seconds sent in `Retry-After` (default 1). */
  retryAfter?: number;
  /** Custom health check; false, a throw or a rejection counts as unhealthy. */
  healthCheck?: () => boolean | Promise<boolean>;
  /** How often healthCheck runs, in ms (default 1000). */
  healthCheckInterval?: number;
  /**
   * How long one healthCheck may take, in ms (default: healthCheckInterval; at most that). A check
   * that has not settled by then counts as unhealthy, its late result is ignored, and the next
   * check starts on the next interval.
   */
  healthCheckTimeout?: number;
  /** Status code of a shed response (default 503). */
  statusCode?: number;
  /** Body of a shed response: a string (text/plain) or a JSON-serialisable object. */
  body?: string | Record<string, unknown>;
  /** Custom answer to a shed request (replaces statusCode/body). */
  onShed?: ShedHandler;
  /** Paths never shed: exact pathnames or regular expressions tested on the pathname. */
  exclude?: Array<string | RegExp>;
  /** When set, GET on this path answers the guard's status: 200 healthy, 503 overloaded. Never shed. */
  healthPath?: string;
  /** How long nothing must be shed before 'recovered' is emitted, in ms (default 1000). */
  recoveryTime?: number;
  /** Optional: also cap requests in flight with a fixed or adaptive limit. */
  concurrency?: ConcurrencyOptions;
}

const millis = (min: number) =>
  z.number({ error: `a number of milliseconds >= ${min}` }).min(min, `a number of milliseconds >= ${min}`);
const offOrPositive = (what: string) =>
  z.number({ error: `0 (off) or a positive ${what}` }).min(0, `0 (off) or a positive ${what}`);
const fn = <T>(what: string) => z.custom<T>((value) => typeof value === 'function', what);
const count = (min: number) =>
  z
    .number({ error: `an integer >= ${min}` })
    .int(`an integer >= ${min}`)
    .min(min, `an integer >= ${min}`);

const concurrencySchema = z
  .object({
    policy: z
      .enum(['fixed', 'aimd', 'gradient'], { error: "'fixed', 'aimd' or 'gradient'" })
      .default('gradient'),
    initialLimit: count(1).default(20),
    minLimit: count(1).default(1),
    maxLimit: count(1).default(1000),
    latencyThreshold: millis(1).default(100),
    backoffRatio: z
      .number({ error: 'a number between 0.5 and 1 (exclusive)' })
      .min(0.5, 'a number between 0.5 and 1 (exclusive)')
      .lt(1, 'a number between 0.5 and 1 (exclusive)')
      .default(0.9),
  })
  .strict()
  .refine((c) => c.minLimit <= c.initialLimit && c.initialLimit <= c.maxLimit, {
    error: 'minLimit <= initialLimit <= maxLimit',
  });

export const guardOptionsSchema = z
  .object({
    maxEventLoopDelay: offOrPositive('number of milliseconds').default(100),
    maxEventLoopUtilization: z
      .number({ error: '0 (off) or a number in (0, 1]' })
      .min(0, '0 (off) or a number in (0, 1]')
      .max(1, '0 (off) or a number in (0, 1]')
      .default(0),
    utilizationWindow: millis(10).default(1000),
    maxHeapUsedBytes: offOrPositive('number of bytes').default(0),
    maxRssBytes: offOrPositive('number of bytes').default(0),
    sampleInterval: millis(1).max(60_000, 'a number of milliseconds from 1 to 60000').default(10),
    retryAfter: count(0).default(1),
    healthCheck: fn<() => boolean | Promise<boolean>>(
      'a function returning a boolean or a promise of one',
    ).optional(),
    healthCheckInterval: millis(10).default(1000),
    healthCheckTimeout: millis(1).optional(),
    statusCode: count(400).max(599, 'an HTTP error status from 400 to 599').default(503),
    body: z
      .union([z.string(), z.record(z.string(), z.unknown())], { error: 'a string or a plain object' })
      .optional(),
    onShed: fn<ShedHandler>('a function (req, res, reason) => void').optional(),
    exclude: z
      .array(z.union([z.string().startsWith('/'), z.instanceof(RegExp)]), {
        error: "an array of paths starting with '/' or regular expressions",
      })
      .default([]),
    healthPath: z
      .string({ error: "a path starting with '/'" })
      .startsWith('/', "a path starting with '/'")
      .optional(),
    recoveryTime: millis(0).default(1000),
    concurrency: concurrencySchema.optional(),
  })
  .strict()
  .refine((o) => o.healthCheckTimeout === undefined || o.healthCheckTimeout <= o.healthCheckInterval, {
    error: 'a number of milliseconds no greater than healthCheckInterval',
    path: ['healthCheckTimeout'],
  })
  .transform((o) => ({ ...o, healthCheckTimeout: o.healthCheckTimeout ?? o.healthCheckInterval }));

export type ResolvedGuardOptions = z.output<typeof guardOptionsSchema>;
