// Issue 67: `hotpath init` reads a repository it did not write. Its start-script regex was
// exponential (`node` + `--a `×24 + `!`: 4.1 s, ×28: over 40 s), it printed route paths with
// their escapes raw, and it ran the repository's package manager (which loads .pnpmfile.cjs).
// Every parser of repository text is now linear: each hostile input below, far larger than the
// ones that took seconds, is read in under 50 ms.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeEntry } from '../src/init/detect.js';
import { readRouteFacts } from '../src/init/route-facts.js';
import { joinPath } from '../src/init/routes.js';
import { reportWorkflow } from '../src/init/templates.js';
import { dotenvEntries, envReadsOfPrismaSchema, envReadsOfSource } from '../src/source/env-reads.js';
import { CLI_BIN } from './helpers/repo.js';

/**
 * CPU milliseconds `run` takes (this process's user + system time, which a machine busy with
 * other jobs does not inflate as it does wall time), the fastest of five after one warm-up: a
 * garbage collection slows one run, not five; a quadratic or exponential reader is slow in all.
 */
function fastest(run: () => unknown): number {
  run();
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

describe('parsers of repository text are linear', () => {
  it('the start script: node + "--a "×20000 + "!" (the old regex: 4.1 s at ×24)', () => {
    const script = `node ${'--a '.repeat(20_000)}!`;
    expect(fastest(() => nodeEntry(script))).toBeLessThan(50);
    expect(nodeEntry(script)).toBeUndefined();
    expect(nodeEntry('node -r dotenv/config --max-old-space-size=512 dist/server.js')).toBe('dist/server.js');
    expect(nodeEntry('node --watch src/index.mjs')).toBe('src/index.mjs');
    expect(nodeEntry('nodemon server.js')).toBeUndefined();
  });

  // About 60 KB each: a quadratic reader would take seconds (60 000² steps), a linear one
  // milliseconds; the tokenizer's cost per character is what remains.
  const hostileSources: [string, string][] = [
    ['one 60 KB identifier', 'a'.repeat(60_000)],
    ['10 000 nested calls', `app.use(${'x.use('.repeat(10_000)}`],
    ['a 5 000-link chain', `router${".get('/a', h)".repeat(5_000)}`],
    ['nested chains', `${'('.repeat(5_000)}x${').a()'.repeat(5_000)}`],
    ['unclosed brackets', '('.repeat(60_000)],
    ['unclosed strings and templates', '\'`"/'.repeat(15_000)],
    ['process.env reads', 'process.env.A_'.repeat(4_000)],
    ['destructured env reads', `const {${' a,'.repeat(20_000)}} = process.env`],
  ];
  it.each(hostileSources)('a source file of %s', (_name, text) => {
    expect(fastest(() => readRouteFacts(text))).toBeLessThan(50);
    expect(fastest(() => envReadsOfSource(text))).toBeLessThan(50);
  });

  it('paths, Prisma schemas and dotenv files', () => {
    const slashes = '/'.repeat(500_000);
    expect(fastest(() => joinPath(slashes, `${slashes}a`))).toBeLessThan(50);
    const schema = `env("${'A'.repeat(300_000)}`;
    expect(fastest(() => envReadsOfPrismaSchema(schema))).toBeLessThan(50);
    const dotenv = `${' '.repeat(300_000)}=x\n${'A='.repeat(100_000)}`;
    expect(fastest(() => dotenvEntries(dotenv))).toBeLessThan(50);
  });
});

describe('hotpath init with a hostile repository', () => {
  let project: string;
  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'hotpath-init-hostile-'));
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  it('prints route paths and package.json text with their escapes and bidi overrides escaped', () => {
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        scripts: { start: 'node server.js' },
        dependencies: { 'express\u001b]0;pwned\u0007': '1' },
      }),
    );
    writeFileSync(
      join(project, 'server.js'),
      [
        "const app = require('express')();",
        "app.get('/users/\u001b[31mred/:id', (req, res) => res.end());",
        "app.get('/files/\u202eexe.txt/*', (req, res) => res.end());",
        'app.listen(process.env.PORT);',
      ].join('\n'),
    );
    const r = spawnSync(process.execPath, [CLI_BIN, 'init', '--no-install'], {
      cwd: project,
      encoding: 'utf8',
      input: '',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/[\u001b\u0007\u202e]/);
    expect(r.stderr).toContain('left out: /users/\\u001b[31mred/:id');
    expect(r.stderr).toContain('left out: /files/\\u202eexe.txt/*');
  });

  it('runs no package manager: .pnpmfile.cjs is not loaded, package.json gets the devDependency, and says so', () => {
    writeFileSync(join(project, 'package.json'), JSON.stringify({ scripts: { start: 'node server.js' } }));
    writeFileSync(join(project, 'pnpm-lock.yaml'), "lockfileVersion: '9.0'\n");
    writeFileSync(
      join(project, 'server.js'),
      "require('node:http').createServer().listen(process.env.PORT);\n",
    );
    const marker = join(project, 'pnpmfile-ran');
    writeFileSync(
      join(project, '.pnpmfile.cjs'),
      `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\nmodule.exports = {};\n`,
    );
    // Without --no-install, stdin not a terminal: nothing to ask, nothing run.
    const r = spawnSync(process.execPath, [CLI_BIN, 'init', '--url', '/'], {
      cwd: project,
      encoding: 'utf8',
      input: '',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    expect(pkg.devDependencies['@hotpath/compare']).toMatch(/^\^\d/);
    expect(r.stderr).toContain("without running pnpm (it would run this repository's code");
  });
});

it('the report workflow init writes has a timeout', () => {
  expect(reportWorkflow()).toMatch(/\n {4}runs-on: ubuntu-latest\n {4}timeout-minutes: \d+\n/);
});
