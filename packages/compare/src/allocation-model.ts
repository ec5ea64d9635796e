// The allocation types of the model (model.ts re-exports them): what the sampling heap profiler
// saw in one measured window, and the report's diff of the bytes each function allocates per
// request, base → head.

/** One function that allocated in a window's sampled allocation profile. */
export interface AllocationFunction {
  name: string;
  /** Script path (checkout-relative once measured; `hotpath:probe` for the probe's own frames). */
  file: string;
  /** 1-based line and column of the function, 0 when unknown. */
  line: number;
  column: number;
  /** Bytes the samples taken in this function itself stand for (V8's estimate of what it allocated). */
  selfBytes: number;
}

/**
 * What V8's sampling heap profiler saw during one measured window (all processes of the window
 * merged), objects collected before its end included.
 */
export interface AllocationProfile {
  /** The mean bytes between two samples the profiler ran with. */
  samplingInterval: number;
  /** Bytes all samples stand for (the sum of every function's selfBytes). */
  sampledBytes: number;
  /** Sorted by selfBytes, largest first. */
  functions: AllocationFunction[];
  /** Distinct allocating stacks (indices into functions, outermost first) and the bytes they stand for. */
  stacks: { frames: number[]; bytes: number }[];
}

/**
 * What the sampling heap profiler found still alive after a load (all processes of one scenario
 * merged): run without keeping the samples of collected objects through a load as long as the
 * warm-up after the first round's window, to a full collection.
 */
export interface SurvivorProfile {
  /** Requests that load sent (the survivors' bytes are per request of it; the name is the warm-up's, which it once was). */
  warmupRequests: number;
  /** The samples of objects allocated in that load and alive after a full collection. */
  profile: AllocationProfile;
}

/**
 * One function's allocated bytes per request, base → head (in a survivors diff: bytes still alive
 * after the warm-up per warm-up request).
 */
export interface AllocationRow {
  name: string;
  file: string;
  /** 1-based line in head (base when the function allocates in base only). */
  line: number;
  /**
   * Bytes allocated per request in the function itself, mean over each side's rounds: its share of
   * the sampled bytes times the round's allocated bytes per request (the sampled bytes over the
   * requests where the round has no memory edges).
   */
  base: number;
  head: number;
  /** head − base, bytes per request. */
  change: number;
  /** Paired interval of the per-pair change (bytes per request), with two pairs or more. */
  ci?: [number, number];
  /**
   * Where the row was seen: only in head ('new'), only in base ('vanished'), or on both sides
   * ('changed', whether or not its figures moved: its interval says that).
   */
  status: 'new' | 'vanished' | 'changed';
}

/** Which functions allocate more per request, base → head (shown, not part of the verdict). */
export interface AllocationDiff {
  /** The functions with the largest |change|, largest first (hotpath's probe left out). */
  rows: AllocationRow[];
  /** Bytes allocated per request over all functions, mean over each side's rounds. */
  baseTotal: number;
  headTotal: number;
  /** Round pairs whose both rounds had an allocation profile (the interval's pairs). */
  pairs: number;
  /** Rounds with an allocation profile, per side. */
  rounds: { base: number; head: number };
}
