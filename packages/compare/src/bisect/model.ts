// What a bisect search is made of and ends in: its steps (each a paired comparison of a probe
// against the good side), its conclusion, and the culprit's own comparison in brief. This is the
// shape of the search's report.json (`hotpath-bisect/1`) and of `hotpath bisect --json`.
import type { ScenarioPoint } from '../drift/history.js';
import type { Outcome } from '../model.js';
import type { RangeCommit } from './range.js';

export const BISECT_SCHEMA = 'hotpath-bisect/1' as const;

/** The change that decided a comparison: its worst verdict metric. */
export interface StepChange {
  scenario: string;
  metric: string;
  unit: string;
  better: 'higher' | 'lower';
  /** Relative change probe vs good (a rate's: its points; retained bytes: bytes). */
  change: number;
  /** Its interval at the report's level; null with fewer than two pairs. */
  ci: [number, number] | null;
}

export interface BisectStep {
  /** 1-based, in the order measured. */
  step: number;
  /** The good side (base) and the probe (head). */
  good: string;
  probe: string;
  /** Their positions in `commits` (0 is --good). */
  goodIndex: number;
  probeIndex: number;
  /** The comparison's outcome; `unbuildable` when the probe could not be installed, built or started. */
  outcome: Outcome | 'unbuildable';
  /** What the search took from it: the probe is bad, good, skipped, or the step stays undecided. */
  verdict: 'bad' | 'good' | 'skip' | 'undecided';
  /** Round pairs measured (every measurement of the step merged). */
  pairs: number;
  /** Measurements merged: 2 when an inconclusive step was measured again. */
  measurements: number;
  change: StepChange | null;
  seconds: number;
  /** The culprit's own comparison (the culprit against its first parent). */
  culpritCheck: boolean;
  /**
   * The first step that showed a change: its `change` is the step S every later step is placed by
   * (the steps before it were placed by the verdict: no change beyond the threshold).
   */
  setsStep?: boolean;
  /** Why the probe was skipped (the install, build or start error), printable. */
  reason?: string;
  /**
   * `half-step`: the probe's interval of the step's metric lay wholly on one side of half the
   * step S (each side a one-sided bound at 2.5 %, times the look's share).
   */
  decidedBy?: 'half-step';
}

export type BisectConclusion = 'culprit' | 'no-culprit' | 'range';

export interface BisectSearch {
  schema: typeof BISECT_SCHEMA;
  /** --good first, --bad last, first-parent history between. */
  commits: RangeCommit[];
  threshold: number;
  conclusion: BisectConclusion;
  /** The commit that made the change (conclusion culprit). */
  culprit: (RangeCommit & { change: StepChange | null; pairs: number; scenarios: ScenarioPoint[] }) | null;
  /** The smallest range the search could narrow to: after `from` (good), up to `to` (bad). */
  range: { from: string; to: string; commits: string[] };
  /** Why the search ended where it did, for people. */
  why: string;
  skipped: { sha: string; subject: string; reason: string }[];
  steps: BisectStep[];
  comparisons: number;
  pairs: number;
  seconds: number;
}
