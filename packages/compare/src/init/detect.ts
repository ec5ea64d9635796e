import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectEnvReads } from '../source/env-reads.js';
import { listSourceFiles, readSource } from '../source/files.js';
import { detectProtocol, type Protocol } from './protocol.js';
import { chooseRoutes, type RouteChoice } from './route-choice.js';
import { discoverRoutes, type FoundRoute } from './routes.js';
import { type DataNeeds, detectDataNeeds } from './stores.js';

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
  /** The GET routes found in the source, prefixes of mounted routers joined, in mount order. */
  routes: FoundRoute[];
  /** The routes init writes and those it leaves out, each with why. */
  routeChoice: RouteChoice;
  /** The databases and caches the server needs, the variables set for them, migrate and seed. */
  data: DataNeeds;
  /** HTTP/2 or gRPC, when the server speaks it (see protocol.ts). */
  protocol: Protocol;
  /** The start script's development-server command (`nx serve`, `nodemon`, `--watch`), when it is one. */
  devServer?: string;
  /** The build command (`<pm> run build`) when package.json has a build script. */
  build?: string;
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

/** Node options that take their value as the next word (`-r dotenv/config`). */
const NODE_OPTION_WITH_VALUE = new Set([
  '-r',
  '--require',
  '--import',
  '--loader',
  '--experimental-loader',
  '-C',
  '--conditions',
  '--title',
]);
/** A script file node runs: `server.js`, `dist/main.mjs`, or `src/bin/server` (node adds `.js`). */
const JS_FILE = /^[\w./@-]{1,500}$/;

/**
 * `node server.js`-like: the file a start script runs node on directly, after node's options;
 * undefined for anything else. Word by word, no regular expression over the whole script (a
 * backtracking one took seconds on `node --a --a … !`).
 */
export function nodeEntry(script: string): string | undefined {
  const words = script.trim().slice(0, 4096).split(/\s+/);
  if (words[0] !== 'node') return undefined;
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as string;
    if (word.startsWith('-')) {
      if (NODE_OPTION_WITH_VALUE.has(word)) i++;
      continue;
    }
    return (JS_FILE.test(word) && !word.startsWith('.')) || word.startsWith('./') ? word : undefined;
  }
  return undefined;
}

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

/** A start script that runs a development server: it watches and rebuilds, a poor thing to measure. */
const DEV_SERVER =
  /\b(?:nx serve|nodemon|ts-node-dev|tsx watch|nest start --watch|next dev|vite)\b|--watch\b/;

/** A port variable: PORT as a word of the name (APP_PORT, PORT_HTTP; not PORTAL). */
const PORT_NAME = /^(?:[A-Z][A-Z0-9]*_)*PORT(?:_[A-Z0-9]+)*$/;

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
  const direct = script === undefined ? undefined : nodeEntry(script);
  if (script !== undefined && direct !== undefined && !/[;&|<>$`]/.test(script)) {
    // Run node directly: the probe and `profiler: prof` see the server itself, not npm.
    start = script.trim();
    startFrom = 'package.json "start"';
    entry = ['', '.js', '.cjs', '.mjs']
      .map((ext) => `${direct}${ext}`)
      .find((file) => existsSync(join(dir, file)));
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
  const files = listSourceFiles(dir, entry);
  const reads = projectEnvReads(dir, files);
  const portVariable = [...reads.keys()].find((name) => PORT_NAME.test(name));
  if (entry === undefined)
    entry = files.find(
      (file) => !/\.[cm]?tsx?$/.test(file) && /\.listen\(/.test(readSource(dir, file) ?? ''),
    );
  const routes = discoverRoutes(dir, files);
  const protocol = detectProtocol(dir, files, deps);
  const run = (name: string) => `${packageManager === 'yarn' ? 'yarn' : `${packageManager} run`} ${name}`;
  const data = detectDataNeeds(dir, pkg, reads, run);
  const build = typeof scripts.build === 'string' ? run('build') : undefined;
  const devServer = script === undefined ? undefined : DEV_SERVER.exec(script.slice(0, 4096))?.[0];
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
    routeChoice: chooseRoutes(routes, data.seedValues),
    data,
    protocol,
    ...(build ? { build } : {}),
    ...(devServer ? { devServer } : {}),
    packageJson,
  };
}

/** The start command hotpath runs: the server's own port variable set from $PORT. */
export function startCommand(project: Project): string | undefined {
  if (project.start === undefined) return undefined;
  const variable = project.portVariable;
  return variable && variable !== 'PORT' ? `${variable}=$PORT ${project.start}` : project.start;
}
