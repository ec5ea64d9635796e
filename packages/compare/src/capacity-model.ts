// The capacity search's record, as types (see measure/capacity.ts); re-exported by model.ts.

/** One step of a capacity search: a short open-model window at `rate` (see measure/capacity.ts). */
export interface CapacityStep {
  rate: number;
  requestsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  /** Failed requests over all requests, 0..1. */
  errorRate: number;
  /** The rate was served and the SLO met. */
  met: boolean;
}

/**
 * One step at twice base's capacity (the same rate for both sides): what a server still serves
 * well when offered more than it can take — where load shedding (503 + Retry-After) shows.
 */
export interface OverloadStep {
  rate: number;
  /** Successful answers (2xx) within the SLO's latency target, per second. */
  goodput: number;
  requestsPerSecond: number;
  p99: number;
  /** Failed requests (errors and non-2xx: the shed ones among them) over all, 0..1. */
  errorRate: number;
}

/** The capacity at a scenario's SLO one side showed in one round. */
export interface CapacitySearch {
  /** The SLO, as its canonical text (settings/slo.ts). */
  slo: string;
  /** The highest rate that met it, req/s; null: below the lowest rate tried. */
  capacity: number | null;
  steps: CapacityStep[];
  /** The step at twice base's capacity after the search. */
  overload?: OverloadStep;
}
