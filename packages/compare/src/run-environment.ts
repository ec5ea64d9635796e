// Where and how a shard was measured: the machine, the CPU placement, the load level chosen and
// how its rounds ended.
// Types only, like model.ts.

/** The machine a shard was measured on (never the machine that reports, when they differ). */
export interface Machine {
  /** Node that ran hotpath's rounds (the load generator and the probe's control). */
  node: string;
  platform: string;
  cpus: number;
  cpuModel: string;
  /** The runner's name where the CI gives one (GitHub: RUNNER_NAME), else the host name. */
  name?: string;
}

/** The connections chosen for a scenario with connections: auto, and the steps that chose it. */
export interface LoadLevel {
  scenario: string;
  connections: number;
  /**
   * plateau: the smallest count at which base's throughput (and head's, when searched) reached
   * its plateau; fixed-rate: the open model's pool.
   */
  reason: 'plateau' | 'fixed-rate';
  steps: { connections: number; requestsPerSecond: number }[];
  /** Head's steps (a comparison searches both sides: a head that serves more in parallel needs more). */
  headSteps?: { connections: number; requestsPerSecond: number }[];
}

/**
 * A rate given as a share of base's capacity ("70%"): the capacity measured on base's server
 * before the rounds, and the rate both sides were then loaded at in every round.
 */
export interface RateLevel {
  scenario: string;
  /** The share asked for, in percent. */
  share: number;
  /**
   * Base's capacity at a fixed rate: the highest rate its server held (served 97 % of) in the
   * open-model steps, which start from half the closed model's capacity.
   */
  capacity: number;
  /** The rate held for both sides: share × capacity, in req/s. */
  rate: number;
  /** The closed-model steps (connections → requests/s). */
  steps: { connections: number; requestsPerSecond: number }[];
  /** The open-model steps (rate asked → requests/s served). */
  openSteps?: { rate: number; requestsPerSecond: number }[];
}

/** CPU placement of a shard's rounds: the servers' CPUs and the load generator's (with hotpath). */
export interface Placement {
  server: number[];
  load: number[];
  /**
   * Set when the servers were given every CPU: a side's parallel work (threads and processes
   * beyond its busiest event loop) did `share` of its CPU in the first round (that round was then
   * measured again) or, `at: 'load-level'`, in the connections: auto search (which then ran
   * again), and one CPU would have kept it from running in parallel.
   */
  widened?: { side: 'base' | 'head'; share: number; from: number[]; at?: 'load-level' };
}

/** One look at the data in `rounds: auto`: the pairs so far and the share of alpha it spent. */
export interface Look {
  pairs: number;
  /** Share of each test's alpha this look's intervals use (0..1; the looks' shares sum to ≤ 1). */
  alphaShare: number;
}

/** Why the rounds ended. */
export interface RoundsStop {
  rounds: 'fixed' | 'auto';
  /** fixed: the set count ran; conclusive: every verdict metric had an outcome; budgets. */
  reason: 'fixed' | 'conclusive' | 'max-time' | 'max-rounds';
  /** Looks taken (rounds: auto), in order; the last decided. */
  looks: Look[];
}
