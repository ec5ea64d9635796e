import { lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeOutputFolder, writeOutputFile } from '../output-file.js';

/** The file in an output folder that lists what hotpath wrote there. */
export const MANIFEST = '.hotpath-files.json';

interface Manifest {
  tool: 'hotpath';
  files: string[];
}

/** Names an earlier hotpath (before the manifest) wrote: report, profile, folded stacks, graphs. */
const OWN_NAMES =
  /^(report\.(json|md|html)|profile\.json|(\d+-[a-z0-9_-]{0,40}\.)?((base|head)\.folded|(head|base|diff)-flamegraph\.(svg|html)))$/;

/** A plain entry name inside the folder (no separators, no `..`): what a manifest may list. */
const isEntryName = (name: unknown): name is string =>
  typeof name === 'string' && name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);

/** `path` is a regular file (not a link to one): what the claim reads. */
function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/** `path` is a symbolic link (dangling or not). */
function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function readManifest(dir: string): string[] | undefined {
  if (!isRegularFile(join(dir, MANIFEST))) return undefined;
  try {
    const value = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Partial<Manifest>;
    return value.tool === 'hotpath' && Array.isArray(value.files)
      ? value.files.filter(isEntryName)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The folder holds a hotpath report or profile written before manifests existed. */
function holdsOldOutput(dir: string): boolean {
  for (const [name, schema] of [
    ['report.json', '"hotpath-report/'],
    ['profile.json', '"hotpath-profile/'],
  ] as const) {
    try {
      if (isRegularFile(join(dir, name)) && readFileSync(join(dir, name), 'utf8').includes(schema))
        return true;
    } catch {
      // not there
    }
  }
  return false;
}

export interface ClaimedOutDir {
  dir: string;
  /** What an earlier hotpath run left there and was removed (entry names). */
  removed: string[];
  /** Call after writing: records every entry that is new since the claim in the manifest. */
  seal(): void;
}

/**
 * Makes `dir` this run's output folder: removes what an earlier hotpath run wrote there — the
 * entries its manifest lists or, for output older than the manifest, hotpath's own file names
 * when a hotpath report is among them — and leaves everything else alone. `seal()` then lists
 * what this run added, so the next run removes exactly that.
 *
 * The folder is claimed by lstat: a symbolic link in its place is refused
 * (HP_COMPARE_UNSAFE_OUTPUT), and a link inside it named as a file hotpath writes (a checked-out
 * branch's `head.folded -> ~/.bashrc`) is removed, never followed, so the file this run writes
 * there is new and listed in the manifest.
 */
export function claimOutDir(dir: string): ClaimedOutDir {
  const out = makeOutputFolder(dir);
  const listed = readManifest(out);
  const earlier = listed ?? (holdsOldOutput(out) ? readdirSync(out).filter((n) => OWN_NAMES.test(n)) : []);
  const planted = readdirSync(out).filter(
    (n) => (OWN_NAMES.test(n) || n === MANIFEST) && isLink(join(out, n)),
  );
  const removed: string[] = [];
  for (const name of new Set([...earlier, ...planted])) {
    const path = join(out, name);
    let present = false;
    try {
      lstatSync(path);
      present = true;
    } catch {
      // not there
    }
    if (!present) continue;
    // rmSync removes a link itself, never what it points to.
    rmSync(path, { recursive: true, force: true });
    removed.push(name);
  }
  rmSync(join(out, MANIFEST), { force: true });
  const before = new Set(readdirSync(out));
  return {
    dir: out,
    removed,
    seal: () => {
      const files = readdirSync(out).filter((name) => !before.has(name) && name !== MANIFEST);
      const manifest: Manifest = { tool: 'hotpath', files: files.sort() };
      writeOutputFile(join(out, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    },
  };
}

/** Writes with `write` into `dir` claimed as this run's output folder, then seals it. */
export function writeClaimed<T>(dir: string, write: (dir: string) => T): { written: T; removed: string[] } {
  const claimed = claimOutDir(dir);
  const written = write(claimed.dir);
  claimed.seal();
  return { written, removed: claimed.removed };
}
