import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  type Stats,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { HotpathCompareError } from '../errors.js';
import { printable } from '../printable.js';

// How `hotpath init` writes into a project it did not make — often a repository just cloned, in
// which any path may be a symbolic link its author chose (a dangling `hotpath.config.json` link
// would have made init create a file wherever it pointed; a `.gitignore` link would have had a
// line appended to the file it named). Nothing is written through a link: not the file, not a
// folder on its path. Every path is checked with lstat before anything is written (so a refusal
// leaves the project as it was), and every open of the file itself refuses a link on its own
// (O_NOFOLLOW; O_EXCL for a new file), so a link that appears after the check is refused too.
// A folder on the path swapped for a link between the check and the open is the one race left:
// Node has no openat(2) to open below a folder it holds.

const { O_APPEND, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_RDWR, O_TRUNC, O_WRONLY } = constants;

function refusal(name: string, at: string, why: string): HotpathCompareError {
  const what = at === name ? printable(name) : `${printable(at)} (on the path of ${printable(name)})`;
  return new HotpathCompareError(
    'HP_COMPARE_INIT_UNSAFE_PATH',
    `refusing to write ${printable(name)}: ${what} ${why}; hotpath init never writes through a link or to anything but a regular file — replace it with a regular ${at === name ? 'file' : 'folder'} or remove it, then run init again`,
  );
}

function linkRefusal(dir: string, name: string, at: string): HotpathCompareError {
  let target = '';
  try {
    target = ` (to ${printable(readlinkSync(join(dir, at)))})`;
  } catch {
    // gone meanwhile: the refusal stands
  }
  return refusal(name, at, `is a symbolic link${target}`);
}

const lstatOrAbsent = (path: string): Stats | undefined => {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
};

/**
 * Whether `name` (relative to `dir`, `/`-separated) exists as a regular file; throws
 * HP_COMPARE_INIT_UNSAFE_PATH when it, or a folder on its path, is a symbolic link (dangling or
 * not) or is not what it must be (a folder, then a regular file).
 */
export function checkProjectPath(dir: string, name: string): boolean {
  const parts = name.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const at = parts.slice(0, i).join('/');
    const stat = lstatOrAbsent(join(dir, at));
    if (!stat) return false;
    if (stat.isSymbolicLink()) throw linkRefusal(dir, name, at);
    const last = i === parts.length;
    if (last ? !stat.isFile() : !stat.isDirectory())
      throw refusal(name, at, last ? 'is not a regular file' : 'is not a folder');
  }
  return true;
}

/** Makes the folders of `name` below `dir`, one at a time, refusing a link among them. */
function makeFolders(dir: string, name: string): void {
  const parts = name.split('/').slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const at = parts.slice(0, i).join('/');
    try {
      mkdirSync(join(dir, at));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const stat = lstatSync(join(dir, at));
    if (stat.isSymbolicLink()) throw linkRefusal(dir, name, at);
    if (!stat.isDirectory()) throw refusal(name, at, 'is not a folder');
  }
}

/** Opens `name` below `dir` with `flags` plus O_NOFOLLOW: a link there fails the open (ELOOP). */
function openNoFollow(dir: string, name: string, flags: number): number {
  let fd: number;
  try {
    fd = openSync(join(dir, name), flags | O_NOFOLLOW | O_NONBLOCK, 0o666);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ELOOP' && code !== 'EEXIST') throw err;
    // A link made after the check (ELOOP; EEXIST for a dangling one with O_EXCL), or a file.
    if (code === 'ELOOP' || lstatOrAbsent(join(dir, name))?.isSymbolicLink() === true)
      throw linkRefusal(dir, name, name);
    throw refusal(name, name, 'appeared while hotpath init was writing');
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw refusal(name, name, 'is not a regular file');
  }
  return fd;
}

function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
}

/**
 * Writes `text` to `name` below `dir`: a new file (O_CREAT | O_EXCL: never a link's target) or,
 * with `replace`, an existing regular file truncated (O_NOFOLLOW). Folders on the way are made.
 */
export function writeProjectFile(dir: string, name: string, text: string, replace: boolean): void {
  makeFolders(dir, name);
  const fd = openNoFollow(dir, name, replace ? O_WRONLY | O_TRUNC : O_WRONLY | O_CREAT | O_EXCL);
  try {
    writeAll(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads `name` below `dir` (made when absent) and appends what `addition` returns for its text,
 * through one descriptor opened with O_NOFOLLOW: a link is refused, never appended to.
 * Returns whether anything was appended.
 */
export function appendToProjectFile(
  dir: string,
  name: string,
  addition: (text: string) => string | undefined,
): boolean {
  makeFolders(dir, name);
  const fd = openNoFollow(dir, name, O_RDWR | O_APPEND | O_CREAT);
  try {
    const extra = addition(readFileSync(fd, 'utf8'));
    if (extra === undefined) return false;
    writeAll(fd, extra);
    return true;
  } finally {
    closeSync(fd);
  }
}
