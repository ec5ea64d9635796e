// How hotpath writes a file it produces (a report, folded stacks, a flame graph, a manifest, a
// results file): never through a symbolic link or a hard link planted where the file goes. A
// checked-out branch can hold `hotpath-report/head.folded -> ~/.bashrc`; writing that path with
// writeFileSync would put a profile line (a function name such as `$(touch …)`) into the link's
// target. Here the bytes go to a new file (O_CREAT | O_EXCL | O_NOFOLLOW) that is then renamed
// over the name: a link there is replaced, its target never opened.
// Top-level, beside errors.ts, so that run/, shard/ and the CLI (through internal.ts) share it.
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { HotpathCompareError } from './errors.js';
import { printable } from './printable.js';

/** Create, fail when the name exists, and never follow a link in the last component. */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

const unsafe = (message: string, cause?: unknown) =>
  new HotpathCompareError('HP_COMPARE_UNSAFE_OUTPUT', message, cause === undefined ? undefined : { cause });

/**
 * Writes `data` to `path` as a new regular file renamed over the name, so that what was there
 * (a symbolic link, dangling or not; a hard link to another file) is replaced and its target left
 * unchanged. With `refuseLinks` (a path the user named, such as --markdown) a symbolic link there
 * is refused instead: HP_COMPARE_UNSAFE_OUTPUT naming the path. A folder there is refused too.
 */
export function writeOutputFile(
  path: string,
  data: string | Uint8Array,
  options: { refuseLinks?: boolean } = {},
): void {
  const full = resolve(path);
  const there = lstatOrUndefined(full);
  if (there?.isSymbolicLink() && options.refuseLinks)
    throw unsafe(
      `${printable(full)} is a symbolic link: expected a regular file or nothing there (hotpath never writes through a link; remove it or name another file)`,
    );
  if (there?.isDirectory())
    throw unsafe(`${printable(full)} is a folder: expected a regular file or nothing there`);
  const temp = `${dirname(full)}/.${basename(full).slice(0, 100)}.${randomUUID().slice(0, 8)}.tmp`;
  let fd: number;
  try {
    fd = openSync(temp, CREATE_NEW, 0o644);
  } catch (err) {
    throw unsafe(`cannot create ${printable(full)}: ${printable((err as Error).message)}`, err);
  }
  try {
    writeFileSync(fd, data);
    closeSync(fd);
    renameSync(temp, full);
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // closed already
    }
    try {
      unlinkSync(temp);
    } catch {
      // renamed or never made
    }
    throw err;
  }
}

/**
 * Makes `dir` (and its parents) and checks that `dir` itself is a real folder, not a symbolic
 * link to one: HP_COMPARE_UNSAFE_OUTPUT naming it otherwise. Returns the absolute path.
 */
export function makeOutputFolder(dir: string, what = 'output folder'): string {
  const full = resolve(dir);
  const there = lstatOrUndefined(full);
  if (there?.isSymbolicLink())
    throw unsafe(
      `${what} ${printable(full)} is a symbolic link: expected a folder (hotpath never writes through a link; remove it or choose another folder)`,
    );
  if (there && !there.isDirectory())
    throw unsafe(`${what} ${printable(full)} is not a folder: expected a folder or nothing there`);
  if (!there) mkdirSync(full, { recursive: true });
  // Made just now, or found: a link put in its place meanwhile is refused the same way.
  if (!lstatOrUndefined(full)?.isDirectory())
    throw unsafe(`${what} ${printable(full)} is not a folder after it was made: expected a folder`);
  return full;
}
