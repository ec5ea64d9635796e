import { isAbsolute, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Profile } from '@hotpath/tick-parser';

/**
 * A profile's file as a person names it, the same on both sides of a comparison: a path
 * relative to the side's checkout root (`src/routes/auth.js`), a dependency as
 * `node_modules/<package>/<path inside it>` whatever the layout (npm, pnpm's `.pnpm/…`, nested),
 * and anything outside the checkout (node's own `node:` modules, the node binary, libc) as it is.
 * `file://` URLs are turned into paths first; one that does not decode is kept as it is.
 */
export function relativeLocation(file: string, root: string | undefined): string {
  if (!file) return file;
  let path = file;
  if (file.startsWith('file://')) {
    try {
      path = fileURLToPath(file);
    } catch {
      return file;
    }
  }
  if (!isAbsolute(path)) return path;
  const marker = `${sep}node_modules${sep}`;
  const last = path.lastIndexOf(marker);
  if (last >= 0)
    return `node_modules/${path
      .slice(last + marker.length)
      .split(sep)
      .join('/')}`;
  if (root) {
    const rel = relative(root, path);
    if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return rel.split(sep).join('/');
  }
  return path;
}

/** The same profile with every function's file made checkout-relative (see relativeLocation). */
export function withRelativeLocations(profile: Profile, root: string | undefined): Profile {
  return {
    ...profile,
    functions: profile.functions.map((fn) => ({ ...fn, file: relativeLocation(fn.file, root) })),
  };
}

/** The file name hotpath gives its probe's frames (wherever the probe was installed). */
export const PROBE_FILE = 'hotpath:probe';

/**
 * The same profile with the frames of hotpath's own probe (`probePath`, as a path or a
 * file:// URL) named PROBE_FILE, so the report can leave them out of the user's hot functions.
 */
export function withProbeFramesMarked(profile: Profile, probePath: string): Profile {
  const url = `file://${probePath}`;
  return {
    ...profile,
    functions: profile.functions.map((fn) =>
      fn.file === probePath || fn.file === url ? { ...fn, file: PROBE_FILE } : fn,
    ),
  };
}
