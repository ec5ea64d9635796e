import * as hdr from 'hdr-histogram-js';

/** Kinds of failed requests, counted separately. */
/** `body`: the response body differed from `expectBody`. HTTP/2 only: `refused`, a stream the
 * server refused unprocessed (GOAWAY below its id, or RST_STREAM REFUSED_STREAM); `stream`, a
 * stream the server reset (RST_STREAM with another code); `grpc`, a gRPC call that ended with a
 * non-zero (or no) grpc-status. */
export const ERROR_KINDS = [
  'connect',
  'reset',
  'timeout',
  'parse',
  'closed',
  'other',
  'body',
  'refused',
  'stream',
  'grpc',
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** Latency values in the histogram are microseconds; the highest trackable is one hour. */
export const HISTOGRAM_UNIT = 'us';
const HIGHEST_US = 3_600_000_000;
/**
 * Latencies below this many microseconds (32.8 ms) are first counted in a plain array, one slot
 * per microsecond, and added to the histogram in one pass when it is read: the same counts,
 * without the histogram's bucket arithmetic (logarithms, powers) on every response.
 */
const DIRECT_US = 1 << 15;

export function createLatencyHistogram(): hdr.Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: 3,
    bitBucketSize: 32,
    autoResize: true,
  });
}

export interface LatencySummary {
  min: number;
  mean: number;
  stdev: number;
  p50: number;
  p75: number;
  p90: number;
  p97_5: number;
  p99: number;
  p99_9: number;
  p99_99: number;
  max: number;
}

/** Percentiles in milliseconds from a histogram recorded in microseconds. */
export function summarizeLatency(histogram: hdr.Histogram): LatencySummary {
  if (histogram.totalCount === 0) {
    return {
      min: 0,
      mean: 0,
      stdev: 0,
      p50: 0,
      p75: 0,
      p90: 0,
      p97_5: 0,
      p99: 0,
      p99_9: 0,
      p99_99: 0,
      max: 0,
    };
  }
  const ms = (us: number) => Math.round(us) / 1000;
  return {
    min: ms(histogram.minNonZeroValue),
    mean: Math.round(histogram.mean) / 1000,
    stdev: Math.round(histogram.stdDeviation) / 1000,
    p50: ms(histogram.getValueAtPercentile(50)),
    p75: ms(histogram.getValueAtPercentile(75)),
    p90: ms(histogram.getValueAtPercentile(90)),
    p97_5: ms(histogram.getValueAtPercentile(97.5)),
    p99: ms(histogram.getValueAtPercentile(99)),
    p99_9: ms(histogram.getValueAtPercentile(99.9)),
    p99_99: ms(histogram.getValueAtPercentile(99.99)),
    max: ms(histogram.maxValue),
  };
}

export function encodeHistogram(histogram: hdr.Histogram): string {
  return hdr.encodeIntoCompressedBase64(histogram);
}

export function decodeHistogram(encoded: string): hdr.Histogram {
  return hdr.decodeFromCompressedBase64(encoded, 32, false);
}

/**
 * Counts of one run: latency histogram, status codes, errors by kind, bytes, and per-second
 * samples. Only what is recorded while `recording` is true enters the totals (warm-up is not).
 */
export class Recorder {
  recording = false;
  private readonly histogram = createLatencyHistogram();
  private readonly direct = new Float64Array(DIRECT_US);
  private directCount = 0;
  /** Indexed by status code 0..999. */
  readonly statusCounts = new Float64Array(1000);
  readonly errorCounts = new Float64Array(ERROR_KINDS.length);
  /** The first message seen for each error kind (e.g. "connect to 127.0.0.1:80: connection refused"). */
  readonly errorMessages: (string | null)[] = ERROR_KINDS.map(() => null);
  /** Connections established (first connects and reconnects, warm-up included). */
  connects = 0;
  /** Of those, TLS connections whose session was resumed. */
  resumed = 0;
  responses = 0;
  errors = 0;
  bytes = 0;
  sent = 0;
  /** Responses and errors of measured requests: what `amount` counts. */
  outcomes = 0;
  readonly requestsPerSecond: number[] = [];
  readonly bytesPerSecond: number[] = [];
  readonly errorsPerSecond: number[] = [];
  private secondResponses = 0;
  private secondBytes = 0;
  private secondErrors = 0;

  response(status: number, latencyUs: number): void {
    this.responses++;
    this.outcomes++;
    this.secondResponses++;
    // Counts start at 0. (A status outside 0..999 or a fractional latency has no slot: the
    // write is dropped, as typed arrays drop it; the parser only passes three-digit statuses,
    // and latencies are whole µs.)
    this.statusCounts[status] = (this.statusCounts[status] ?? 0) + 1;
    if (latencyUs < DIRECT_US) {
      const us = Math.max(latencyUs, 1);
      this.direct[us] = (this.direct[us] ?? 0) + 1;
      this.directCount++;
    } else this.histogram.recordValue(latencyUs);
  }

  /** The latency histogram (µs) of every response recorded so far. */
  latencyHistogram(): hdr.Histogram {
    if (this.directCount > 0) {
      const direct = this.direct;
      for (let us = 1; us < DIRECT_US; us++) {
        const count = direct[us] ?? 0;
        if (count > 0) {
          this.histogram.recordValueWithCount(us, count);
          direct[us] = 0;
        }
      }
      this.directCount = 0;
    }
    return this.histogram;
  }

  error(kind: number, message: string): void {
    this.errors++;
    this.outcomes++;
    this.secondErrors++;
    this.errorCounts[kind] = (this.errorCounts[kind] ?? 0) + 1;
    if (this.errorMessages[kind] === null) this.errorMessages[kind] = message;
  }

  connected(resumed: boolean): void {
    this.connects++;
    if (resumed) this.resumed++;
  }

  received(bytes: number): void {
    if (!this.recording) return;
    this.bytes += bytes;
    this.secondBytes += bytes;
  }

  /** Closes one second of samples; returns that second's counts. */
  sampleSecond(): { requests: number; bytes: number; errors: number } {
    const sample = { requests: this.secondResponses, bytes: this.secondBytes, errors: this.secondErrors };
    this.requestsPerSecond.push(sample.requests);
    this.bytesPerSecond.push(sample.bytes);
    this.errorsPerSecond.push(sample.errors);
    this.secondResponses = 0;
    this.secondBytes = 0;
    this.secondErrors = 0;
    return sample;
  }

  statusCodes(): Record<string, number> {
    const out: Record<string, number> = {};
    this.statusCounts.forEach((count, status) => {
      if (count > 0) out[String(status)] = count;
    });
    return out;
  }

  non2xx(): number {
    let n = 0;
    this.statusCounts.forEach((count, status) => {
      if (status < 200 || status > 299) n += count;
    });
    return n;
  }

  errorsByKind(): Record<string, number> {
    const out: Record<string, number> = {};
    ERROR_KINDS.forEach((kind, i) => {
      const count = this.errorCounts[i] ?? 0;
      if (count > 0) out[kind] = count;
    });
    return out;
  }

  /** The first message of each error kind that occurred. */
  firstErrorMessages(): Record<string, string> {
    const out: Record<string, string> = {};
    ERROR_KINDS.forEach((kind, i) => {
      const message = this.errorMessages[i];
      if (message !== null && message !== undefined) out[kind] = message;
    });
    return out;
  }
}

export const ERROR_CONNECT = 0;
export const ERROR_RESET = 1;
export const ERROR_TIMEOUT = 2;
export const ERROR_PARSE = 3;
export const ERROR_CLOSED = 4;
export const ERROR_OTHER = 5;
export const ERROR_BODY = 6;
export const ERROR_REFUSED = 7;
export const ERROR_STREAM = 8;
export const ERROR_GRPC = 9;
