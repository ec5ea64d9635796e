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
  /**
   * Store that share of keys before the run (default true). False when an earlier run against
   * the same server stored them already: a run made of many short ones (a warm-up, then slices)
   * then sends only its load, not 10 000 sets each time.
   */
  preload?: boolean;
}

/** Options of an https:// run. */
export interface TlsOptions {
  /**
   * Check the server's certificate (default false, as wrk and autocannon: a load test usually
   * targets a server with a self-signed certificate). True when `ca` is given.
   */
  verify?: boolean;
  /** Certificates (PEM) to trust instead of the system's; implies `verify`. */
  ca?: string | Buffer | (string | Buffer)[];
  /** Server name sent in SNI and checked against the certificate (default: the URL's host name). */
  servername?: string;
}

/** A gRPC unary call. */
export interface GrpcOptions {
  /** `/package.Service/Method`. */
  method: string;
  /** The request message, encoded (default: empty). */
  message?: string | Buffer;
}

export interface RunOptions {
  /** http://host[:port]/path, https://host[:port]/path or memcache://host:port */
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
  /** TLS settings of an https:// target. */
  tls?: TlsOptions;
  /**
   * Speak HTTP/2: over http:// with prior knowledge (h2c), over https:// negotiated with ALPN
   * `h2`. `pipelining` is then the concurrent streams per connection (h2load's `-m`).
   */
  http2?: boolean;
  /**
   * gRPC unary calls (implies `http2`): `method` is `/package.Service/Method`, `message` the
   * request message as encoded bytes (e.g. protobuf), sent with the 5-byte gRPC prefix.
   */
  grpc?: GrpcOptions;
  /**
   * Connect to this Unix domain socket instead of the URL's host and port (the URL still gives
   * the Host header and the path), as autocannon's `socketPath`.
   */
  socketPath?: string;
  /** Stop the run once this many measured requests failed (per worker thread), as autocannon's `bailout`. */
  bailout?: number;
  /**
   * At the end of `duration`, send nothing more but wait for the requests in flight (each up to
   * `timeout`) and count them; the measured seconds then end at the last response. By default
   * (false) requests in flight at the end are dropped uncounted, as wrk and autocannon do, which
   * in a window not much longer than a request's latency leaves out the slowest requests and
   * leaves the server working on them after the window.
   */
  drain?: boolean;
  /**
   * Open every connection before any request is sent, and start the clocks (warm-up, duration,
   * the open model's schedule) once all are connected and the server has accepted them (a
   * server on this machine's loopback, on Linux: once its accept queue is empty; elsewhere after
   * a moment, CONNECT_SETTLE_MS). A busy Node.js server accepts one new connection per turn
   * of its event loop (libuv since 1.45), so without it a run's first second on a saturated
   * server is mostly connections waiting to be accepted: their first requests wait up to the
   * whole ramp, and the latencies say more about admission than about the server. Costs the
   * connect time once per run; a connection that cannot connect within `timeout` no longer holds
   * the others back.
   */
  connectFirst?: boolean;
  /**
   * HTTP: every response body must be exactly these bytes; one that differs counts as a failed
   * request of kind `body` (and toward `bailout`). Costs a compare per body byte.
   */
  expectBody?: string | Buffer;
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

/** What a connection passes to tls.connect for an https:// target. */
export interface TlsSettings {
  rejectUnauthorized: boolean;
  ca: string | Buffer | (string | Buffer)[] | undefined;
  servername: string | undefined;
}

export interface HttpTarget {
  kind: 'http';
  host: string;
  port: number;
  /** null for http://. */
  tls: TlsSettings | null;
  /** HTTP/2 instead of HTTP/1.1. */
  http2: boolean;
  /** gRPC unary calls (over HTTP/2), or false. */
  grpc: boolean;
  /** The requests as given, each with its path (HTTP/2 encodes them itself). */
  specs: RequestSpec[];
  path: string;
  /** Serialised requests, cycled per connection. */
  requests: Buffer[];
  /** The body every response must carry (--expect-body), or null. */
  expectBody: Buffer | null;
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
  preload: boolean;
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
  /** Unix domain socket to connect to instead of host:port, or null. */
  socketPath: string | null;
  /** Failed measured requests after which the run stops; Infinity when unset. */
  bailout: number;
  /** Wait for the requests in flight at the end of `duration` (see RunOptions.drain). */
  drain: boolean;
  /** Connect every connection before the clocks start (see RunOptions.connectFirst). */
  connectFirst: boolean;
}

export const DEFAULT_DURATION = 10;

/** The longest a Node.js timer can wait (2^31-1 ms), in seconds: the limit of duration and warm-up. */
export const MAX_TIMER_SECONDS = (2 ** 31 - 1) / 1000;

/** Validates a duration or warm-up that a single timer will wait for. */
export function timerSeconds(name: string, value: unknown, min: 'positive' | 'non-negative'): number {
  const expected = `a number of seconds ${min === 'positive' ? '> 0' : '>= 0'}`;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (min === 'positive' && value === 0)
  )
    throw invalidOption(name, value, expected);
  if (value > MAX_TIMER_SECONDS)
    throw invalidOption(
      name,
      value,
      `at most ${MAX_TIMER_SECONDS} seconds (2^31-1 ms, the longest a timer can wait)`,
    );
  return value;
}

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

function booleanOption(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalidOption(name, value, 'true or false');
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
      `invalid URL ${describe(url)}: expected http://host[:port]/path, https://host[:port]/path or memcache://host:port`,
      { cause },
    );
  }
  if (
    (parsed.protocol !== 'http:' && parsed.protocol !== 'https:' && parsed.protocol !== 'memcache:') ||
    parsed.hostname === ''
  ) {
    throw new HotpathLoadError(
      'HP_LOAD_INVALID_URL',
      `invalid URL ${describe(url)}: expected http://host[:port]/path, https://host[:port]/path or memcache://host:port`,
    );
  }
  return parsed;
}

function tlsSettings(tls: TlsOptions): TlsSettings {
  if (tls === null || typeof tls !== 'object') throw invalidOption('tls', tls, 'an object');
  if (tls.verify !== undefined && typeof tls.verify !== 'boolean')
    throw invalidOption('tls.verify', tls.verify, 'true or false');
  const ca = tls.ca;
  const isCert = (one: unknown) =>
    typeof one === 'string' || Buffer.isBuffer(one) || one instanceof Uint8Array;
  if (ca !== undefined && !(isCert(ca) || (Array.isArray(ca) && ca.length > 0 && ca.every(isCert))))
    throw invalidOption('tls.ca', ca, 'PEM certificates as a string, a Buffer or an array of them');
  if (ca !== undefined && tls.verify === false)
    throw invalidOption('tls.verify', false, 'true (or absent) when tls.ca is given');
  if (tls.servername !== undefined && (typeof tls.servername !== 'string' || tls.servername === ''))
    throw invalidOption('tls.servername', tls.servername, 'a host name');
  return {
    rejectUnauthorized: tls.verify === true || ca !== undefined,
    ca,
    servername: tls.servername,
  };
}

/** A gRPC method path: `/package.Service/Method`. */
export const GRPC_METHOD = /^\/[A-Za-z_][A-Za-z0-9_.]*\/[A-Za-z_][A-Za-z0-9_]*$/;

/** The one request of a gRPC unary run: POST to the method, the message with its 5-byte prefix. */
function grpcSpec(options: RunOptions): RequestSpec {
  const grpc = options.grpc;
  if (grpc === null || typeof grpc !== 'object')
    throw invalidOption('grpc', grpc, 'an object { method, message }');
  if (typeof grpc.method !== 'string' || !GRPC_METHOD.test(grpc.method))
    throw invalidOption('grpc.method', grpc.method, 'a gRPC method path like /package.Service/Method');
  if (grpc.message !== undefined && typeof grpc.message !== 'string' && !Buffer.isBuffer(grpc.message))
    throw invalidOption('grpc.message', grpc.message, 'the encoded request message as a Buffer or string');
  for (const name of ['requests', 'body', 'method'] as const)
    if (options[name] !== undefined)
      throw invalidOption(
        name,
        options[name],
        'not given with grpc (the call is grpc.method with grpc.message)',
      );
  if (options.http2 === false)
    throw invalidOption('http2', false, 'true or absent with grpc (gRPC runs over HTTP/2)');
  const message = Buffer.from(grpc.message ?? '');
  const framed = Buffer.alloc(5 + message.length);
  framed.writeUInt32BE(message.length, 1); // byte 0: not compressed
  message.copy(framed, 5);
  return {
    method: 'POST',
    path: grpc.method,
    headers: { ...options.headers, 'content-type': 'application/grpc', te: 'trailers' },
    body: framed,
  };
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
    options.duration === undefined ? undefined : timerSeconds('duration', options.duration, 'positive');
  const amount = options.amount === undefined ? undefined : integerIn('amount', options.amount, 1, 1e12);
  const warmup = options.warmup === undefined ? 0 : timerSeconds('warmup', options.warmup, 'non-negative');
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
  if (
    options.socketPath !== undefined &&
    (typeof options.socketPath !== 'string' || options.socketPath === '')
  )
    throw invalidOption('socketPath', options.socketPath, 'the path of a Unix domain socket');
  const bailout =
    options.bailout === undefined ? Number.POSITIVE_INFINITY : integerIn('bailout', options.bailout, 1, 1e12);
  if (options.drain !== undefined && typeof options.drain !== 'boolean')
    throw invalidOption('drain', options.drain, 'true or false');
  const drain = options.drain === true;
  if (options.connectFirst !== undefined && typeof options.connectFirst !== 'boolean')
    throw invalidOption('connectFirst', options.connectFirst, 'true or false');
  let expectBody: Buffer | null = null;
  if (options.expectBody !== undefined) {
    if (typeof options.expectBody !== 'string' && !Buffer.isBuffer(options.expectBody))
      throw invalidOption('expectBody', options.expectBody, 'a string or a Buffer');
    if (url.protocol === 'memcache:')
      throw invalidOption('expectBody', options.expectBody, 'an http:// or https:// target');
    expectBody = Buffer.from(options.expectBody);
  }

  let target: HttpTarget | MemcacheTarget;
  if (options.tls !== undefined && url.protocol !== 'https:')
    throw invalidOption('tls', options.tls, 'no TLS settings for a target that is not https://');
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    const secure = url.protocol === 'https:';
    const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
    const path = `${url.pathname}${url.search}`;
    const hostHeader = url.host;
    const specs: RequestSpec[] =
      options.requests !== undefined
        ? options.requests
        : [{ method: options.method, headers: options.headers, body: options.body }];
    if (!Array.isArray(specs) || specs.length === 0)
      throw invalidOption('requests', options.requests, 'a non-empty array of requests');
    // Serialised even for HTTP/2: the same checks of methods, paths and headers.
    const requests = specs.map((spec) => serializeRequest(hostHeader, { path, ...spec }));
    if (options.http2 !== undefined && typeof options.http2 !== 'boolean')
      throw invalidOption('http2', options.http2, 'true or false');
    const grpc = options.grpc === undefined ? null : grpcSpec(options);
    if (grpc !== null) specs.splice(0, specs.length, grpc);
    const http2 = options.http2 === true || grpc !== null;
    if (http2) {
      for (const name of ['setupConnection', 'onRequest', 'expectBody'] as const)
        if (options[name] !== undefined)
          throw invalidOption(name, options[name], 'not given with http2 (HTTP/1.1 only for now)');
    }
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
      tls: secure ? tlsSettings(options.tls ?? {}) : null,
      http2,
      grpc: grpc !== null,
      specs: specs.map((spec) => ({ path, ...spec })),
      path,
      requests,
      expectBody,
      noBody,
      hostHeader,
      setupConnection: options.setupConnection,
      onRequest: options.onRequest,
    };
  } else {
    if (url.port === '') throw invalidOption('url', options.url, 'memcache://host:port with a port');
    if (options.http2 === true || options.grpc !== undefined)
      throw invalidOption(
        options.grpc !== undefined ? 'grpc' : 'http2',
        true,
        'an http:// or https:// target',
      );
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
      preload: mc.preload === undefined ? true : booleanOption('memcache preload', mc.preload),
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
    socketPath: options.socketPath ?? null,
    bailout,
    drain,
    connectFirst: options.connectFirst === true,
  };
}
