// @hotpath/compare/internal — not part of the public API and not under semver: what the
// GitHub Action (packages/action) and the repository's own scripts need from the engine's
// insides. Anything here may change in any release.

// The bisect modes: a search read back from another job's artifact, and as Markdown.
export { BISECT_FILE, type BisectSummary, readBisectSearch } from './bisect/read.js';
// The drift mode (history, change points, trend, issue): the Action's drift mode.
export { analyseSeries, type DriftAnalysis, type DriftStatus } from './drift/analysis.js';
export { type DriftRun, measureDrift } from './drift/drift.js';
export { currentSeries, type History, type HistoryPoint, type Reference } from './drift/history.js';
export { issueAction } from './drift/issue-action.js';
export { appendToHistoryBranch, readHistoryBranch } from './drift/store.js';
// `hotpath init`: the project's detection and the files it writes.
export { detectProject, initProject, type Project, startCommand } from './init/init.js';
export { budgetNote, installCommand, serviceImage } from './init/templates.js';
export { loadConfigInChild } from './measure/config-child.js';
export { allowlistedEnvironment } from './measure/environment.js';
export { runCommand } from './measure/process-group.js';
// Writing a file never through a link planted where it goes.
export { writeOutputFile } from './output-file.js';
// Text from a file, a server or git, with its control characters escaped for the log.
export { inert, printable } from './printable.js';
export { bisectCommentMarker, renderBisectMarkdown } from './render/bisect-markdown.js';
export { driftIssueMarker, renderDriftIssue } from './render/drift-issue.js';
export { renderTrendMarkdown, renderTrendTerminal } from './render/drift-trend.js';
export { codeSpan, commentMarker, escapeText, MAX_COMMENT_LENGTH } from './render/markdown-text.js';
export { profileJson, renderProfileText } from './render/profile-report.js';
export { type Reproduction, reproduceCommand, shellWord } from './render/reproduce.js';
export {
  commentPreamble,
  driftSummaryMarkdown,
  failureText,
  filesText,
  removedText,
} from './render/run-text.js';
// The run layer's parts only the Action needs: the results branch as a history store, and the
// throughput-change output's rule.
export { historyBranch } from './run/drift.js';
export { METRIC_OUTPUTS, metricOutput, throughputOutput } from './run/outputs.js';
export { isModuleConfig, readJsonConfig } from './settings/config-file.js';
export { formatDuration, parseDuration } from './settings/duration.js';
// The options both front doors take beside the settings (config, results, shard, reference).
export {
  actionDefault,
  checkFrontDoorValue,
  cliDefault,
  type DoorDefaults,
  FRONT_DOOR_OPTIONS,
  type FrontDoorName,
  type FrontDoorOption,
  frontDoorOption,
  frontDoorText,
} from './settings/front-door.js';
export { configJsonSchema } from './settings/json-schema.js';
export { isReporterKey, REPORTER_KEYS } from './settings/reporter-keys.js';
export { canonicalSlo, describeSlo, parseSlo, type SloTargets } from './settings/slo.js';
export { flagOf, inputOf, SETTINGS, type SettingSpec, settingDefault } from './settings/table.js';
