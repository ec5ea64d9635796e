import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BUNDLE, FIXTURES, makeRepo } from './helpers/action-run.js';

const cli = (args: string[], cwd = FIXTURES) =>
  spawnSync(process.execPath, [CLI_BUNDLE, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });

const FAST = ['--duration', '0.7', '--warmup', '0.2', '--rounds', '2', '--connections', '2'];

describe('hotpath CLI (dist/cli.js)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      ['compare', '--start', 'node x.js', '--duration', 'soon'],
      /^hotpath: HP_ACTION_INVALID_INPUT: invalid --duration: expected a number of seconds > 0.*"soon"\n$/,
    ],
    [
      ['compare', '--start', 'node x.js', '--bogus'],
      /^hotpath: Unknown option '--bogus'.*\(see hotpath --help\)\n$/,
    ],
    [['compare', '--base-start', 'node a.js'], /^hotpath: --base-start and --head-start go together/],
    [['frobnicate'], /^hotpath: unknown command "frobnicate": expected compare or profile/],
    [['compare'], /^hotpath: missing --start CMD/],
  ])('%j exits 2 with one line', (args, message) => {
    const r = cli(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('prints usage with --help', () => {
    const r = cli(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('hotpath compare --base-start CMD --head-start CMD');
  });

  it('compares two start commands in one tree and writes the files', () => {
    const out = join(dir, 'two-commands');
    const md = join(dir, 'report.md');
    const r = cli([
      'compare',
      '--base-start',
      'HASH_MODE=async node hash-server.cjs',
      '--head-start',
      'HASH_MODE=sync node hash-server.cjs',
      '--url',
      '/auth',
      '--out',
      out,
      '--markdown',
      md,
      ...FAST,
    ]);
    expect(r.stderr).toContain(`files in ${out}`);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Requests\/s\s+\S+\s+\S+/m);
    expect(r.stdout).toMatch(/pbkdf2Sync/);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(report.schema).toBe('hotpath-report/1');
    expect(report.rounds.map((x: { side: string }) => x.side)).toEqual(['base', 'head', 'base', 'head']);
    expect(report.sides.head.command).toBe('HASH_MODE=sync node hash-server.cjs');
    expect(existsSync(join(out, 'head.folded'))).toBe(true);
    expect(readFileSync(md, 'utf8')).toMatch(/^### .* hotpath: /m);
  });

  it('compares two git refs through worktrees and --json', () => {
    const ok = (n: number) =>
      `require('node:http').createServer((q, s) => s.end('v${n}')).listen(Number(process.env.PORT), '127.0.0.1');`;
    const repo = makeRepo(join(dir, 'refs'), { 'server.js': ok(1) }, { 'server.js': ok(2) });
    const r = cli(
      [
        'compare',
        '--start',
        'node server.js',
        '--base',
        'HEAD~1',
        '--json',
        '--out',
        join(dir, 'refs-out'),
        ...FAST,
      ],
      repo.dir,
    );
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.sides.base.sha).toBe(repo.baseSha);
    expect(report.sides.base.cwd).not.toBe(repo.dir);
    expect(report.sides.head.cwd).toBe(repo.dir);
    // The worktree is removed afterwards.
    expect(
      execFileSync('git', ['worktree', 'list'], { cwd: repo.dir, encoding: 'utf8' }).trim().split('\n'),
    ).toHaveLength(1);
  });

  it('profiles one side with node --prof, cut to the measured window', () => {
    const out = join(dir, 'prof');
    const r = cli([
      'profile',
      '--start',
      'HASH_MODE=sync node hash-server.cjs',
      '--url',
      '/auth',
      '--profiler',
      'prof',
      '--out',
      out,
      ...FAST,
    ]);
    expect(r.status).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'profile.json'), 'utf8'));
    expect(summary.profilers).toEqual(['prof']);
    expect(summary.warnings).toEqual([]);
    expect(summary.topFunctions.length).toBeGreaterThan(0);
    expect(r.stdout).toContain('hottest functions');
  });

  it('refuses profiler prof for a start command that does not run node', () => {
    const r = cli(['profile', '--start', 'npm start', '--profiler', 'prof', ...FAST]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /HP_ACTION_PROF_NEEDS_NODE: head: profiler "prof" needs a start command that runs node directly/,
    );
  });
});
