import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';

export type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun';

/** What `hotpath init` learned about a project by reading its files. */
export interface Project {
  dir: string;
  packageManager: PackageManager;
  /** The lockfile that named the package manager, if any. */
  lockfile?: string;
  /** Web framework found among the dependencies (express, fastify, koa, restify, …). */
  framework?: string;
  /** The command that starts the server, as hotpath should run it; undefined when none found. */
  start?: string;
  /** Where `start` came from, for the printed summary. */
  startFrom?: string;
  /** The file the server starts from, when known. */
  entry?: string;
  /** Environment variable the server reads its port from (PORT, APP_PORT, …), if found. */
  portVariable?: string;
  /** Paths of GET routes found in the source (literal paths, no parameters). */
  routes: string[];
  /** GET routes found but not measurable as written (`/users/:id`, `/files/*`): said, not guessed. */
  paramRoutes: string[];
  /** The package.json text and its parsed value (undefined when there is none). */
  packageJson?: { text: string; value: Record<string, unknown> };
}

const LOCKFILES: [string, PackageManager][] = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
];

const FRAMEWORKS = ['express', 'fastify', 'koa', 'restify', '@hapi/hapi', 'hono', '@nestjs/core', 'polka'];

/** `node server.js`-like: the start script runs node on a file directly. */
const NODE_FILE = /^\s*node\s+(?:--?[\w-]+(?:=\S+)?\s+)*([\w./@-]+\.(?:c|m)?js)\b/;

function readJson(path: string): { text: string; value: Record<string, unknown> } | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? { text, value: value as Record<string, unknown> }
      : undefined;
  } catch {
    return undefined;
  }
}

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** Source files to look for routes in: the entry, then .js/.ts files below a few folders. */
function sourceFiles(dir: string, entry: string | undefined): string[] {
  const files: string[] = [];
  const add = (path: string) => {
    if (!files.includes(path) && files.length < 60) files.push(path);
  };
  if (entry && existsSync(join(dir, entry))) add(join(dir, entry));
  const walk = (folder: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(folder).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith('.') || name === 'node_modules' || name === 'dist' || name === 'test') continue;
      const path = join(folder, name);
      let isDir = false;
      try {
        isDir = statSync(path).isDirectory();
      } catch {
        continue;
      }
      if (isDir) {
        if (depth < 3) walk(path, depth + 1);
      } else if (/\.(c|m)?[jt]s$/.test(name) && !/\.(test|spec|d)\.[cm]?[jt]s$/.test(name)) add(path);
    }
  };
  walk(dir, 0);
  return files;
}

const ROUTE = /\.(?:get|all)\(\s*(['"`])(\/[^'"`\s]*)\1/g;
/** A path hotpath can request as written: no `:param`, `*`, `(`, `{` or `${`. */
const LITERAL_PATH = /^\/[\w\-./~%]*$/;
/** `process.env.PORT`, `process.env.APP_PORT`, `process.env['HTTP_PORT']`: PORT as a word of the name (not PORTAL). */
const PORT_READ =
  /process\.env\.((?:[A-Z][A-Z0-9]*_)*PORT(?:_[A-Z0-9]+)*)\b|process\.env\[\s*['"]((?:[A-Z][A-Z0-9]*_)*PORT(?:_[A-Z0-9]+)*)['"]\s*\]/;

/** Reads the project in `dir`: package manager, framework, start command, port variable, routes. */
export function detectProject(dir: string): Project {
  const packageJson = readJson(join(dir, 'package.json'));
  const pkg = record(packageJson?.value);
  const found = LOCKFILES.find(([file]) => existsSync(join(dir, file)));
  const declared = typeof pkg.packageManager === 'string' ? pkg.packageManager.split('@')[0] : undefined;
  const packageManager: PackageManager =
    found?.[1] ?? (declared === 'pnpm' || declared === 'yarn' || declared === 'bun' ? declared : 'npm');
  const deps = { ...record(pkg.devDependencies), ...record(pkg.dependencies) };
  const framework = FRAMEWORKS.find((name) => name in deps);
  const scripts = record(pkg.scripts);
  let start: string | undefined;
  let startFrom: string | undefined;
  let entry: string | undefined;
  const script = typeof scripts.start === 'string' ? scripts.start : undefined;
  const direct = script === undefined ? null : NODE_FILE.exec(script);
  if (script !== undefined && direct !== null && !/[;&|<>$`]/.test(script)) {
    // Run node directly: the probe and `profiler: prof` see the server itself, not npm.
    start = script.trim();
    startFrom = 'package.json "start"';
    entry = direct[1];
  } else if (script !== undefined) {
    start = `${packageManager === 'yarn' ? 'yarn' : `${packageManager} run`} start`;
    startFrom = 'package.json "start"';
  } else {
    const main = typeof pkg.main === 'string' ? pkg.main : undefined;
    entry = [main, 'server.js', 'index.js', 'app.js', 'src/server.js', 'src/index.js'].find(
      (file): file is string => file !== undefined && existsSync(join(dir, file)),
    );
    if (entry) {
      start = `node ${entry}`;
      startFrom = entry === main ? 'package.json "main"' : entry;
    }
  }
  const routes: string[] = [];
  const paramRoutes: string[] = [];
  let portVariable: string | undefined;
  for (const file of sourceFiles(dir, entry)) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    if (text.length > 500_000) continue;
    portVariable ??= (() => {
      const m = PORT_READ.exec(text);
      return m ? (m[1] ?? m[2]) : undefined;
    })();
    for (const m of text.matchAll(ROUTE)) {
      const path = m[2];
      if (path === undefined) continue;
      const list = LITERAL_PATH.test(path) ? routes : paramRoutes;
      if (!list.includes(path) && list.length < 10) list.push(path);
    }
    if (entry === undefined && /\.listen\(/.test(text) && extname(file) !== '.ts')
      entry = relative(dir, file);
  }
  return {
    dir,
    packageManager,
    lockfile: found?.[0],
    framework,
    start,
    startFrom,
    entry,
    portVariable,
    routes,
    paramRoutes,
    packageJson,
  };
}

/** The start command hotpath runs: the server's own port variable set from $PORT. */
export function startCommand(project: Project): string | undefined {
  if (project.start === undefined) return undefined;
  const variable = project.portVariable;
  return variable && variable !== 'PORT' ? `${variable}=$PORT ${project.start}` : project.start;
}
