import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

// The project's own source files, as `hotpath init` reads them: below the project folder only,
// never through a symbolic link, never node_modules, build output or tests, each capped in size
// and their number capped, so that a hostile or huge repository costs init a bounded amount.

/** Files larger than this are not read (generated bundles, vendored code). */
export const MAX_SOURCE_BYTES = 512 * 1024;
/** At most this many source files are read. */
export const MAX_SOURCE_FILES = 600;
const MAX_DEPTH = 8;

const SKIPPED_FOLDERS = new Set([
  'node_modules',
  'dist',
  'build',
  'out',
  'coverage',
  'test',
  'tests',
  '__tests__',
  'e2e',
  'fixtures',
  'public',
  'static',
  'vendor',
  'tmp',
]);
const SOURCE = /\.(?:[cm]?js|[cm]?ts|jsx|tsx)$/;
const NOT_SOURCE = /\.(?:test|spec|d|min)\.[cm]?[jt]sx?$/;

/**
 * `dir`-relative, `/`-separated paths of the project's source files, sorted, entry first;
 * `pattern` picks other files by name with the same bounds (`.proto` definitions).
 */
export function listSourceFiles(dir: string, entry?: string, pattern: RegExp = SOURCE): string[] {
  const files: string[] = [];
  const walk = (folder: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(join(dir, folder)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (files.length >= MAX_SOURCE_FILES) return;
      if (name.startsWith('.') || SKIPPED_FOLDERS.has(name)) continue;
      const path = folder === '' ? name : `${folder}/${name}`;
      let stat: ReturnType<typeof lstatSync>;
      try {
        stat = lstatSync(join(dir, path));
      } catch {
        continue;
      }
      if (stat.isDirectory()) {
        if (depth < MAX_DEPTH) walk(path, depth + 1);
      } else if (
        stat.isFile() &&
        pattern.test(name) &&
        !NOT_SOURCE.test(name) &&
        stat.size <= MAX_SOURCE_BYTES
      )
        files.push(path);
    }
  };
  walk('', 0);
  const first = entry === undefined ? undefined : toProjectPath(dir, join(dir, entry));
  return first !== undefined && files.includes(first) ? [first, ...files.filter((f) => f !== first)] : files;
}

/** `path` (absolute) as a `dir`-relative `/`-separated path, or undefined when outside `dir`. */
function toProjectPath(dir: string, path: string): string | undefined {
  const rel = relative(dir, path);
  if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) return undefined;
  return rel.split(sep).join('/');
}

/** A source file's text, or undefined when it is not a regular file below the cap. */
export function readSource(dir: string, file: string): string | undefined {
  try {
    const stat = lstatSync(join(dir, file));
    if (!stat.isFile() || stat.size > MAX_SOURCE_BYTES) return undefined;
    return readFileSync(join(dir, file), 'utf8');
  } catch {
    return undefined;
  }
}

const EXTENSIONS = ['.ts', '.js', '.mjs', '.cjs', '.mts', '.cts', '.tsx', '.jsx'];

/**
 * The project file a relative import or require of `specifier` in `from` names: the path itself,
 * with an extension added, a `.js` written for a `.ts` source (TypeScript's ESM style), or the
 * folder's index file. Undefined for packages, absolute paths and anything outside the project.
 */
export function resolveImport(
  known: ReadonlySet<string>,
  from: string,
  specifier: string,
): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../') && specifier !== '.' && specifier !== '..')
    return undefined;
  const base = join(dirname(from), specifier).split(sep).join('/');
  if (base.startsWith('..')) return undefined;
  const stem = base.replace(/\.[cm]?js$/, '');
  const candidates = [
    base,
    ...EXTENSIONS.map((ext) => `${base}${ext}`),
    ...EXTENSIONS.map((ext) => `${stem}${ext}`),
    ...EXTENSIONS.map((ext) => `${base}/index${ext}`),
  ];
  return candidates.find((file) => known.has(file));
}
