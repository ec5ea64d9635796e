export { HotpathLoadError, LOAD_ERROR_CODES, type LoadErrorCode } from './errors.js';
export type { Tick } from './load-engine.js';
export type { MemcacheOperation, MemcacheOptions, RunOptions } from './options.js';
export { ERROR_KINDS, type ErrorKind, type LatencySummary } from './recorder.js';
export type { RequestSpec } from './request.js';
export { serializeRequest } from './request.js';
export { mergeHistograms, type RunResult, summarizeHistogram } from './result.js';
export { createRun, LoadRun, run } from './run.js';
