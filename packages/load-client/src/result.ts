import type { EngineOutcome } from './load-engine.js';
import {
  createLatencyHistogram,
  decodeHistogram,
  encodeHistogram,
  HISTOGRAM_UNIT,
  type LatencySummary,
  summarizeLatency,
} from './recorder.js';
import { type SeriesStats, seriesStats } from './series-stats.js';

export interface RunResult {
  url: string;
  connections: number;
  pipelining: number;
  /** Requests per second asked for (open model), or null (closed model). */
  rate: number | null;
  workers: number;
  /** Measured seconds (warm-up excluded). */
  duration: number;
  /** ISO time the measured window started. */
  start: string;
  /** True when the run was stopped early (signal, Ctrl-C). */
  aborted: boolean;
  /** True when the run stopped because `bailout` requests failed. */
  bailedOut: boolean;
  requests: {
    /** Responses received (any status). */
    total: number;
    /** Requests per second over the measured window (total / duration). */
    mean: number;
    /** Responses in each whole second of the window. */
    perSecond: number[];
    /** Statistics of `perSecond`: mean, stdev, min, max, percentiles of req/s over the seconds. */
    perSecondStats: SeriesStats;
  };
  /** Bytes received: total, per second over the window, in each whole second, and their statistics. */
  throughput: { total: number; mean: number; perSecond: number[]; perSecondStats: SeriesStats };
  latency: LatencySummary;
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  errorsByKind: Record<string, number>;
  /** The first message seen for each error kind, e.g. `{ "timeout": "no response within 10 s" }`. */
  errorMessages: Record<string, string>;
  /**
   * https:// targets: TLS connections established (first connects and reconnects, warm-up
   * included) and how many of them resumed an earlier session; null for other targets.
   */
  tls: { handshakes: number; resumed: number } | null;
  /** HdrHistogram of latencies in microseconds, compressed base64; see mergeHistograms. */
  histogram: string;
  histogramUnit: 'us';
}

/** What one engine (one thread) measured, in a form that crosses thread boundaries. */
export interface PartialResult {
  responses: number;
  errors: number;
  bytes: number;
  statusCodes: Record<string, number>;
  errorsByKind: Record<string, number>;
  errorMessages: Record<string, string>;
  connects: number;
  resumed: number;
  requestsPerSecond: number[];
  bytesPerSecond: number[];
  histogram: string;
  duration: number;
  aborted: boolean;
  bailedOut: boolean;
  startedAt: number;
}

export function toPartial(outcome: EngineOutcome): PartialResult {
  const r = outcome.recorder;
  return {
    responses: r.responses,
    errors: r.errors,
    bytes: r.bytes,
    statusCodes: r.statusCodes(),
    errorsByKind: r.errorsByKind(),
    errorMessages: r.firstErrorMessages(),
    connects: r.connects,
    resumed: r.resumed,
    requestsPerSecond: r.requestsPerSecond.slice(),
    bytesPerSecond: r.bytesPerSecond.slice(),
    histogram: encodeHistogram(r.latencyHistogram()),
    duration: outcome.duration,
    aborted: outcome.aborted,
    bailedOut: outcome.bailedOut,
    startedAt: outcome.startedAt,
  };
}

export function addCounts(into: Record<string, number>, from: Record<string, number>): void {
  for (const [key, value] of Object.entries(from)) into[key] = (into[key] ?? 0) + value;
}

/** Adds `from` into `into` second by second (second i of each is the same second of the run). */
export function addSeries(into: number[], from: number[]): void {
  from.forEach((value, i) => {
    into[i] = (into[i] ?? 0) + value;
  });
}

/** Keeps the first message of each kind. */
export function addMessages(into: Record<string, string>, from: Record<string, string>): void {
  for (const [key, value] of Object.entries(from)) if (!(key in into)) into[key] = value;
}

/** Per second over `duration` seconds, to two decimals (0 for an empty window). */
export function perSecondMean(total: number, duration: number): number {
  return duration > 0 ? Math.round((total / duration) * 100) / 100 : 0;
}

/** Merges serialised histograms (from workers or machines) exactly; returns the merged encoding. */
export function mergeHistograms(encoded: string[]): string {
  const merged = createLatencyHistogram();
  for (const one of encoded) {
    const h = decodeHistogram(one);
    merged.add(h);
  }
  return encodeHistogram(merged);
}

/**
 * The share (0..1) of a serialised histogram's latencies at or below `ms` (within the histogram's
 * precision, about 0.1 %); 0 for an empty one. What a goodput counts: answers within a target.
 */
export function shareWithin(encoded: string, ms: number): number {
  const histogram = decodeHistogram(encoded);
  if (histogram.totalCount === 0) return 0;
  const limit = ms * 1000;
  if (histogram.maxValue <= limit) return 1;
  if (histogram.minNonZeroValue > limit) return 0;
  let lo = 0;
  let hi = 100;
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    if (histogram.getValueAtPercentile(mid) <= limit) lo = mid;
    else hi = mid;
  }
  return lo / 100;
}

/** Latency percentiles (ms) of a serialised histogram, e.g. one merged from several runs. */
export function summarizeHistogram(encoded: string): LatencySummary {
  return summarizeLatency(decodeHistogram(encoded));
}

export interface ResultContext {
  url: string;
  connections: number;
  pipelining: number;
  rate: number | undefined;
  workers: number;
  /** Labels status codes (memcache replies); identity for HTTP. */
  statusLabel?: (code: string) => string;
  /** Which codes count as failures for non2xx. */
  isFailureStatus?: (code: number) => boolean;
  /** The target is https:// (the result reports TLS handshakes and resumed sessions). */
  tls?: boolean;
}

/** Combines the partial results of one or more engines into the public result. */
export function buildResult(parts: PartialResult[], context: ResultContext): RunResult {
  const merged = createLatencyHistogram();
  const statusCodes: Record<string, number> = {};
  const errorsByKind: Record<string, number> = {};
  const errorMessages: Record<string, string> = {};
  const requestsPerSecond: number[] = [];
  const bytesPerSecond: number[] = [];
  let responses = 0;
  let errors = 0;
  let bytes = 0;
  let connects = 0;
  let resumed = 0;
  let duration = 0;
  let aborted = false;
  let bailedOut = false;
  let startedAt = Number.POSITIVE_INFINITY;
  for (const part of parts) {
    merged.add(decodeHistogram(part.histogram));
    addCounts(statusCodes, part.statusCodes);
    addCounts(errorsByKind, part.errorsByKind);
    addMessages(errorMessages, part.errorMessages);
    connects += part.connects;
    resumed += part.resumed;
    addSeries(requestsPerSecond, part.requestsPerSecond);
    addSeries(bytesPerSecond, part.bytesPerSecond);
    responses += part.responses;
    errors += part.errors;
    bytes += part.bytes;
    duration = Math.max(duration, part.duration);
    aborted ||= part.aborted;
    bailedOut ||= part.bailedOut;
    if (part.startedAt > 0) startedAt = Math.min(startedAt, part.startedAt);
  }
  const isFailure = context.isFailureStatus ?? ((code: number) => code < 200 || code > 299);
  let non2xx = 0;
  const labelled: Record<string, number> = {};
  for (const [code, count] of Object.entries(statusCodes)) {
    if (isFailure(Number(code))) non2xx += count;
    labelled[context.statusLabel ? context.statusLabel(code) : code] = count;
  }
  return {
    url: context.url,
    connections: context.connections,
    pipelining: context.pipelining,
    rate: context.rate ?? null,
    workers: context.workers,
    duration: Math.round(duration * 1000) / 1000,
    start: new Date(Number.isFinite(startedAt) ? startedAt : Date.now()).toISOString(),
    aborted,
    bailedOut,
    requests: {
      total: responses,
      mean: perSecondMean(responses, duration),
      perSecond: requestsPerSecond,
      perSecondStats: seriesStats(requestsPerSecond),
    },
    throughput: {
      total: bytes,
      mean: perSecondMean(bytes, duration),
      perSecond: bytesPerSecond,
      perSecondStats: seriesStats(bytesPerSecond),
    },
    latency: summarizeLatency(merged),
    statusCodes: labelled,
    non2xx,
    errors,
    errorsByKind,
    errorMessages,
    tls: context.tls ? { handshakes: connects, resumed } : null,
    histogram: encodeHistogram(merged),
    histogramUnit: HISTOGRAM_UNIT,
  };
}
