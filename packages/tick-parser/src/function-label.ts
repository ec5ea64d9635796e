import type { FunctionEntry } from './model.js';

/**
 * A one-line label for a function: `name file:line:column` for located code, the bare name
 * otherwise. Code without a script name but with a position (`new Function`, `eval`) reads
 * `name :line:column`, as V8 writes it.
 */
export function functionLabel(fn: FunctionEntry): string {
  if (fn.kind === 'js' && (fn.file || fn.line > 0)) {
    if (fn.line > 0 && fn.column > 0) return `${fn.name} ${fn.file}:${fn.line}:${fn.column}`;
    return fn.line > 0 ? `${fn.name} ${fn.file}:${fn.line}` : `${fn.name} ${fn.file}`;
  }
  return fn.name;
}

/**
 * What reports show for a stack frame whose index is not one of the profile's functions. The
 * parsers never write such a frame; a Profile put together by hand may, and it then reads as
 * unknown code instead of breaking the report.
 */
export const UNKNOWN_FRAME: Readonly<FunctionEntry> = Object.freeze({
  name: '(unknown)',
  file: '',
  line: 0,
  column: 0,
  kind: 'unknown',
  self: 0,
  total: 0,
});

/** The identity of a function inside one profile: kind, name, file and position. */
export function functionKey(fn: Pick<FunctionEntry, 'kind' | 'name' | 'file' | 'line' | 'column'>): string {
  return `${fn.kind}\u0000${fn.name}\u0000${fn.file}\u0000${fn.line}\u0000${fn.column}`;
}

/**
 * The identity of a function across profiles: name and file, not line (edits above it do not
 * matter). The file is compared as a path, so a `.cpuprofile`'s `file:///srv/app.js` (how
 * `--cpu-prof` names CommonJS files too) meets a tick log's `/srv/app.js`.
 */
export function crossProfileKey(fn: Pick<FunctionEntry, 'name' | 'file'>): string {
  return `${fn.name}\u0000${scriptPath(fn.file)}`;
}

const DRIVE_PATH = /^[A-Za-z]:[\\/]/;

/**
 * A script's file as a path: `file:` URLs (`file:///x.js`, `file://localhost/x.js`, percent-encoded,
 * `file:///C:/x.js`) lose their scheme; Windows paths use `/`. Other names (`node:fs`,
 * `http://…`, `webpack://…`, paths) are kept as they are.
 */
export function scriptPath(file: string): string {
  let path = file;
  if (path.startsWith('file://')) {
    path = path.slice(7);
    if (path.startsWith('localhost/')) path = path.slice(9);
    const end = path.search(/[?#]/);
    if (end >= 0) path = path.slice(0, end);
    if (path.includes('%')) {
      try {
        path = decodeURIComponent(path);
      } catch {
        // a malformed escape: compare the text as written
      }
    }
    if (path.startsWith('/') && DRIVE_PATH.test(path.slice(1))) path = path.slice(1);
  }
  return DRIVE_PATH.test(path) ? path.replaceAll('\\', '/') : path;
}
