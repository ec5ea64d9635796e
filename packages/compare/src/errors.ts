import { createErrorClass } from './error-class.js';
import { printable } from './printable.js';

/** Stable error codes of @hotpath/compare; each one is documented in the package README. */
export const ERROR_CODES = {
  HP_COMPARE_INVALID_SETTING:
    'a setting (CLI flag, config value, API option or Action input) has a value outside what is accepted',
  HP_COMPARE_CONFIG: 'the config file cannot be found, read or loaded',
  HP_COMPARE_SERVER_EXITED: 'the server command exited before it accepted connections',
  HP_COMPARE_SERVER_NOT_READY: 'the server did not accept connections within readyTimeout',
  HP_COMPARE_SERVER_ERRORS:
    'the server answered no request of a scenario successfully during the measured window',
  HP_COMPARE_SETUP_FAILED: 'setupCommand exited non-zero',
  HP_COMPARE_COMMAND_FAILED: 'an install or build command exited non-zero',
  HP_COMPARE_PROF_NEEDS_NODE: 'profiler "prof" needs a start command that runs node directly',
  HP_COMPARE_GIT: 'a git command failed (worktree, rev-parse, fetch)',
  HP_COMPARE_BASE_NOT_FOUND: 'the base commit is not in the clone and could not be fetched',
  HP_COMPARE_LOAD_FAILED: 'the load generator failed',
  HP_COMPARE_ABORTED: 'the comparison was aborted (AbortSignal, SIGINT or SIGTERM)',
  HP_COMPARE_STOP_FAILED:
    'a process that a round or command started was still alive after SIGTERM, the grace period, SIGKILL and the wait after it',
  HP_COMPARE_RESULTS:
    'a results folder holds no results, results that do not have the expected shape, or shards that do not fit together',
  HP_COMPARE_RESULTS_LIMIT:
    'the results to report exceed a limit of the report stage (files, bytes, shards, rounds per shard): the message names the limit and the value',
  HP_COMPARE_INIT_UNSAFE_PATH:
    'hotpath init refuses to write a file that is a symbolic link (dangling or not), or not a regular file, or whose path has a link in it: the message names the path; nothing is written',
  HP_COMPARE_UNSAFE_OUTPUT:
    'an output folder or file hotpath is to write is a symbolic link where a link is refused (the output folder, a file named by a flag), or a folder where a file goes: the message names the path; nothing is written through it',
  HP_COMPARE_BISECT_RANGE:
    'hotpath bisect: --good and --bad do not make a range to search (bad not after good, good not on the first-parent history of bad, or too many commits)',
  HP_COMPARE_HISTORY:
    'a drift history (file or branch) cannot be read, does not match its schema, or cannot be written',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Base class of every error this package throws on purpose. */
export class HotpathCompareError extends createErrorClass('HotpathCompareError', ERROR_CODES) {
  /** Which server the error is about, when it is about one. */
  readonly side?: 'base' | 'head';

  /**
   * `message` keeps its line breaks and has every other control character escaped (see
   * printable): messages quote keys and values of results files, server output and git's, and
   * the CLI and the Action print them as they are.
   */
  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown; side?: 'base' | 'head' }) {
    super(code, message === undefined ? undefined : printable(message, { newlines: true }), options);
    this.side = options?.side;
  }
}

/** Formats the last lines of a process's output for an error message, each line printable. */
export function formatTail(lines: readonly string[]): string {
  if (lines.length === 0) return '(the server printed nothing)';
  return lines.map((line) => `  | ${printable(line)}`).join('\n');
}
