import { describe, HotpathLoadError, invalidOption } from './errors.js';
import { type RequestSpec, serializeRequest } from './request.js';

export type MemcacheOperation = 'get' | 'set' | 'mix';

/** Options of a memcache:// run. */
export interface MemcacheOptions {
  /** get, set, or a mix of both (default get). */
  operation?: MemcacheOperation;
  /** Share of sets in `mix` mode, 0..1 (default 0.1). */
  setRatio?: number;
  /** Number of distinct keys (default 10000). */
  keySpace?: number;
  /** Value size in bytes for sets (default 100). */
  valueSize?: number;
  /** Key prefix (default "hp:"). */
  keyPrefix?: string;
  /** Share of the key space stored before the run so gets hit, 0..1 (default 1). */
  hitRatio?: number;
}

export interface RunOptions {
  /** http://host[:port]/path or memcache://host:port */
  url: string;
  /** Concurrent connections (default 10). */
  connections?: number;
  /** Measured seconds. Default 10 when neither duration nor amount is given. */
  duration?: number;
  /** Exact number of measured requests (responses + errors). */
  amount?: number;
  /** Seconds of load before measuring; excluded from the results. */
  warmup?: number;
  /** Requests in flight per connection (default 1). */
  pipelining?: number;
  /** Open model: requests per second over all connections, spread evenly. */
  rate?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Several requests, cycled in order on each connection (overrides method/headers/body). */
  requests?: RequestSpec[];
  /** Seconds a request may wait for its response before it counts as a timeout (default 10). */
  timeout?: number;
  /** Worker threads sharing connections, rate and amount (default 1: no threads). */
  workers?: number;
  signal?: AbortSignal;
  memcache?: MemcacheOptions;
  /**
   * Setup hook, called once per connection before it starts: that connection's own requests
   * (e.g. a per-connection token), serialised once. Not with `workers` > 1.
   */
  setupConnection?: (connection: number) => RequestSpec[];
  /**
   * Per-request callback for templated requests: called for every request and serialised each
   * time (slower than fixed requests). Not with `workers` > 1.
   */
  onRequest?: (context: { connection: number; sequence: number }) => RequestSpec;
}

export interface HttpTarget {
  kind: 'http';
  host: string;
  port: number;
  path: string;
  /** Serialised requests, cycled per connection. */
  requests: Buffer[];
  /** Per request: true when the response carries no body (HEAD). */
  noBody: boolean[];
  /** Host header value. */
  hostHeader: string;
  setupConnection?: (connection: number) => RequestSpec[];
  onRequest?: (context: { connection: number; sequence: number }) => RequestSpec;
}

export interface MemcacheTarget {
  kind: 'memcache';
  host: string;
  port: number;
  operation: MemcacheOperation;
  setRatio: number;
  keySpace: number;
  valueSize: number;
  keyPrefix: string;
  hitRatio: number;
}

export interface ResolvedOptions {
  url: string;
  target: HttpTarget | MemcacheTarget;
  connections: number;
  duration: number | undefined;
  amount: number | undefined;
  warmup: number;
  pipelining: number;
  rate: number | undefined;
  timeout: number;
  workers: number;
}

export const DEFAULT_DURATION = 10;

function positiveNumber(name: string, value: unknown, expected = 'a number > 0'): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw invalidOption(name, value, expected);
  return value;
}

function integerIn(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw invalidOption(name, value, `an integer from ${min} to ${max}`);
  return value;
}

function ratio(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1)
    throw invalidOption(name, value, 'a number from 0 to 1');
  return value;
}

export function parseTarget(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    throw new HotpathLoadError(
      'HP_LOAD_INVALID_URL',
      `invalid URL ${describe(url)}: expected http://host[:port]/path or memcache://host:port`,
      { cause },
    );
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'memcache:') || parsed.hostname === '') {
    throw new HotpathLoadError(
      'HP_LOAD_INVALID_URL',
      `invalid URL ${describe(url)}: expected http://host[:port]/path or memcache://host:port`,
    );
  }
  return parsed;
}

/** Validates options once, at the boundary; everything inside trusts the result. */
export function resolveOptions(options: RunOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object') throw invalidOption('options', options, 'an object');
  if (typeof options.url !== 'string') throw invalidOption('url', options.url, 'a URL string');
  const url = parseTarget(options.url);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const connections =
    options.connections === undefined ? 10 : integerIn('connections', options.connections, 1, 10_000);
  const duration =
    options.duration === undefined
      ? undefined
      : positiveNumber('duration', options.duration, 'a number of seconds > 0');
  const amount = options.amount === undefined ? undefined : integerIn('amount', options.amount, 1, 1e12);
  const warmup =
    options.warmup === undefined || options.warmup === 0
      ? 0
      : positiveNumber('warmup', options.warmup, 'a number of seconds >= 0');
  const pipelining =
    options.pipelining === undefined ? 1 : integerIn('pipelining', options.pipelining, 1, 1024);
  const rate =
    options.rate === undefined ? undefined : positiveNumber('rate', options.rate, 'requests per second > 0');
  const timeout =
    options.timeout === undefined
      ? 10
      : positiveNumber('timeout', options.timeout, 'a number of seconds > 0');
  const workers = options.workers === undefined ? 1 : integerIn('workers', options.workers, 1, 64);
  if (workers > connections)
    throw invalidOption('workers', workers, `at most as many workers as connections (${connections})`);

  let target: HttpTarget | MemcacheTarget;
  if (url.protocol === 'http:') {
    const port = url.port === '' ? 80 : Number(url.port);
    const path = `${url.pathname}${url.search}`;
    const hostHeader = url.host;
    const specs: RequestSpec[] =
      options.requests !== undefined
        ? options.requests
        : [{ method: options.method, headers: options.headers, body: options.body }];
    if (!Array.isArray(specs) || specs.length === 0)
      throw invalidOption('requests', options.requests, 'a non-empty array of requests');
    const requests = specs.map((spec) => serializeRequest(hostHeader, { path, ...spec }));
    const noBody = specs.map((spec) => (spec.method ?? 'GET').toUpperCase() === 'HEAD');
    for (const name of ['setupConnection', 'onRequest'] as const) {
      if (options[name] !== undefined && typeof options[name] !== 'function')
        throw invalidOption(name, options[name], 'a function');
      if (options[name] !== undefined && workers > 1)
        throw invalidOption('workers', workers, `1 when ${name} is given (functions cannot cross threads)`);
    }
    target = {
      kind: 'http',
      host,
      port,
      path,
      requests,
      noBody,
      hostHeader,
      setupConnection: options.setupConnection,
      onRequest: options.onRequest,
    };
  } else {
    if (url.port === '') throw invalidOption('url', options.url, 'memcache://host:port with a port');
    if (options.setupConnection !== undefined || options.onRequest !== undefined)
      throw invalidOption('url', options.url, 'an http:// URL when setupConnection or onRequest is given');
    const mc = options.memcache ?? {};
    const operation = mc.operation ?? 'get';
    if (operation !== 'get' && operation !== 'set' && operation !== 'mix')
      throw invalidOption('memcache operation', operation, 'get, set or mix');
    const keyPrefix = mc.keyPrefix ?? 'hp:';
    if (!/^[\x21-\x7e]{0,200}$/.test(keyPrefix))
      throw invalidOption('memcache key prefix', keyPrefix, 'printable characters without spaces');
    target = {
      kind: 'memcache',
      host,
      port: Number(url.port),
      operation,
      setRatio: mc.setRatio === undefined ? 0.1 : ratio('memcache set ratio', mc.setRatio),
      keySpace: mc.keySpace === undefined ? 10_000 : integerIn('memcache key space', mc.keySpace, 1, 1e9),
      valueSize:
        mc.valueSize === undefined ? 100 : integerIn('memcache value size', mc.valueSize, 0, 1024 * 1024),
      keyPrefix,
      hitRatio: mc.hitRatio === undefined ? 1 : ratio('memcache hit ratio', mc.hitRatio),
    };
  }
  return {
    url: options.url,
    target,
    connections,
    duration: duration === undefined && amount === undefined ? DEFAULT_DURATION : duration,
    amount,
    warmup,
    pipelining,
    rate,
    timeout,
    workers,
  };
}
