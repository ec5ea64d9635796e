// The public API of @hotpath/compare: the pipeline's stages and their artifacts.
//   compare(options)            measure → report → report files, in one call (for tests)
//   measure(settings, runtime)  → Shard        base and head under load in interleaved rounds
//   report(shards, rules)       → Report       statistics, verdict, hot functions (pure)
//   render(report)              → text forms   summary, terminal, markdown, JSON (pure)
// Everything else is internal; what only the Action needs is in '@hotpath/compare/internal'.

export { type CompareOptions, compare } from './compare.js';
export { ERROR_CODES, type ErrorCode, HotpathCompareError } from './errors.js';
export { type MeasureRuntime, measure, type ProgressEvent } from './measure/measure.js';
export type {
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
} from './model.js';
export { type WrittenFiles, writeReport } from './render/files.js';
export type { MarkdownOptions } from './render/markdown.js';
export { type RenderOptions, render } from './render/render.js';
export { report } from './report/report.js';
export type { ReportRules } from './report/shards.js';
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
