import { createRun } from '@hotpath/load-client';
import { HotpathCompareError } from '../errors.js';
import type { LoadResult } from '../model.js';
import { grpcMessage } from '../settings/grpc.js';

export interface LoadOptions {
  url: string;
  connections: number;
  duration: number;
  /** Seconds of load before the measured `duration`, left out of the result. */
  warmup?: number;
  pipelining: number;
  /** HTTP/2 (h2c over http://, ALPN h2 over https://, a self-signed certificate accepted). */
  http2?: boolean;
  /** gRPC unary calls: the url's path is the method, `body` the message in base64 (settings/grpc.ts). */
  grpc?: boolean;
  rate?: number;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** Several requests sent in turn on each connection (overrides method/headers/body). */
  requests?: { method?: string; path?: string; headers?: Record<string, string>; body?: string }[];
  signal?: AbortSignal;
  /**
   * A memcache:// server already holds the keys a get run reads (an earlier run against it stored
   * them): this run sends only its load. Each run stores them otherwise.
   */
  preloaded?: boolean;
  /** Called after each second of load with that second's responses. */
  onSecond?: (second: number, requestsPerSecond: number) => void;
}

/**
 * Runs load against `url` for `duration` seconds with @hotpath/load-client. Every run drains: at
 * the end nothing new is sent and the requests in flight are awaited and counted, so a slice or
 * window leaves no work behind on the server (work that would otherwise run in the other side's
 * slice, or in the window after a warm-up, uncounted) and its slowest requests are not cut off.
 * And every run connects first: all its connections are up (and accepted, the server being idle
 * between slices) before the first request, because a busy Node.js server accepts one new
 * connection per turn of its event loop — a slice on fresh connections would otherwise measure
 * the connections waiting to be accepted (on a saturated 1 ms route with 50 connections, every
 * sliced round's p99 read the slice's length, 0.6 s, and its p50 swung ±15 % between rounds).
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  try {
    const target = options.grpc ? new URL(options.url) : undefined;
    const loadRun = createRun({
      url: target ? target.origin : options.url,
      connections: options.connections,
      duration: options.duration,
      ...(options.warmup ? { warmup: options.warmup } : {}),
      pipelining: options.pipelining,
      ...(options.http2 || target ? { http2: true } : {}),
      rate: options.rate,
      headers: options.headers,
      ...(target
        ? { grpc: { method: target.pathname, message: grpcMessage(options.body) } }
        : { method: options.method, body: options.body, requests: options.requests }),
      signal: options.signal,
      drain: true,
      connectFirst: true,
      ...(options.preloaded && options.url.startsWith('memcache:') ? { memcache: { preload: false } } : {}),
    });
    const { onSecond } = options;
    if (onSecond) loadRun.on('tick', (tick) => onSecond(tick.second, tick.requests));
    const result = (await loadRun.result) as unknown as LoadResult & { latency: Record<string, number> };
    return {
      duration: result.duration,
      requests: result.requests,
      latency: {
        mean: result.latency.mean,
        p50: result.latency.p50,
        p90: result.latency.p90,
        p99: result.latency.p99,
        max: result.latency.max,
      },
      statusCodes: result.statusCodes ?? {},
      non2xx: result.non2xx ?? 0,
      errors: result.errors ?? 0,
      errorsByKind: result.errorsByKind ?? {},
      histogram: result.histogram,
    };
  } catch (err) {
    if (err instanceof HotpathCompareError) throw err;
    throw new HotpathCompareError(
      'HP_COMPARE_LOAD_FAILED',
      `load against ${options.url} failed: ${(err as Error).message}`,
      { cause: err },
    );
  }
}
