export { parseCpuProfile } from './cpuprofile.js';
export type { DiffOptions, FunctionDiff, ProfileDiff } from './diff.js';
export { diffProfiles } from './diff.js';
export type { TicksErrorCode } from './errors.js';
export { ERROR_CODES, HotpathTicksError } from './errors.js';
export { foldedFrameName, toFolded } from './folded.js';
export { crossProfileKey, functionLabel } from './function-label.js';
export { mergeProfiles } from './merge.js';
export type { FunctionEntry, FunctionKind, Profile, ProfileMeta, StackSample } from './model.js';
