// The artifacts of the pipeline, as types: what measure() makes (a Shard of rounds), what
// report() makes of shards (a Report), and the parts both carry. No behaviour lives here; every
// stage imports its input and output types from this one module.
import type { Profile } from '@hotpath/tick-parser';
import type { MetricName, Scenario, Settings } from './settings/schema.js';

export type {
  AllocationDiff,
  AllocationFunction,
  AllocationProfile,
  AllocationRow,
  SurvivorProfile,
} from './allocation-model.js';
export type {
  DownstreamDiff,
  DownstreamEndpoint,
  DownstreamEndpointRow,
  DownstreamFunction,
  DownstreamStack,
  DownstreamWindow,
  WaitingFunctionRow,
} from './downstream-model.js';
export type { Diagnosis, Finding, SideHealth } from './health-model.js';
export type {
  CapacitySearch,
  CapacityStep,
  LoadResult,
  MemoryWindow,
  MonitorSummary,
  OverloadStep,
  RoundData,
  SideMemory,
} from './round-data.js';
export type { LoadLevel, Look, Machine, Placement, RateLevel, RoundsStop } from './run-environment.js';
export type { MetricName, Profile };

import type { AllocationDiff, AllocationProfile, SurvivorProfile } from './allocation-model.js';
import type { DownstreamDiff } from './downstream-model.js';
import type { Diagnosis } from './health-model.js';
import type { CapacitySearch, LoadResult, MonitorSummary } from './round-data.js';
import type { LoadLevel, Machine, Placement, RateLevel, RoundsStop } from './run-environment.js';

/** base: the reference (the PR's base branch); head: the change. */
export type Side = 'base' | 'head';

/** What one side ran: the start command, and ref/sha when known. */
export interface SideInfo {
  command: string;
  cwd: string;
  ref?: string;
  sha?: string;
}

/** Where a report's source links point (head's commit on GitHub). */
export interface SourceLinks {
  /** e.g. https://github.com/owner/repo */
  repositoryUrl: string;
  sha: string;
}

// ── measure: rounds ────────────────────────────────────────────────────────────────────────

/** What one scenario measured in one round of one side. */
export interface ScenarioRound {
  scenario: string;
  load: LoadResult;
  profile?: Profile;
  /** What the sampling heap profiler saw during the window (absent with memory: off). */
  allocations?: AllocationProfile;
  /** What the warm-up allocated that was still alive when the window opened (with memory on). */
  survivors?: SurvivorProfile;
  monitors: MonitorSummary[];
  /** Profiler that ran in each server process for this window. */
  profilers: string[];
  /**
   * What other processes used the machine during the measured window, in cores (all CPU time
   * minus the servers' and hotpath's own, over the window; steal time counted), where the
   * platform tells (Linux).
   */
  otherLoad?: number;
  /** The capacity search after the window (a scenario with `slo`). */
  capacity?: CapacitySearch;
  /** Each slice's length when the window was measured in slices, s (≥ `slice`); absent for a whole window. */
  sliceSeconds?: number;
  /**
   * Requests between the window's opening collection and its start (the warm-up's last second, see
   * settleSeconds): its retained bytes are over these and the window's requests.
   */
  settleRequests?: number;
}

/** Everything one round (one server start) of one side measured, per scenario. */
export interface RoundResult {
  side: Side;
  round: number;
  /** Which shard measured it (merged results); rounds pair within a shard. */
  shard?: number;
  scenarios: ScenarioRound[];
  /** Server processes that the probe attached to. */
  pids: number[];
  /** Node version of the server process, as its probe reported it. */
  serverNode?: string;
  warnings: string[];
}

/** Raw measurements of a whole comparison, before any statistics. */
export interface Measurements {
  base: RoundResult[];
  head: RoundResult[];
  /** Order the rounds ran in, e.g. ['base', 'head', 'base', 'head']. */
  order: Side[];
  /** Scenario names, in the order each round measures them. */
  scenarios: string[];
  startedAt: string;
  finishedAt: string;
  /** How the rounds ended: a fixed count, or (rounds: auto) the looks taken and why they stopped. */
  stop?: RoundsStop;
}

/** Which part of a matrix of measuring jobs this is: `1/4` is the first of four. */
export interface ShardId {
  index: number;
  total: number;
}

/** What measure() makes: one job's rounds, with what it ran, how and where. */
export interface Shard {
  shard: ShardId;
  sides: Record<Side, SideInfo>;
  settings: Settings;
  measurements: Measurements;
  /** The machine that measured it. */
  machine: Machine;
  warnings: string[];
  /** Where it was read from (report mode). */
  path?: string;
  /** The load level chosen for each scenario with connections: auto (held for both sides). */
  loadLevels?: LoadLevel[];
  /** Each rate given as a share of base's capacity: the capacity measured and the rate held. */
  rateLevels?: RateLevel[];
  /** Where the processes ran: the servers' CPUs and the load generator's (when placed). */
  placement?: Placement;
}

// ── report: statistics and verdict ────────────────────────────────────────────────────────

/**
 * Per-round numbers of one side, in the order the rounds ran: every metric of the catalogue
 * (settings/metrics.ts, each with its value's meaning; NaN where the round did not measure it),
 * and what the per-request figures divide by.
 */
export type RoundMetrics = Record<MetricName, number> & {
  /** Requests served in the window (what the per-request memory metrics divide by). */
  requests?: number;
  /**
   * What retained bytes per request divides by where it is more than `requests`: the window's and
   * its settle load's (between the opening collection and the window).
   */
  retainedOver?: number;
  /** Other processes' load on the machine during the window, in cores (see ScenarioRound). */
  otherLoad?: number;
};

/**
 * What a metric, a scenario or a run was shown to be (report.json's `outcome`, a contract):
 * - regressed: worse beyond the margin, and the interval excludes zero;
 * - improved: the mirror;
 * - unchanged: both one-sided bounds (at the equivalence level) within the margin — shown to have
 *   moved by at most the margin either way;
 * - not-worse: the bound on the worse side within the margin, the other beyond it — shown to be
 *   no worse than the margin, though it may be better by more (what a pull-request gate needs);
 * - inconclusive: none of these — the noise is too large for the margin.
 * A scenario or run takes the first of regressed, inconclusive, improved, not-worse, unchanged
 * that any of its parts has.
 */
export type Outcome = 'regressed' | 'unchanged' | 'not-worse' | 'improved' | 'inconclusive';

/** Every outcome, in the order a scenario or run takes them from its parts. */
export const OUTCOMES = ['regressed', 'inconclusive', 'improved', 'not-worse', 'unchanged'] as const;

/** Why a metric is inconclusive: too few pairs, pairs spoiled by other load, or noise. */
export type InconclusiveReason = 'too-few-pairs' | 'spoiled' | 'noise';

export interface MetricVerdict {
  metric: MetricName;
  unit: string;
  /** Which direction is good. */
  better: 'higher' | 'lower';
  base: number;
  head: number;
  /**
   * Relative change (head - base) / base; for rates (errors, utilisation) the change in rate; for
   * retained bytes per request (an `absolute` metric) the change in bytes.
   */
  change: number;
  /** Interval of `change` (level 1 − alpha, corrected for the tests in the run); null: none. */
  ci: [number, number] | null;
  /**
   * The worst change the run still allows, in the unit of `change`: the one-sided bound on the
   * worse side at the equivalence level (statistics.equivalenceAlpha). `unchanged` means it lies
   * within the threshold. Null with fewer than two pairs.
   */
  worstCase: number | null;
  /**
   * The mirror of worstCase: the one-sided bound on the better side, in the unit of `change`.
   * `unchanged` needs it within the margin too; beyond it, the metric is `not-worse`. Null with
   * fewer than two pairs; absent from reports before report schema 6.
   */
  bestCase?: number | null;
  significant: boolean;
  outcome: Outcome;
  /** Set when inconclusive. */
  reason?: InconclusiveReason;
  /**
   * The smallest change this run could have detected (at its alpha, 80 % power, from the pairs'
   * spread), in the unit of `change`; null with fewer than two pairs.
   */
  detectable: number | null;
  /** The metric can make the run regress (the `metrics` setting); otherwise it is shown only. */
  inVerdict: boolean;
  /** Round pairs the interval is built on. */
  pairs: number;
  /** Pairs left out because other load on the machine differed between their rounds. */
  excluded: number;
  /**
   * The change that counts, in the unit of `change`: the threshold as a fraction, a rate's
   * points, or the bytes per request of retainedThreshold. Absent from reports before it was kept.
   */
  margin?: number;
}

export interface HotFunction {
  name: string;
  file: string;
  kind: string;
  /** 1-based line in head (base when the function vanished). */
  line: number;
  /** Self-time share, 0..1. */
  baseShare: number;
  headShare: number;
  /** headShare - baseShare (0..1; 0.05 = 5 percentage points). */
  delta: number;
  /**
   * Main-thread CPU time per request spent in this function itself (µs): its self samples over
   * the non-idle samples times the main thread's CPU per request. Unlike a share, it cannot
   * grow because another function got faster. Undefined without per-thread CPU times.
   */
  baseCost?: number;
  headCost?: number;
  /** Interval of the per-pair change of the cost per request (µs), with two pairs or more. */
  costCi?: [number, number];
  /** 'changed': on both sides, moved or not (its interval says); 'new': head only; 'vanished': base only. */
  status: 'new' | 'vanished' | 'changed';
  /** Rank by self time among head's functions (1 = hottest), 0 when absent. */
  headRank: number;
  /** For native frames without a source file: the JS function that called it most. */
  caller?: { name: string; file: string; line: number };
  flagged: boolean;
  reason?: 'grew' | 'new-in-top-10';
  /** Interval of the per-round-pair growth of the share (when there are two pairs or more). */
  ci?: [number, number];
  /** The interval excludes zero: more than sampling noise. */
  significant?: boolean;
}

export interface HotFunctionDiff {
  /** Top 10 by |Δ| (bookkeeping entries such as (idle) and (program) left out). */
  rows: HotFunction[];
  /** Every flagged function (a subset of what rows would show without the cut). */
  flagged: HotFunction[];
  baseTotal: number;
  headTotal: number;
}

export interface RoundRow extends RoundMetrics, Pick<ScenarioRound, 'sliceSeconds'> {
  side: Side;
  round: number;
  /** The shard that measured it (1 without a matrix). */
  shard: number;
  requests: number;
  errors: number;
  non2xx: number;
  profilers: string[];
  /** The round's capacity search, each step's rate and what it served (a scenario with `slo`). */
  capacitySearch?: CapacitySearch;
}

/** The verdict and details of one scenario. */
export interface ScenarioReport {
  name: string;
  /** What the scenario loads: `GET /path`, or the requests in turn. */
  target: string;
  outcome: Outcome;
  regressed: boolean;
  improved: boolean;
  /** Base/head round pairs the statistics are built on (all shards). */
  pairs: number;
  metrics: MetricVerdict[];
  /**
   * Relative change of requests per second, head vs base, as a fraction (-0.1 = −10 %); 0 when
   * requests/s has no round pair to tell it from (its metric's `pairs` is 0: every pair spoiled
   * by other load), so read that metric before taking 0 for "unchanged".
   */
  throughputChange: number;
  hotFunctions?: HotFunctionDiff;
  /** Which functions allocate more bytes per request (both sides need allocation profiles). */
  allocations?: AllocationDiff;
  /** Which functions made the bytes still alive after a load (see SurvivorProfile), per request of it (shown only). */
  survivors?: AllocationDiff;
  /** What the requests waited for: downstream calls by endpoint and by the function that made them. */
  downstream?: DownstreamDiff;
  /** A significant growth of a function decided the verdict (failOn functions or both). */
  functionsRegressed: boolean;
  diagnosis: Diagnosis;
  rounds: RoundRow[];
  /**
   * The profile of each side merged over its rounds (folded stacks, flame graphs). Not part of
   * report.json (render leaves it out): it is as large as the profiles.
   */
  profiles: { base?: Profile; head?: Profile };
  /**
   * Each side's allocation profiles merged over its rounds, a stack's count its bytes allocated
   * per request (the allocation flame graphs). Not part of report.json either.
   */
  allocationProfiles: { base?: Profile; head?: Profile };
  /**
   * Each side's downstream stacks merged over its rounds, a stack's count its waiting in µs per
   * request, its leaf the endpoint (the waiting flame graphs). Not part of report.json either.
   */
  waitingProfiles?: { base?: Profile; head?: Profile };
}

/** Settings as the report echoes them: in the table's units, headers by name, body as a flag. */
export type ReportSettings = Omit<Settings, 'scenarios'> & {
  scenarios: (Omit<Scenario, 'headers' | 'body' | 'requests'> & {
    headers: string[];
    body: boolean;
    requests?: number;
  })[];
};

/** What report() makes of one or more shards. */
export interface Report {
  /**
   * regressed if any scenario is, else inconclusive if any is, else improved if any is, else
   * unchanged.
   */
  outcome: Outcome;
  /** Some scenario regressed (outcome === 'regressed'). */
  regressed: boolean;
  /** Some scenario improved and none regressed. */
  improved: boolean;
  scenarios: ScenarioReport[];
  /**
   * The lowest throughput change over the scenarios, as a fraction (0 for a scenario whose
   * requests/s had no pair left; see ScenarioReport.throughputChange).
   */
  throughputChange: number;
  /**
   * How the intervals were made: paired log-ratios, Bonferroni over `tests` at family level 95 %;
   * with rounds: auto, each look's share of alpha (alpha spending) — `alpha` is the level the
   * shown intervals use.
   */
  statistics: {
    method: 'paired-t';
    tests: number;
    alpha: number;
    /** One-sided level of each metric's worst case, on which `unchanged` is decided. */
    equivalenceAlpha: number;
    familyLevel: number;
    power: number;
  };
  /** How the rounds ended (per shard: the first shard's; see each shard for the rest). */
  stop: RoundsStop[];
  /** Shards merged (1 without a matrix) and rounds per side over all shards. */
  shards: number;
  rounds: number;
  order: Side[];
  sides: { base: SideInfo; head: SideInfo };
  settings: ReportSettings;
  environment: {
    /** The machines that measured, one per distinct machine (shards on several runners). */
    machines: Machine[];
    /** Node running the servers (from the probe). */
    serverNode?: string;
    profilers: Record<Side, string[]>;
    /** connections: auto — the count each scenario ran at (the first shard's choice). */
    loadLevels?: LoadLevel[];
    /** rate: "N%" — base's capacity and the rate it made, per scenario (the first shard's). */
    rateLevels?: RateLevel[];
    /** The CPUs of the servers and of the load generator (the first shard's), when placed. */
    placement?: Placement;
  };
  links?: SourceLinks;
  warnings: string[];
  startedAt: string;
  finishedAt: string;
}
