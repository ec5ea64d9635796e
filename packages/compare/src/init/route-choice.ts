import type { FoundRoute } from './routes.js';

// Which of the found GET routes `hotpath init` writes into the config, and why the others are
// left out. The application's own routes without parameters come first; a route with a path
// parameter is written when the seed gives its value, otherwise it is shown with a placeholder
// for the user to fill; a route behind authentication middleware answers 401 to hotpath's load;
// a root or health check measures nothing a pull request changes.

/** How many routes init writes into the config. */
export const ROUTES_WRITTEN = 5;

export interface LeftOut {
  path: string;
  why: string;
}

export interface RouteChoice {
  /** The routes written, in order: paths to request (parameters filled from the seed). */
  chosen: string[];
  /** Routes written with a value from the seed: the route as registered → the path written. */
  filled: Map<string, string>;
  leftOut: LeftOut[];
}

/** A path hotpath can request as written: no `:param`, `*`, `(`, `{` or `${`. */
const LITERAL_PATH = /^\/[\w\-./~%@]*$/;
const TRIVIAL =
  /^\/(?:[\w-]+\/)*(?:health|healthz|healthcheck|health-check|ping|status|ready|readyz|live|livez|alive|metrics|version|favicon\.ico|robots\.txt|docs|api-docs|swagger|openapi\.json)$/i;
/** `:name` or `{name}` segments. */
const PARAM = /^(?::([A-Za-z_]\w*)\??|\{([A-Za-z_]\w*)\})$/;

/** `/profiles/:username` with each parameter replaced by `values`' entry, or undefined when one is missing. */
function fill(path: string, values: ReadonlyMap<string, string>): string | undefined {
  const parts = path.split('/');
  let filled = false;
  const out: string[] = [];
  for (const part of parts) {
    const m = PARAM.exec(part);
    if (!m) {
      if (!LITERAL_PATH.test(`/${part}`)) return undefined;
      out.push(part);
      continue;
    }
    const value = values.get(m[1] ?? m[2] ?? '');
    if (value === undefined) return undefined;
    out.push(encodeURIComponent(value));
    filled = true;
  }
  return filled ? out.join('/') : undefined;
}

/** `/profiles/:username` → `/profiles/<username>`: what the user replaces. */
export function placeholder(path: string): string {
  return path
    .split('/')
    .map((part) => {
      const m = PARAM.exec(part);
      return m ? `<${m[1] ?? m[2]}>` : part;
    })
    .join('/');
}

/** Ranks `routes` and picks at most ROUTES_WRITTEN; `seed` maps parameter names to seeded values. */
export function chooseRoutes(routes: readonly FoundRoute[], seed: ReadonlyMap<string, string>): RouteChoice {
  const own: string[] = [];
  const seeded: [string, string][] = [];
  const trivial: string[] = [];
  const leftOut: LeftOut[] = [];
  for (const route of routes) {
    const { path } = route;
    if (route.auth !== undefined) {
      leftOut.push({ path, why: `behind ${route.auth}: answers 401 to requests without a login` });
    } else if (LITERAL_PATH.test(path)) {
      (TRIVIAL.test(path) || path === '/' ? trivial : own).push(path);
    } else {
      const value = fill(path, seed);
      if (value !== undefined) seeded.push([path, value]);
      else if (path.split('/').some((part) => PARAM.test(part)))
        leftOut.push({
          path,
          why: `a path parameter: add a scenario with a real value, url "${placeholder(path)}"`,
        });
      else leftOut.push({ path, why: 'a pattern (wildcard or regular expression), not one URL' });
    }
  }
  // A root or health check is written only to make up a pair: it measures little a pull
  // request changes, and the application's own routes are what the comparison is for.
  const ranked: [string, string][] = [
    ...own.map((p): [string, string] => [p, p]),
    ...seeded,
    ...trivial.slice(0, Math.max(0, 2 - own.length - seeded.length)).map((p): [string, string] => [p, p]),
  ];
  for (const path of trivial.slice(Math.max(0, 2 - own.length - seeded.length)))
    leftOut.push({ path, why: 'a root or health check: measures little a pull request changes' });
  const chosen = ranked.slice(0, ROUTES_WRITTEN);
  // The routes a user can add as they are come first (a real repository's three plain routes over
  // the cap were hidden under "22 more", after twelve path parameters), then the rest as found.
  const overCap = ranked.slice(ROUTES_WRITTEN).map(([path]) => ({
    path,
    why: `only ${ROUTES_WRITTEN} routes are written; add it to scenarios to measure it too`,
  }));
  return {
    chosen: chosen.map(([, url]) => url),
    filled: new Map(chosen.filter(([path, url]) => path !== url)),
    leftOut: [...overCap, ...leftOut],
  };
}
