// How the report stage reads a file of a results folder (a results file, a profile it names):
// untrusted data an artifact brought, so never through a link. The file is looked at with lstat
// and opened with O_NOFOLLOW; a link, or a link on a profile's path inside the results folder,
// is refused; an error names the file and never quotes its bytes.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { join, relative } from 'node:path';
import { HotpathCompareError } from '../errors.js';
import { limitError, RESULTS_LIMITS } from '../limits.js';
import { printable } from '../printable.js';

const notLinked = (what: string, path: string, how: string) =>
  new HotpathCompareError(
    'HP_COMPARE_RESULTS',
    `${what} ${printable(path)} ${how}: expected a regular file (a results folder is read without following links)`,
  );

/**
 * The size of a regular file, checked against the per-file limit before anything reads it. The
 * file is looked at with lstat: a symbolic link is refused, never followed (a profile linked to a
 * credentials file would otherwise be read, and its bytes quoted in an error). With `inside`
 * (the results file's folder), a link on the path between that folder and the file is refused too.
 */
export function fileSize(path: string, what: string, inside?: string): number {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (err) {
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `${what} ${printable(path)} cannot be read: ${printable((err as Error).message)}`,
    );
  }
  if (stat.isSymbolicLink()) throw notLinked(what, path, 'is a symbolic link');
  if (!stat.isFile())
    throw new HotpathCompareError('HP_COMPARE_RESULTS', `${what} ${printable(path)} is not a regular file`);
  if (inside !== undefined) {
    let real: string | undefined;
    let expected: string | undefined;
    try {
      real = realpathSync(path);
      expected = join(realpathSync(inside), relative(inside, path));
    } catch {
      // gone meanwhile: the read below says so
    }
    if (real !== expected) throw notLinked(what, path, 'has a symbolic link on its path');
  }
  if (stat.size > RESULTS_LIMITS.fileBytes)
    throw limitError(
      `the size of ${what} ${path}`,
      `${stat.size} bytes`,
      `${RESULTS_LIMITS.fileBytes} bytes`,
    );
  return stat.size;
}

/** Open for reading, never through a link in the last component (checked once more at the read). */
const READ_NO_FOLLOW = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/** The text of a regular file, opened without following a link (one put there since the lstat). */
function readRegularFile(path: string, what: string): string {
  let fd: number;
  try {
    fd = openSync(path, READ_NO_FOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw notLinked(what, path, 'is a symbolic link');
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `${what} ${printable(path)} cannot be read: ${printable((err as Error).message)}`,
    );
  }
  try {
    if (!fstatSync(fd).isFile())
      throw new HotpathCompareError('HP_COMPARE_RESULTS', `${what} ${printable(path)} is not a regular file`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Why JSON.parse refused, without the bytes it quotes (`Unexpected token 'r', "root:x:0:0"...`):
 * its position when it says one. The file is data of a pull request; its bytes stay out of logs.
 */
function jsonProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const at = /at position (\d{1,12})/.exec(message)?.[1];
  if (at !== undefined) return `a syntax error at position ${at}`;
  return message.startsWith('Unexpected end of JSON input') ? 'it ends early' : 'a syntax error';
}

export function parseJson(path: string, what: string): unknown {
  const text = readRegularFile(path, what);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `${what} ${printable(path)} is not valid JSON: ${jsonProblem(err)}`,
    );
  }
}
