/** Stable error codes of @hotpath/action; each one is documented in the package README. */
export const ERROR_CODES = {
  HP_ACTION_INVALID_INPUT: 'an input or CLI flag has a value outside what is accepted',
  HP_ACTION_SERVER_EXITED: 'the server command exited before it accepted connections',
  HP_ACTION_SERVER_NOT_READY: 'the server did not accept connections within ready-timeout',
  HP_ACTION_SERVER_ERRORS: 'the server answered no request successfully during the measured window',
  HP_ACTION_SETUP_FAILED: 'setup-command exited non-zero',
  HP_ACTION_COMMAND_FAILED: 'an install or build command exited non-zero',
  HP_ACTION_PROF_NEEDS_NODE: 'profiler "prof" needs a start command that runs node directly',
  HP_ACTION_GIT: 'a git command failed (worktree, rev-parse, fetch)',
  HP_ACTION_BASE_NOT_FOUND: 'the base commit is not in the clone and could not be fetched',
  HP_ACTION_NO_PULL_REQUEST: 'the Action ran on an event without a pull request',
  HP_ACTION_LOAD_FAILED: 'the load generator failed',
  HP_ACTION_GITHUB_API: 'a GitHub REST call failed (other than a read-only token)',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export type Side = 'base' | 'head';

/** Base class of every error this package throws on purpose. */
export class HotpathActionError extends Error {
  readonly code: ErrorCode;
  /** Which server the error is about, when it is about one. */
  readonly side?: Side;

  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown; side?: Side }) {
    super(message ?? ERROR_CODES[code], options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HotpathActionError';
    this.code = code;
    this.side = options?.side;
  }
}

/** Formats the last lines of a process's output for an error message. */
export function formatTail(lines: readonly string[]): string {
  if (lines.length === 0) return '(the server printed nothing)';
  return lines.map((line) => `  | ${line}`).join('\n');
}
