import { randomBytes } from 'node:crypto';
import { printable } from '@hotpath/compare/internal';

/**
 * Runs `work` with workflow commands switched off in the log (`::stop-commands::<token>`), so
 * nothing printed meanwhile — server and command output, function names, progress lines with
 * commands from the pull request — can issue a workflow command. The token is random per call and
 * printed only by hotpath, so the PR's code cannot end the window early by guessing it.
 */
export async function withCommandsStopped<T>(
  write: (line: string) => void,
  work: () => Promise<T>,
): Promise<T> {
  const token = `hotpath-${randomBytes(16).toString('hex')}`;
  write(`::stop-commands::${token}`);
  try {
    return await work();
  } finally {
    write(`::${token}::`);
  }
}

/**
 * One line of PR-controlled text for the log: every control character escaped as compare's
 * printable() writes it (line breaks, terminal escapes, C1, U+2028/2029, bidi overrides), and no
 * `::` that could start a workflow command.
 */
export function logSafe(text: string): string {
  return printable(text).replace(/::/g, ': :');
}

/**
 * Splits a stream of output chunks into lines and writes each through logSafe (for output of
 * code from the pull request). Call the returned `end` once the stream is done.
 */
export function safeLines(write: (line: string) => void): { push(chunk: Buffer): void; end(): void } {
  let partial = '';
  return {
    push(chunk) {
      const lines = (partial + chunk.toString()).split(/\r?\n/);
      partial = lines.pop() ?? '';
      for (const line of lines) write(logSafe(line));
      if (partial.length > 4096) {
        write(logSafe(partial));
        partial = '';
      }
    },
    end() {
      if (partial !== '') write(logSafe(partial));
      partial = '';
    },
  };
}
