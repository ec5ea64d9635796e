// Issue 68: the workflow `hotpath init` wrote started no database, set no DATABASE_URL and ran
// no migration, so the measure job's server could not answer. init now reads the drivers, the
// ORM's schema and the variables the code reads, and writes them into the measure workflow.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectProject } from '../src/init/detect.js';
import { measureWorkflow } from '../src/init/templates.js';
import { envFallbacksOfSource, envReadsOfConfigMap, envReadsOfSource } from '../src/source/env-reads.js';

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', 'init-apps', name);

describe('the database and cache a project needs', () => {
  it('Express + Prisma (PostgreSQL) + ioredis: services, variables for both sides, migrate and seed', () => {
    const project = detectProject(fixture('express'));
    expect(project.data.stores.map((s) => [s.kind, s.evidence])).toEqual([
      ['postgres', ['prisma/schema.prisma: provider "postgresql"']],
      ['redis', ['ioredis in dependencies']],
    ]);
    expect(project.data.variables.map((v) => [v.name, v.value])).toEqual([
      ['REDIS_URL', 'redis://localhost:6379'],
      ['DATABASE_URL', 'postgresql://hotpath:hotpath@localhost:5432/hotpath'],
      ['JWT_SECRET', 'change-me'],
    ]);
    expect(project.data.setup.map((s) => s.command)).toEqual(['npx prisma migrate deploy', 'npm run seed']);
    expect(project.build).toBe('npm run build');

    const yml = measureWorkflow(project.packageManager, project.data, project.lockfile !== undefined);
    expect(yml).toMatch(/\n {4}services:\n {6}postgres:\n {8}image: postgres:17 # TODO: pin by digest/);
    expect(yml).toMatch(/\n {6}redis:\n {8}image: redis:7 # TODO: pin by digest/);
    expect(yml).toContain('\n      DATABASE_URL: "postgresql://hotpath:hotpath@localhost:5432/hotpath"\n');
    // passed by name to both sides through the hotpath step's env input
    expect(yml).toContain('\n          env: REDIS_URL,DATABASE_URL,JWT_SECRET\n');
    // migrate and seed once, before the hotpath step
    const setup = yml.indexOf('npx prisma migrate deploy');
    expect(setup).toBeGreaterThan(0);
    expect(yml.indexOf('npm run seed')).toBeGreaterThan(setup);
    expect(yml.indexOf('uses: hotpath-dev/hotpath@')).toBeGreaterThan(setup);
  });

  it('Fastify + knex + pg: component variables get the service address parts, the migrate script runs', () => {
    const project = detectProject(fixture('fastify'));
    expect(project.data.stores.map((s) => s.kind)).toEqual(['postgres']);
    expect(project.data.variables.map((v) => [v.name, v.value])).toEqual([
      ['PGHOST', 'localhost'],
      ['PGDATABASE', 'hotpath'],
    ]);
    expect(project.data.setup.map((s) => s.command)).toEqual(['npm run migrate']);
  });

  it('Koa + mongoose: a MongoDB service and its URL; no setup command when there is none', () => {
    const project = detectProject(fixture('koa'));
    expect(project.data.stores.map((s) => s.kind)).toEqual(['mongodb']);
    expect(project.data.variables.map((v) => [v.name, v.value])).toEqual([
      ['MONGO_URL', 'mongodb://localhost:27017/hotpath'],
    ]);
    expect(project.data.setup).toEqual([]);
    expect(measureWorkflow(project.packageManager, project.data)).toMatch(
      /\n {6}mongodb:\n {8}image: mongo:8 /,
    );
  });

  it('Nest + TypeORM + mysql2, Restify + memjs: MySQL and memcached services, the parts their names ask for', () => {
    const nest = detectProject(fixture('nest'));
    expect(nest.data.stores.map((s) => s.kind)).toEqual(['mysql']);
    expect(nest.data.variables.map((v) => [v.name, v.value])).toEqual([
      ['MYSQL_HOST', '127.0.0.1'],
      ['MYSQL_PASSWORD', 'hotpath'],
    ]);
    expect(measureWorkflow(nest.packageManager, nest.data)).toMatch(/\n {6}mysql:\n {8}image: mysql:8\.4 /);
    const restify = detectProject(fixture('restify'));
    expect(restify.data.stores.map((s) => s.kind)).toEqual(['memcached']);
    expect(restify.data.variables.map((v) => [v.name, v.value])).toEqual([
      ['MEMCACHIER_SERVERS', 'localhost:11211'],
    ]);
  });

  it('an example value that would be a GitHub expression, or a runner variable, is not written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-init-data-'));
    try {
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ main: 'server.js', dependencies: { pg: '8' } }),
      );
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub expression, written as text on purpose
      writeFileSync(join(dir, '.env.example'), 'API_KEY=${{ secrets.DEPLOY_TOKEN }}\n');
      writeFileSync(
        join(dir, 'server.js'),
        'const k = process.env.API_KEY, t = process.env.GITHUB_TOKEN, u = process.env.DATABASE_URL;\n',
      );
      const project = detectProject(dir);
      expect(project.data.variables.map((v) => [v.name, v.value])).toEqual([
        ['DATABASE_URL', 'postgresql://hotpath:hotpath@localhost:5432/hotpath'],
        ['API_KEY', 'hotpath'],
      ]);
      expect(measureWorkflow(project.packageManager, project.data)).not.toContain('secrets.');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

it('a variable the code reads only with a fallback gets no stand-in; a store variable still gets the service', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-init-fallback-'));
  try {
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ main: 'server.js', dependencies: { pg: '8' } }),
    );
    // as a real repository's src/config.js: JWT_SECRET with a value of its own
    writeFileSync(
      join(dir, 'server.js'),
      [
        "const secret = process.env.JWT_SECRET || 'tilikum-crossing';",
        "const db = process.env.DATABASE_URL ?? 'postgresql://localhost/dev';",
        "const { API_KEY = 'none', SESSION_KEY } = process.env;",
        "const also = process.env['SESSION_KEY'] ?? 'x';",
      ].join('\n'),
    );
    const project = detectProject(dir);
    expect(project.data.variables.map((v) => [v.name, v.value])).toEqual([
      ['DATABASE_URL', 'postgresql://hotpath:hotpath@localhost:5432/hotpath'],
      // read bare once (the destructuring), so needed
      ['SESSION_KEY', 'hotpath'],
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a Prisma schema path from package.json that is not a plain relative path is not written into a shell step', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-init-schema-'));
  try {
    const schema = 'db/x;touch pwned';
    mkdirSync(join(dir, 'db'));
    writeFileSync(
      join(dir, schema),
      'datasource db {\n  provider = "postgresql"\n  url = env("DATABASE_URL")\n}\n',
    );
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ main: 'server.js', prisma: { schema } }));
    writeFileSync(join(dir, 'server.js'), '');
    const project = detectProject(dir);
    expect(measureWorkflow(project.packageManager, project.data)).not.toContain('touch');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('the variables code reads', () => {
  it('process.env.X, process.env["X"], destructuring, node-config maps; not comments or strings', () => {
    const text = [
      'const a = process.env.DATABASE_URL;',
      "const b = process.env['REDIS_URL'];",
      'const { PGHOST, PGPORT: port = 5432 } = process.env;',
      '// process.env.COMMENTED',
      "const s = 'process.env.IN_A_STRING';",
    ].join('\n');
    expect(envReadsOfSource(text)).toEqual(['DATABASE_URL', 'REDIS_URL', 'PGHOST', 'PGPORT']);
    // PGPORT has a default in the destructuring; a read with `||` or `??` has one too, unless the
    // same text also reads it bare
    expect([...envFallbacksOfSource(text)]).toEqual(['PGPORT']);
    expect([
      ...envFallbacksOfSource(
        "process.env.A || 'a'; process.env['B'] ?? 1; process.env.C?.trim(); process.env.D || 1; process.env.D;",
      ),
    ]).toEqual(['A', 'B']);
    expect(
      envReadsOfConfigMap('db:\n  client: DB_CLIENT\n  connection: DB_CONNECTION\nname: npm_package_name\n'),
    ).toEqual(['DB_CLIENT', 'DB_CONNECTION']);
  });
});
