import { createErrorClass } from './error-class.js';

/** Stable error codes of the Action's GitHub edge; each one is documented in the package README. */
export const ERROR_CODES = {
  HP_ACTION_INVALID_INPUT:
    'an input of the Action itself (mode, shard, comment, ...) has a value outside what is accepted',
  HP_ACTION_PULL_REQUEST_TARGET:
    'mode measure or all on pull_request_target without allow-pull-request-target: true',
  HP_ACTION_NO_PULL_REQUEST: 'the Action ran on an event without a pull request',
  HP_ACTION_GITHUB_API: 'a GitHub REST call failed (other than a read-only token)',
  HP_ACTION_GIT: 'a git command of the Action failed',
  HP_ACTION_CONFIG_NOT_JSON:
    'mode report was given a JavaScript config file; it reads JSON only (it runs no code of the repository)',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Base class of every error the Action's edge throws on purpose. */
export class HotpathActionError extends createErrorClass('HotpathActionError', ERROR_CODES) {}
