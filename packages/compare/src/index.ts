// The public API of @hotpath/compare: the run layer, the pipeline's stages and their artifacts.
//   compare(options)            measure → report → report files, in one call (for tests)
//   runCompare, runReport, runMeasure, runProfile, runDrift, runHistory
//                               the run layer: each stage put together once, returning the
//                               report, the files, the outputs and one fail decision (what the
//                               CLI and the Action call)
//   measure(settings, runtime)  → Shard        base and head under load in interleaved rounds
//   report(shards, rules)       → Report       statistics, verdict, hot functions (pure)
//   render(report)              → text forms   summary, terminal, markdown, JSON (pure)
// Everything else is internal; what only the Action needs is in '@hotpath/compare/internal'.

export type { BisectSearch, BisectStep, StepChange } from './bisect/model.js';
export { type BisectOptions, bisect, type CompareOptions, compare } from './compare.js';
export { ERROR_CODES, type ErrorCode, HotpathCompareError } from './errors.js';
export { type MeasureRuntime, measure, type ProgressEvent } from './measure/measure.js';
export type {
  AllocationDiff,
  AllocationFunction,
  AllocationProfile,
  AllocationRow,
  CapacitySearch,
  CapacityStep,
  Diagnosis,
  Finding,
  HotFunction,
  HotFunctionDiff,
  InconclusiveReason,
  Look,
  Machine,
  Measurements,
  MetricName,
  MetricVerdict,
  Outcome,
  OverloadStep,
  Report,
  ReportSettings,
  RoundResult,
  RoundRow,
  RoundsStop,
  ScenarioReport,
  Shard,
  ShardId,
  Side,
  SideHealth,
  SideInfo,
  SourceLinks,
  SurvivorProfile,
} from './model.js';
export type { MarkdownOptions } from './render/markdown.js';
export { type RenderOptions, render } from './render/render.js';
export { report } from './report/report.js';
export type { ReportRules } from './report/shards.js';
export { type BisectResult, type BisectRunOptions, runBisect } from './run/bisect.js';
export {
  type CompareRunOptions,
  type MeasureOptions,
  type MeasureRun,
  type ReportRunOptions,
  runCompare,
  runMeasure,
  runReport,
} from './run/compare.js';
export {
  type DriftMeasureOptions,
  type DriftRecordOptions,
  type DriftResult,
  type DriftRunOptions,
  type HistoryStore,
  historyFile,
  runDrift,
  runDriftMeasure,
  runDriftRecord,
  runHistory,
} from './run/drift.js';
export type { RunOutputs, RunResult } from './run/outputs.js';
export { type ProfileRunOptions, runProfile } from './run/profile.js';
export { writeReport } from './run/report-files.js';
export type { FailDecision, ProfileReport, ScenarioFiles, WrittenFiles } from './run-artifacts.js';
export { findConfig, loadConfig } from './settings/config-file.js';
export {
  type CompareConfig,
  type LoadConfig,
  type Profiler,
  type RequestSpec,
  resolveSettings,
  type Scenario,
  type ScenarioConfig,
  type Settings,
} from './settings/schema.js';
export { readShards, writeShard } from './shard/file.js';
export { parseShard } from './shard/id.js';
export type { StopQuestion } from './verdict/sequential.js';
