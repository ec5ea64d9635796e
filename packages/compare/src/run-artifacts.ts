// The artifacts a run hands its front door besides the Report: `hotpath profile`'s report, the
// files written, and the fail decision. Types only, like model.ts.
import type { Profile, ReportSettings, RoundMetrics, SideHealth } from './model.js';

/** What `hotpath profile` found on one side: load per round, hottest functions, event loop. */
export interface ProfileReport {
  schema: 'hotpath-profile/1';
  rounds: (RoundMetrics & { round: number; scenario: string })[];
  profilers: string[];
  topFunctions: { name: string; file: string; line: number; kind: string; share: number }[];
  eventLoop?: SideHealth;
  warnings: string[];
  settings: ReportSettings;
  /** Merged over every round and scenario (not in profile.json). */
  profile?: Profile;
}

/** The profile files of one scenario. */
export interface ScenarioFiles {
  scenario: string;
  folded: { base?: string; head?: string };
  flameGraph?: string;
  diffFlameGraph?: string;
}

export interface WrittenFiles {
  dir: string;
  report: string;
  markdown: string;
  /** report.html: charts and interactive flame graphs in one self-contained page. */
  html?: string;
  scenarios: ScenarioFiles[];
  notes: string[];
}

/** Whether a run fails (a non-zero exit, a failed step), and why (verdict/policy.ts decides). */
export type FailDecision =
  | { failed: false }
  | { failed: true; reason: 'regressed' | 'inconclusive' | 'drift-confirmed' };
