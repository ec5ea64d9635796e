export { type ArtifactUpload, artifactName, uploadReportArtifact } from './artifact-upload.js';
export { ERROR_CODES, type ErrorCode, HotpathActionError } from './errors.js';
export {
  type CommentResult,
  type CommentsApi,
  isReadOnlyTokenError,
  type PullRequest,
  pullRequestFromEvent,
  upsertStickyComment,
} from './github.js';
export { ACTION_INPUTS, allInputNames, settingInputs } from './inputs.js';
