export { type WrittenFiles, writeArtifacts } from './artifacts.js';
export {
  addWorktree,
  defaultBase,
  detectInstall,
  ensureCommit,
  type InstallPlan,
  installPlan,
  removeWorktree,
  resolveCommit,
} from './checkout.js';
export { type ComparisonPlan, interleave, type Measurements, measure, measureOne } from './compare.js';
export { type Diagnosis, diagnose, type Finding, type SideHealth } from './diagnosis.js';
export { type CompareOutcome, type CompareRequest, compare, probePath } from './engine.js';
export { untrustedEnvironment, withProbePreloaded } from './environment.js';
export { ERROR_CODES, type ErrorCode, HotpathActionError, type Side } from './errors.js';
export {
  type CommentResult,
  type CommentsApi,
  type PullRequest,
  pullRequestFromEvent,
  upsertStickyComment,
} from './github.js';
export { diffHotFunctions, type HotFunction, type HotFunctionDiff } from './hot-functions.js';
export { type LoadResult, runLoad } from './load.js';
export { COMMENT_MARKER, renderMarkdown } from './markdown.js';
export { INPUT_NAMES, type InputName, parseSettings, type RawInputs, type Settings } from './options.js';
export { SHELL } from './process-group.js';
export { analyse, type Report, roundMetrics } from './report.js';
export { type RoundContext, type RoundResult, runRound, type ServerSpec, targetUrl } from './round.js';
export type { MetricComparison } from './statistics.js';
export { compareSamples, type Difference, differenceOfMeans, tQuantile975 } from './statistics.js';
export { renderTerminal } from './terminal.js';
export { judgeMetrics, type MetricVerdict, type RoundMetrics } from './verdict.js';
