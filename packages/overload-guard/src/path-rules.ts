/** Which rule a request target falls under. */
export type PathRule = 'none' | 'health' | 'excluded';

const SLASH = 47; // '/'

/**
 * The pathname of an HTTP request target as routers compare it: the path of an absolute-form
 * target (`http://host/health` → `/health`), without query string or fragment, with repeated
 * slashes collapsed and without a trailing slash (except the root `/`). Percent-encoding and
 * letter case are kept. Anything else (asterisk-form `*`, authority-form) is returned as is.
 */
export function normalizePath(target: string): string {
  let start = 0;
  if (target.charCodeAt(0) !== SLASH) {
    const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(target);
    if (scheme === null) return target;
    start = scheme[0].length;
  }
  let end = target.length;
  const query = target.indexOf('?', start);
  if (query >= 0) end = query;
  const fragment = target.indexOf('#', start);
  if (fragment >= 0 && fragment < end) end = fragment;
  let path = start === 0 && end === target.length ? target : target.slice(start, end);
  if (path === '') return '/';
  if (path.includes('//')) path = path.replace(/\/{2,}/g, '/');
  if (path.length > 1 && path.charCodeAt(path.length - 1) === SLASH) path = path.slice(0, -1);
  return path;
}

/** True when `target` is already its own normalised path (the common case; no allocation). */
function isPlainPath(target: string): boolean {
  const last = target.length - 1;
  return (
    target.charCodeAt(0) === SLASH &&
    (last === 0 || target.charCodeAt(last) !== SLASH) &&
    target.indexOf('?') < 0 &&
    target.indexOf('//') < 0 &&
    target.indexOf('#') < 0
  );
}

/**
 * The health path and the exempt paths, matched on the normalised pathname (`normalizePath`), so
 * `/health?probe=1`, `/health/`, `//health` and `GET http://host/health` all reach the rule that
 * `/health` does. Configured paths are normalised the same way once.
 */
export class PathRules {
  readonly empty: boolean;
  private readonly healthPath: string | undefined;
  private readonly excludedPaths: Set<string>;
  private readonly excludedPatterns: RegExp[];

  constructor(healthPath: string | undefined, exclude: ReadonlyArray<string | RegExp>) {
    this.healthPath = healthPath === undefined ? undefined : normalizePath(healthPath);
    this.excludedPaths = new Set();
    this.excludedPatterns = [];
    for (const rule of exclude) {
      if (typeof rule === 'string') this.excludedPaths.add(normalizePath(rule));
      else this.excludedPatterns.push(rule);
    }
    this.empty = this.healthPath === undefined && exclude.length === 0;
  }

  /** The rule for a raw request target (`req.url`). */
  match(target: string): PathRule {
    if (this.empty) return 'none';
    const path = isPlainPath(target) ? target : normalizePath(target);
    if (path === this.healthPath) return 'health';
    if (this.excludedPaths.has(path)) return 'excluded';
    for (const pattern of this.excludedPatterns) {
      pattern.lastIndex = 0; // a /g or /y pattern keeps state between tests otherwise
      if (pattern.test(path)) return 'excluded';
    }
    return 'none';
  }
}
