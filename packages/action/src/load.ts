import { Agent, request as httpRequest } from 'node:http';
import * as loadClient from '@hotpath/load-client';
import { HotpathActionError } from './errors.js';

/** What one load run measured (the part of @hotpath/load-client's RunResult the engine uses). */
export interface LoadResult {
  /** Measured seconds. */
  duration: number;
  requests: { total: number; mean: number; perSecond: number[] };
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  errorsByKind: Record<string, number>;
}

export interface LoadOptions {
  url: string;
  connections: number;
  duration: number;
  pipelining: number;
  rate?: number;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

type LibraryRun = (options: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** The library's run(), when the installed @hotpath/load-client has it. */
function libraryRun(): LibraryRun | undefined {
  const candidate = (loadClient as Record<string, unknown>).run;
  return typeof candidate === 'function' ? (candidate as LibraryRun) : undefined;
}

/** Runs load against `url` for `duration` seconds with @hotpath/load-client. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const run = libraryRun();
  try {
    if (!run) return await fallbackLoad(options);
    const result = (await run({
      url: options.url,
      connections: options.connections,
      duration: options.duration,
      pipelining: options.pipelining,
      rate: options.rate,
      method: options.method,
      headers: options.headers,
      body: options.body,
      signal: options.signal,
    })) as unknown as LoadResult & { latency: Record<string, number> };
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
    };
  } catch (err) {
    if (err instanceof HotpathActionError) throw err;
    throw new HotpathActionError(
      'HP_ACTION_LOAD_FAILED',
      `load against ${options.url} failed: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Minimal closed-model HTTP load (keep-alive, one request in flight per connection), used only
 * while the installed @hotpath/load-client predates its run() API.
 */
async function fallbackLoad(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  if (target.protocol !== 'http:') {
    throw new HotpathActionError('HP_ACTION_LOAD_FAILED', `unsupported URL ${options.url}: expected http://`);
  }
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const errorsByKind: Record<string, number> = {};
  const start = performance.now();
  const end = start + options.duration * 1000;
  const seconds = Math.ceil(options.duration);
  const perSecond = new Array<number>(seconds).fill(0);
  let errors = 0;
  let non2xx = 0;
  const once = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = httpRequest(
        target,
        { method: options.method, headers: options.headers, agent, timeout: 10_000 },
        (res) => {
          res.resume();
          res.on('end', () => {
            const t1 = performance.now();
            if (t1 <= end) {
              latencies.push(t1 - t0);
              const code = String(res.statusCode);
              statusCodes[code] = (statusCodes[code] ?? 0) + 1;
              if (!res.statusCode || res.statusCode < 200 || res.statusCode >= 300) non2xx++;
              perSecond[Math.min(seconds - 1, Math.floor((t1 - start) / 1000))]++;
            }
            resolve();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (performance.now() <= end) {
          errors++;
          const kind =
            err.code === 'ECONNREFUSED' ? 'connect' : err.code === 'ECONNRESET' ? 'reset' : 'other';
          errorsByKind[kind] = (errorsByKind[kind] ?? 0) + 1;
        }
        setTimeout(resolve, 10);
      });
      if (options.body) req.write(options.body);
      req.end();
    });
  const worker = async () => {
    while (performance.now() < end && !options.signal?.aborted) await once();
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  agent.destroy();
  const measured = Math.min(performance.now(), end) - start;
  latencies.sort((a, b) => a - b);
  let sum = 0;
  for (const l of latencies) sum += l;
  return {
    duration: measured / 1000,
    requests: { total: latencies.length, mean: latencies.length / (measured / 1000), perSecond },
    latency: {
      mean: latencies.length ? sum / latencies.length : 0,
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      max: latencies.length ? latencies[latencies.length - 1] : 0,
    },
    statusCodes,
    non2xx,
    errors,
    errorsByKind,
  };
}
