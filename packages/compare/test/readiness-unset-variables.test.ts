// Issue 68: a server that needs a database exits or never listens when DATABASE_URL is unset;
// hotpath compare showed its last output lines and left the user to guess. It now names the
// variables the server's code reads that are unset, and those set but held back (secret-looking
// names pass only when listed).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { unsetVariables } from '../src/source/env-reads.js';
import { CLI_BIN } from './helpers/repo.js';

let project: string;
beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'hotpath-unset-'));
  writeFileSync(
    join(project, 'server.js'),
    [
      "const http = require('node:http');",
      'const url = process.env.DATABASE_URL;',
      'const secret = process.env.JWT_SECRET;',
      "if (!url) { console.error('no database'); process.exit(1); }",
      "http.createServer((req, res) => res.end(secret ? 'ok' : 'no secret')).listen(Number(process.env.PORT), '127.0.0.1');",
      '',
    ].join('\n'),
  );
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

const compare = (env: NodeJS.ProcessEnv, extra: string[] = []) =>
  spawnSync(
    process.execPath,
    [
      CLI_BIN,
      'compare',
      '--base-start',
      'node server.js',
      '--head-start',
      'node server.js',
      '--url',
      '/',
      '-d',
      '0.3',
      '-W',
      '0',
      '-r',
      '1',
      '-c',
      '1',
      '--profiler',
      'none',
      '--ready-timeout',
      '5',
      '-q',
      '--out',
      join(project, 'out'),
      ...extra,
    ],
    { cwd: project, encoding: 'utf8', env, timeout: 120_000 },
  );

it('names the unset variable the server reads, and the secret-looking one set but not passed', () => {
  const { DATABASE_URL: _db, JWT_SECRET: _jwt, ...rest } = process.env;
  const r = compare({ ...rest, JWT_SECRET: 'from-the-shell' });
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('exited with code 1 before accepting connections');
  expect(r.stderr).toContain('no database');
  expect(r.stderr).toContain("The server's code reads variables that are unset: DATABASE_URL (server.js).");
  expect(r.stderr).toContain(
    'Set here but not passed to the server (secret-looking names are passed only when listed): JWT_SECRET (server.js); pass them with --pass-env JWT_SECRET.',
  );
});

it('says nothing of variables when the server comes up', () => {
  const { DATABASE_URL: _db, JWT_SECRET: _jwt, ...rest } = process.env;
  const r = compare({ ...rest, DATABASE_URL: 'postgresql://x', JWT_SECRET: 's' }, [
    '--pass-env',
    'JWT_SECRET',
  ]);
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).not.toContain('reads variables');
});

it('leaves out what only migrations, seeds and the knexfile read: the server does not run them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-unset-knex-'));
  try {
    const write = (file: string, text: string) => {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    };
    write('server.js', 'const db = require("./db"); const url = process.env.DB_HOST;\n');
    write('db.js', 'module.exports = { password: process.env.DB_PASSWORD };\n');
    write('knexfile.js', 'module.exports = { connection: process.env.KNEX_ONLY_URL };\n');
    write('migrations/20240101_users.js', 'const admin = process.env.MIGRATION_ADMIN;\n');
    write('server/seeds/demo.ts', 'const count = process.env.SEED_COUNT;\n');
    const named = unsetVariables(dir, {}).map((v) => v.name);
    expect(named).toEqual(['DB_PASSWORD', 'DB_HOST']);
    // a variable the server reads as well as a migration is still named, by the server's file
    write('migrations/20240102_more.js', 'const host = process.env.DB_HOST;\n');
    expect(unsetVariables(dir, {}).find((v) => v.name === 'DB_HOST')?.file).toBe('server.js');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
