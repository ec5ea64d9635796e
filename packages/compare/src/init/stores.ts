import { existsSync, lstatSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  CONFIG_VARIABLE_MAPS,
  DOTENV_EXAMPLES,
  dotenvEntries,
  type EnvReads,
  ORDINARY_VARIABLES,
  PRISMA_SCHEMAS,
  RUNNER_VARIABLE,
} from '../source/env-reads.js';
import { readSource } from '../source/files.js';

// The databases and caches a project's server needs, read from its package.json (drivers and
// ORMs), its Prisma schema's provider and the variables its code reads; the value each variable
// gets in the workflow init writes (the service containers' addresses), and the commands that
// migrate and seed the database, from the project's scripts or its ORM's conventions.

export type StoreKind = 'postgres' | 'mysql' | 'mongodb' | 'redis' | 'memcached';

export interface Store {
  kind: StoreKind;
  /** What showed it: `pg in dependencies`, `prisma/schema.prisma: provider "postgresql"`. */
  evidence: string[];
}

export interface Variable {
  name: string;
  value: string;
  /** Why this value: the store it points to, or where the example came from. */
  because: string;
}

export interface DataNeeds {
  stores: Store[];
  variables: Variable[];
  /** Migrate, then seed: each command and where it came from. */
  setup: { command: string; from: string }[];
  /** Notes for the user: a file database, a provider init cannot start. */
  notes: string[];
  /** Values the seed writes for fields (`username: 'alice'`), to fill a route's parameters. */
  seedValues: Map<string, string>;
}

const DRIVERS: [string, StoreKind][] = [
  ['pg', 'postgres'],
  ['postgres', 'postgres'],
  ['pg-promise', 'postgres'],
  ['slonik', 'postgres'],
  ['mysql', 'mysql'],
  ['mysql2', 'mysql'],
  ['mariadb', 'mysql'],
  ['mongoose', 'mongodb'],
  ['mongodb', 'mongodb'],
  ['ioredis', 'redis'],
  ['redis', 'redis'],
  ['@redis/client', 'redis'],
  ['bullmq', 'redis'],
  ['bull', 'redis'],
  ['memcached', 'memcached'],
  ['memjs', 'memcached'],
];
const PRISMA_PROVIDERS: Record<string, StoreKind> = {
  postgresql: 'postgres',
  postgres: 'postgres',
  cockroachdb: 'postgres',
  mysql: 'mysql',
  mongodb: 'mongodb',
};

/** The service container of each store: the address a variable gets, and its parts. */
export const SERVICE_ADDRESS: Record<
  StoreKind,
  { url: string; host: string; port: string; user?: string; password?: string; database?: string }
> = {
  postgres: {
    url: 'postgresql://hotpath:hotpath@localhost:5432/hotpath',
    host: 'localhost',
    port: '5432',
    user: 'hotpath',
    password: 'hotpath',
    database: 'hotpath',
  },
  mysql: {
    url: 'mysql://root:hotpath@127.0.0.1:3306/hotpath',
    host: '127.0.0.1',
    port: '3306',
    user: 'root',
    password: 'hotpath',
    database: 'hotpath',
  },
  mongodb: {
    url: 'mongodb://localhost:27017/hotpath',
    host: 'localhost',
    port: '27017',
    database: 'hotpath',
  },
  redis: { url: 'redis://localhost:6379', host: 'localhost', port: '6379' },
  memcached: { url: 'localhost:11211', host: 'localhost', port: '11211' },
};

/** The client name Knex (and TypeORM's `type`) takes for each SQL store. */
const KNEX_CLIENT: Partial<Record<StoreKind, string>> = { postgres: 'pg', mysql: 'mysql2' };

/** Which store a variable's name points at, among those found. */
function storeOfName(name: string, kinds: readonly StoreKind[]): StoreKind | undefined {
  const upper = name.toUpperCase();
  const has = (kind: StoreKind) => kinds.includes(kind);
  if (/MEMCACH/.test(upper) && has('memcached')) return 'memcached';
  if (/REDIS|CACHE|QUEUE|BULL/.test(upper))
    return has('redis') ? 'redis' : has('memcached') ? 'memcached' : undefined;
  if (/MONGO/.test(upper) && has('mongodb')) return 'mongodb';
  if (/MYSQL|MARIA/.test(upper) && has('mysql')) return 'mysql';
  if (/^PG|POSTGRES/.test(upper) && has('postgres')) return 'postgres';
  if (/DATABASE|(^|_)DB(_|$)|SQL/.test(upper))
    return (['postgres', 'mysql', 'mongodb'] as const).find((kind) => has(kind));
  return undefined;
}

/** The value a variable pointing at `kind` gets: the whole URL, or the part its name asks for. */
function valueFor(name: string, kind: StoreKind): string | undefined {
  const a = SERVICE_ADDRESS[kind];
  const upper = name.toUpperCase();
  if (/URL|URI|DSN|CONNECTION|CONN_STR|SERVERS?$/.test(upper)) return a.url;
  if (/CLIENT|DRIVER/.test(upper)) return KNEX_CLIENT[kind];
  if (/DIALECT/.test(upper)) return kind === 'postgres' || kind === 'mysql' ? kind : undefined;
  if (/HOST/.test(upper)) return a.host;
  if (/PORT/.test(upper)) return a.port;
  if (/PASS/.test(upper)) return a.password;
  if (/USER/.test(upper)) return a.user;
  if (/(^|_)(NAME|DATABASE|DB)$/.test(upper) || upper === 'PGDATABASE') return a.database;
  return undefined;
}

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** A file below `dir`, not a link. */
const isFile = (dir: string, file: string): boolean => {
  try {
    return lstatSync(join(dir, file)).isFile();
  } catch {
    return false;
  }
};

/** The migrate and seed commands: the project's own scripts first, then its ORM's convention. */
function setupCommands(
  dir: string,
  pkg: Record<string, unknown>,
  deps: Record<string, unknown>,
  run: (script: string) => string,
  prismaSchema: string | undefined,
): { command: string; from: string }[] {
  const scripts = record(pkg.scripts);
  const script = (pattern: RegExp) =>
    Object.keys(scripts).find(
      (name) =>
        pattern.test(name) &&
        typeof scripts[name] === 'string' &&
        !/dev|reset|make|create|generate|rollback|undo|down|test/i.test(name),
    );
  const commands: { command: string; from: string }[] = [];
  const runs = (pattern: RegExp) =>
    Object.keys(scripts).find((name) => {
      const text = scripts[name];
      return typeof text === 'string' && pattern.test(text.slice(0, 1000)) && /^[\w:.-]{1,100}$/.test(name);
    });
  const migrate =
    script(/^(?:db[:-])?(?:migrate|migration[:-]run|migrations?)(?:[:-](?:latest|deploy|up|run|prod))?$/i) ??
    runs(/\b(?:migrate:latest|migrate deploy|db:migrate|migration:run)\b/);
  const schemaFlag =
    prismaSchema && !['prisma/schema.prisma', 'schema.prisma'].includes(prismaSchema)
      ? ` --schema ${prismaSchema}`
      : '';
  if (migrate) commands.push({ command: run(migrate), from: `package.json script "${migrate}"` });
  else if (prismaSchema && isDir(join(dir, dirname(prismaSchema), 'migrations')))
    commands.push({
      command: `npx prisma migrate deploy${schemaFlag}`,
      from: `${dirname(prismaSchema)}/migrations`,
    });
  else if (prismaSchema)
    commands.push({
      command: `npx prisma db push --skip-generate${schemaFlag}`,
      from: `${prismaSchema} (no migrations folder)`,
    });
  else if (
    'knex' in deps &&
    ['knexfile.js', 'knexfile.ts', 'knexfile.cjs', 'knexfile.mjs'].some((f) => isFile(dir, f))
  )
    commands.push({ command: 'npx knex migrate:latest', from: 'knexfile' });
  else if (('sequelize-cli' in deps || isFile(dir, '.sequelizerc')) && 'sequelize' in deps)
    commands.push({ command: 'npx sequelize-cli db:migrate', from: 'sequelize-cli' });
  const seed =
    script(/^(?:db[:-])?seeds?(?:[:-](?:run|all|db|prod))?$/i) ??
    runs(/\b(?:seed:run|db seed|db:seed(?::all)?)\b/);
  const prismaSeed = typeof record(pkg.prisma).seed === 'string';
  if (seed) commands.push({ command: run(seed), from: `package.json script "${seed}"` });
  else if (prismaSchema && prismaSeed)
    commands.push({ command: 'npx prisma db seed', from: 'package.json "prisma.seed"' });
  else if ('knex' in deps && isDir(join(dir, 'seeds')))
    commands.push({ command: 'npx knex seed:run', from: 'seeds/' });
  else if ('sequelize-cli' in deps && isDir(join(dir, 'seeders')))
    commands.push({ command: 'npx sequelize-cli db:seed:all', from: 'seeders/' });
  return commands;
}

const isDir = (path: string): boolean => {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** `field: 'value'` pairs of the seed's source, first value of each field, URL-safe values only. */
function seedValues(dir: string, pkg: Record<string, unknown>): Map<string, string> {
  const seedCommand = String(record(pkg.prisma).seed ?? record(pkg.scripts).seed ?? '');
  const files = [
    ...seedCommand.split(/\s+/).filter((w) => /\.[cm]?[jt]s$/.test(w)),
    'prisma/seed.ts',
    'prisma/seed.js',
    'seed.js',
    'seed.ts',
  ];
  const values = new Map<string, string>();
  for (const file of files) {
    const text = file.includes('..') ? undefined : readSource(dir, file);
    if (text === undefined) continue;
    for (const m of text
      .slice(0, 200_000)
      .matchAll(/\b([A-Za-z_]\w{0,40})\s{0,4}:\s{0,4}(['"])([\w.@-]{1,64})\2/g)) {
      const [, field, , value] = m;
      if (field !== undefined && value !== undefined && !values.has(field)) values.set(field, value);
    }
  }
  return values;
}

/**
 * An example value written into the workflow as it is: printable, one line, no `${{` (an
 * expression GitHub would evaluate), at most 200 characters.
 */
const usableExample = (value: string | undefined): boolean =>
  value !== undefined &&
  value !== '' &&
  value.length <= 200 &&
  !value.includes('${{') &&
  !/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(value);

/** What database and cache the project in `dir` needs, from package.json and the variables it reads. */
export function detectDataNeeds(
  dir: string,
  pkg: Record<string, unknown>,
  reads: EnvReads & { optional?: ReadonlySet<string> },
  run: (script: string) => string,
): DataNeeds {
  const deps = { ...record(pkg.devDependencies), ...record(pkg.dependencies) };
  const found = new Map<StoreKind, string[]>();
  const note = (kind: StoreKind, why: string) => found.set(kind, [...(found.get(kind) ?? []), why]);
  const notes: string[] = [];
  for (const [name, kind] of DRIVERS) if (name in deps) note(kind, `${name} in dependencies`);
  const configured = record(pkg.prisma).schema;
  const prismaSchema = [
    // Written into the workflow's shell step as `--schema PATH`: a plain relative path only.
    ...(typeof configured === 'string' &&
    /^[\w][\w./-]{0,200}$/.test(configured) &&
    !configured.includes('..')
      ? [configured]
      : []),
    ...PRISMA_SCHEMAS,
  ].find((f) => isFile(dir, f));
  if (prismaSchema) {
    const schema = (readSource(dir, prismaSchema) ?? '').slice(0, 200_000);
    const provider =
      /datasource\s{1,8}\w{1,40}\s{0,8}\{[^}]{0,2000}?provider\s{0,8}=\s{0,8}"(\w{1,40})"/.exec(schema)?.[1];
    const kind = provider ? PRISMA_PROVIDERS[provider] : undefined;
    if (kind) note(kind, `${prismaSchema}: provider "${provider}"`);
    else if (provider === 'sqlite')
      notes.push(`${prismaSchema}: provider "sqlite" — a file database, no service to start`);
    else if (provider)
      notes.push(
        `${prismaSchema}: provider "${provider}" — hotpath init starts no service for it; add one to the workflow`,
      );
  }
  if (!found.size && ['sqlite3', 'better-sqlite3'].some((d) => d in deps))
    notes.push('sqlite in dependencies — a file database, no service to start');
  const kinds = [...found.keys()];
  const examples = new Map<string, string>();
  for (const file of DOTENV_EXAMPLES)
    for (const [k, v] of dotenvEntries(readSource(dir, file) ?? '')) if (!examples.has(k)) examples.set(k, v);
  const variables: Variable[] = [];
  for (const [name, files] of reads) {
    if (ORDINARY_VARIABLES.has(name) || RUNNER_VARIABLE.test(name)) continue;
    if (/(^|_)PORT$/.test(name) && !storeOfName(name, kinds)) continue;
    const kind = storeOfName(name, kinds);
    const value = kind === undefined ? undefined : valueFor(name, kind);
    if (kind !== undefined && value !== undefined)
      variables.push({ name, value, because: `the ${kind} service` });
    // Named only by an example file or node-config's map (whose settings have defaults): optional.
    else if (
      files.every((f) => DOTENV_EXAMPLES.includes(f) || CONFIG_VARIABLE_MAPS.includes(f)) &&
      !usableExample(examples.get(name))
    )
      continue;
    else if (usableExample(examples.get(name)))
      variables.push({
        name,
        value: examples.get(name) as string,
        because: `its example value in ${files.find((f) => DOTENV_EXAMPLES.includes(f)) ?? DOTENV_EXAMPLES.find((f) => existsSync(join(dir, f)))}`,
      });
    // The code has a value of its own when it is unset (`|| 'x'`, `?? 'x'`): no stand-in, which
    // would only pass a made-up value by name on every run.
    else if (reads.optional?.has(name)) continue;
    else
      variables.push({
        name,
        value: 'hotpath',
        because: `read in ${files[0]}; no example value found, a stand-in`,
      });
  }
  const order: StoreKind[] = ['postgres', 'mysql', 'mongodb', 'redis', 'memcached'];
  const stored = (v: Variable) => (v.because.startsWith('the ') ? 0 : 1);
  return {
    stores: order.flatMap((kind) => (found.has(kind) ? [{ kind, evidence: found.get(kind) ?? [] }] : [])),
    variables: variables.sort((a, b) => stored(a) - stored(b)),
    setup: kinds.length > 0 || prismaSchema ? setupCommands(dir, pkg, deps, run, prismaSchema) : [],
    notes,
    seedValues: seedValues(dir, pkg),
  };
}
