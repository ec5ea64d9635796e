import { listSourceFiles, readSource } from './files.js';
import { tokenize } from './tokens.js';

// The environment variables a project's code reads: `process.env.NAME`, `process.env['NAME']`,
// `const { A, B: b } = process.env`, Prisma's `env("NAME")` in schema.prisma, and the names an
// `.env.example` lists. `hotpath init` sets the database's and cache's for both sides of the
// workflow it writes; `hotpath compare` names the unset ones when a server does not come up.

/** Variable name → the project files that read or list it, in the order first seen. */
export type EnvReads = Map<string, string[]>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;

const add = (reads: EnvReads, name: string, file: string) => {
  if (!NAME.test(name)) return;
  const files = reads.get(name) ?? [];
  if (!files.includes(file)) files.push(file);
  reads.set(name, files);
};

/** One read of process.env: the name, and whether the code gives a value when it is unset. */
interface EnvRead {
  name: string;
  /** `process.env.X || 'x'`, `process.env.X ?? 'x'`, `const { X = 'x' } = process.env`. */
  fallback: boolean;
}

/** The reads of process.env in one source text. */
function readsOfSource(text: string): EnvRead[] {
  const tokens = tokenize(text);
  const reads: EnvRead[] = [];
  const isText = (i: number, text: string) => {
    const t = tokens[i];
    return t !== undefined && t.kind !== 'tpl' && t.text === text;
  };
  // `||` and `??` are two punctuation tokens each
  const fallbackAt = (i: number) =>
    (isText(i, '|') && isText(i + 1, '|')) || (isText(i, '?') && isText(i + 1, '?'));
  for (let i = 0; i + 2 < tokens.length; i++) {
    if (!isText(i, 'process') || !isText(i + 1, '.') || !isText(i + 2, 'env')) continue;
    const next = tokens[i + 4];
    if (isText(i + 3, '.') && next?.kind === 'id')
      reads.push({ name: next.text, fallback: fallbackAt(i + 5) });
    else if (isText(i + 3, '[') && next?.kind === 'str' && isText(i + 5, ']'))
      reads.push({ name: next.text, fallback: fallbackAt(i + 6) });
    else if (isText(i - 1, '=') && isText(i - 2, '}')) {
      // const { A, B: b, C = 'x' } = process.env
      const close = tokens[i - 2];
      const open = close?.kind === 'punct' ? close.pair : undefined;
      if (open === undefined || i - open > 400) continue;
      for (let k = open + 1; k < i - 2; k++) {
        const t = tokens[k];
        if (t?.kind === 'id' && (isText(k - 1, '{') || isText(k - 1, ',')))
          reads.push({
            name: t.text,
            fallback: isText(k + 1, '=') || (isText(k + 1, ':') && isText(k + 3, '=')),
          });
      }
    }
  }
  return reads;
}

/** The variables one source text reads from process.env. */
export function envReadsOfSource(text: string): string[] {
  return readsOfSource(text).map((r) => r.name);
}

/** The variables one source text reads only with a fallback (`|| 'x'`, `?? 'x'`, `= 'x'`). */
export function envFallbacksOfSource(text: string): Set<string> {
  const reads = readsOfSource(text);
  const bare = new Set(reads.filter((r) => !r.fallback).map((r) => r.name));
  return new Set(reads.filter((r) => r.fallback && !bare.has(r.name)).map((r) => r.name));
}

/** `env("NAME")` in a Prisma schema. */
export function envReadsOfPrismaSchema(text: string): string[] {
  return [...text.slice(0, 1_000_000).matchAll(/\benv\(\s*"([A-Za-z_][A-Za-z0-9_]{0,99})"\s*\)/g)].map(
    (m) => m[1] as string,
  );
}

/** `NAME=value` lines of a dotenv file (`export NAME=value` too): name → value as written. */
export function dotenvEntries(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const raw of text.slice(0, 1_000_000).split('\n')) {
    let line = raw.trim();
    if (line.startsWith('#')) continue;
    if (line.startsWith('export ')) line = line.slice('export '.length).trim();
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const name = line.slice(0, eq).trim();
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]))
      value = value.slice(1, -1);
    if (NAME.test(name)) entries.set(name, value);
  }
  return entries;
}

export const DOTENV_EXAMPLES = [
  '.env.example',
  '.env.sample',
  '.env.template',
  '.env.dist',
  'example.env',
  '.example-env',
];
/** node-config's map of settings to variables: `port: PORT` lines (YAML) or `"port": "PORT"` (JSON). */
export const CONFIG_VARIABLE_MAPS = [
  'config/custom-environment-variables.yml',
  'config/custom-environment-variables.yaml',
  'config/custom-environment-variables.json',
];

/** The variable names a node-config custom-environment-variables file maps settings to. */
export function envReadsOfConfigMap(text: string): string[] {
  const names: string[] = [];
  for (const line of text.slice(0, 200_000).split('\n')) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    let value = line.slice(colon + 1).trim();
    if (value.endsWith(',')) value = value.slice(0, -1);
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]))
      value = value.slice(1, -1);
    if (/^[A-Z][A-Z0-9_]{0,99}$/.test(value)) names.push(value);
  }
  return names;
}
export const PRISMA_SCHEMAS = ['prisma/schema.prisma', 'schema.prisma', 'src/prisma/schema.prisma'];

/**
 * Every variable the project in `dir` reads (source files, Prisma schemas, dotenv examples). The
 * map's `optional`: those the source reads only with a fallback, in every file that reads them
 * (and that no schema or settings map needs): the server runs without them.
 */
export function projectEnvReads(
  dir: string,
  files: readonly string[] = listSourceFiles(dir),
): EnvReads & { optional: Set<string> } {
  const reads = Object.assign(new Map() as EnvReads, { optional: new Set<string>() });
  const needed = new Set<string>();
  for (const file of files) {
    const text = readSource(dir, file);
    if (text === undefined || !text.includes('process')) continue;
    for (const { name, fallback } of readsOfSource(text)) {
      add(reads, name, file);
      if (fallback) reads.optional.add(name);
      else needed.add(name);
    }
  }
  for (const name of needed) reads.optional.delete(name);
  for (const file of PRISMA_SCHEMAS) {
    const text = readSource(dir, file);
    if (text !== undefined)
      for (const name of envReadsOfPrismaSchema(text)) {
        add(reads, name, file);
        reads.optional.delete(name);
      }
  }
  for (const file of CONFIG_VARIABLE_MAPS) {
    const text = readSource(dir, file);
    if (text !== undefined) for (const name of envReadsOfConfigMap(text)) add(reads, name, file);
  }
  for (const file of DOTENV_EXAMPLES) {
    const text = readSource(dir, file);
    if (text !== undefined) for (const name of dotenvEntries(text).keys()) add(reads, name, file);
  }
  return reads;
}

/** Variables every server reads or that hotpath sets itself: never worth naming as missing. */
export const ORDINARY_VARIABLES = new Set([
  'PORT',
  'HOST',
  'HOSTNAME',
  'NODE_ENV',
  'DEBUG',
  'LOG_LEVEL',
  'CI',
  'HOME',
  'PATH',
  'TZ',
  'npm_package_version',
  'npm_package_name',
  'npm_lifecycle_event',
]);

/** The runner's, Actions' and hotpath's own variables: never the server's to be told about. */
export const RUNNER_VARIABLE = /^(?:GITHUB_|ACTIONS_|RUNNER_|INPUT_|HOTPATH_)/;

/**
 * Files a server does not run: database migrations and seeds and the tools' config that runs
 * them (knexfile). A variable read only there (a migration's admin password) is no reason a
 * server did not come up. Seen on a real application: kutt's hint named variables its knexfile
 * and migrations read beside the DB_* the server needed.
 */
const NOT_SERVED = /(?:^|\/)(?:migrations?|seeds?|seeders)\/|(?:^|\/)knexfile\.[cm]?[jt]s$/;

/** The variables `dir`'s code reads that `env` leaves unset, each with the first file that reads it. */
export function unsetVariables(dir: string, env: NodeJS.ProcessEnv): { name: string; file: string }[] {
  const missing: { name: string; file: string }[] = [];
  // A `.env` the server loads itself (dotenv) sets what it lists.
  const dotenv = dotenvEntries(readSource(dir, '.env') ?? '');
  const reads = projectEnvReads(
    dir,
    listSourceFiles(dir).filter((file) => !NOT_SERVED.test(file)),
  );
  for (const [name, files] of reads) {
    if (ORDINARY_VARIABLES.has(name) || RUNNER_VARIABLE.test(name) || dotenv.has(name)) continue;
    if (reads.optional.has(name)) continue;
    if (env[name] === undefined || env[name] === '') missing.push({ name, file: files[0] ?? '.' });
  }
  return missing;
}
