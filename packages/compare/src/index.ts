// The public API of @hotpath/compare. Everything else is internal.

export type {
  Report,
  ReportSettings,
  RoundRow,
  ScenarioReport,
  SideInfo,
  SourceLinks,
} from './analyse/analyse.js';
export { analyse, roundPairs } from './analyse/analyse.js';
export type { Diagnosis, Finding, SideHealth } from './analyse/diagnosis.js';
export type { HotFunction, HotFunctionDiff } from './analyse/hot-functions.js';
export {
  compareSamples,
  type Difference,
  differenceOfMeans,
  type MetricComparison,
} from './analyse/statistics.js';
export type { MetricName, MetricStatus, MetricVerdict } from './analyse/verdict.js';
export {
  type CompareOptions,
  type CompareRuntime,
  type ComparisonOutcome,
  compare,
  type MeasuredSides,
  type ProgressEvent,
  probePath,
  type RunOptions,
  runComparison,
  runMeasurements,
} from './compare.js';
export { ERROR_CODES, type ErrorCode, HotpathCompareError, type Side } from './errors.js';
export { allowlistedEnvironment, untrustedEnvironment } from './measure/environment.js';
export { runCommand } from './measure/process-group.js';
export { type WrittenFiles, writeReportFiles } from './render/files.js';
export {
  COMMENT_MARKER,
  codeSpan,
  commentMarker,
  escapeText,
  MAX_COMMENT_LENGTH,
  renderMarkdown,
} from './render/markdown.js';
export { renderTerminal } from './render/terminal.js';
export {
  findResults,
  mergeShards,
  RESULTS_FILE,
  readShard,
  type ShardResults,
  writeResults,
} from './results/results.js';
export { parseShard, type ShardId, shardFolder } from './results/shard.js';
export { CONFIG_NAMES, findConfig, loadConfig } from './settings/config-file.js';
export { parseDuration } from './settings/duration.js';
export { configJsonSchema } from './settings/json-schema.js';
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
export { flagOf, inputOf, SETTINGS, type SettingSpec } from './settings/table.js';
