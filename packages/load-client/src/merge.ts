import { describe, HotpathLoadError } from './errors.js';
import { createLatencyHistogram, decodeHistogram, encodeHistogram, summarizeLatency } from './recorder.js';
import { addCounts, addMessages, addSeries, perSecondMean, type RunResult } from './result.js';
import { seriesStats } from './series-stats.js';

/**
 * Merges the results of runs made at the same time (on several machines, CI jobs or
 * processes against one target) into one result of the same shape, exactly:
 * - latency: the serialised histograms are added, and every percentile is read from the sum;
 * - counts (requests, bytes, status codes, errors by kind, TLS handshakes) are added;
 * - per-second series are added second by second (second i of every run is taken to be the
 *   same second, as for the worker threads of one run), and their statistics recomputed;
 * - duration is the longest, start the earliest, connections and workers are added, rate is
 *   the sum of the rates (null when every run was closed-model), pipelining the largest.
 * `requests.mean` is the merged total over the merged (longest) duration, as in one run.
 */
export function mergeResults(results: readonly RunResult[]): RunResult {
  if (results.length === 0) throw new HotpathLoadError('HP_LOAD_INVALID_RESULT', 'no results to merge');
  const histogram = createLatencyHistogram();
  const statusCodes: Record<string, number> = {};
  const errorsByKind: Record<string, number> = {};
  const errorMessages: Record<string, string> = {};
  const requestsPerSecond: number[] = [];
  const bytesPerSecond: number[] = [];
  const urls: string[] = [];
  let responses = 0;
  let bytes = 0;
  let non2xx = 0;
  let errors = 0;
  let connections = 0;
  let workers = 0;
  let pipelining = 0;
  let rate: number | null = null;
  let duration = 0;
  let start = Number.POSITIVE_INFINITY;
  let aborted = false;
  let bailedOut = false;
  let tls: RunResult['tls'] = null;
  for (const [i, value] of results.entries()) {
    const result = parseRunResult(value, `results[${i}]`);
    histogram.add(decodeHistogram(result.histogram));
    addCounts(statusCodes, result.statusCodes);
    addCounts(errorsByKind, result.errorsByKind);
    addMessages(errorMessages, result.errorMessages ?? {});
    addSeries(requestsPerSecond, result.requests.perSecond);
    addSeries(bytesPerSecond, result.throughput.perSecond);
    if (!urls.includes(result.url)) urls.push(result.url);
    responses += result.requests.total;
    bytes += result.throughput.total;
    non2xx += result.non2xx;
    errors += result.errors;
    connections += result.connections;
    workers += result.workers;
    pipelining = Math.max(pipelining, result.pipelining);
    if (result.rate !== null) rate = (rate ?? 0) + result.rate;
    duration = Math.max(duration, result.duration);
    start = Math.min(start, Date.parse(result.start));
    aborted ||= result.aborted;
    bailedOut ||= result.bailedOut === true;
    if (result.tls) {
      tls ??= { handshakes: 0, resumed: 0 };
      tls.handshakes += result.tls.handshakes;
      tls.resumed += result.tls.resumed;
    }
  }
  return {
    url: urls.join(' '),
    connections,
    pipelining,
    rate,
    workers,
    duration,
    start: new Date(start).toISOString(),
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
    latency: summarizeLatency(histogram),
    statusCodes,
    non2xx,
    errors,
    errorsByKind,
    errorMessages,
    tls,
    histogram: encodeHistogram(histogram),
    histogramUnit: 'us',
  };
}

function isCountRecord(value: unknown): value is Record<string, number> {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0)
  );
}

function isSeries(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0);
}

const count = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0;

/**
 * Checks that `value` (parsed JSON) is a hotpath-load result that can be merged; `name` (a
 * file name) goes into the error message. Fields added after a result was written
 * (errorMessages, tls, perSecondStats) may be missing.
 */
export function parseRunResult(value: unknown, name: string): RunResult {
  const fail = (what: string): never => {
    throw new HotpathLoadError(
      'HP_LOAD_INVALID_RESULT',
      `${name} is not a hotpath-load --json result: ${what}`,
    );
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('expected a JSON object');
  const r = value as Record<string, unknown>;
  const requests = r.requests as Record<string, unknown> | undefined;
  const throughput = r.throughput as Record<string, unknown> | undefined;
  if (typeof r.url !== 'string') fail(`"url" is ${describe(r.url)}, expected a string`);
  if (r.histogramUnit !== 'us') fail(`"histogramUnit" is ${describe(r.histogramUnit)}, expected "us"`);
  const histogram =
    typeof r.histogram === 'string' && r.histogram !== '' ? r.histogram : fail('"histogram" is missing');
  try {
    decodeHistogram(histogram);
  } catch {
    fail('"histogram" is not a serialised HdrHistogram');
  }
  if (
    typeof requests !== 'object' ||
    requests === null ||
    !count(requests.total) ||
    !isSeries(requests.perSecond)
  )
    fail('"requests" needs a whole "total" and a "perSecond" array');
  if (
    typeof throughput !== 'object' ||
    throughput === null ||
    !count(throughput.total) ||
    !isSeries(throughput.perSecond)
  )
    fail('"throughput" needs a whole "total" and a "perSecond" array');
  for (const key of ['connections', 'pipelining', 'workers', 'non2xx', 'errors'])
    if (!count(r[key])) fail(`"${key}" is ${describe(r[key])}, expected a whole number`);
  if (typeof r.duration !== 'number' || !(r.duration >= 0)) fail(`"duration" is ${describe(r.duration)}`);
  if (r.rate !== null && (typeof r.rate !== 'number' || !(r.rate > 0))) fail(`"rate" is ${describe(r.rate)}`);
  if (typeof r.start !== 'string' || Number.isNaN(Date.parse(r.start)))
    fail(`"start" is ${describe(r.start)}`);
  if (typeof r.aborted !== 'boolean') fail(`"aborted" is ${describe(r.aborted)}`);
  if (!isCountRecord(r.statusCodes)) fail('"statusCodes" is not an object of counts');
  if (!isCountRecord(r.errorsByKind)) fail('"errorsByKind" is not an object of counts');
  if (r.tls !== undefined && r.tls !== null) {
    const tls = r.tls as Record<string, unknown>;
    if (!count(tls.handshakes) || !count(tls.resumed)) fail('"tls" needs whole "handshakes" and "resumed"');
  }
  return value as RunResult;
}
