import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leftAlive, serversRunning } from '../../compare/test/helpers/processes.js';
import { makeRepo, runAction } from './helpers/action-run.js';
import { type FakeGitHub, startFakeGitHub } from './helpers/fake-github.js';

const ONE_ROUND = { duration: '0.5', warmup: '0', rounds: '1', connections: '1', 'ready-timeout': '3' };

describe('the Action treats the server as untrusted and fails clearly', () => {
  let root: string;
  let github: FakeGitHub;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-safety-'));
    github = await startFakeGitHub({ readOnly: true });
  });

  afterAll(async () => {
    await github.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('gives a server that dumps process.env only the allowlist and the env input (no token, input, ACTIONS_* or GITHUB_*); a read-only token only warns', async () => {
    // The server writes its whole environment next to itself, then serves.
    const dump = `const fs = require('node:fs');
fs.writeFileSync(process.env.DUMP_DIR + '/env-' + process.pid + '.json', JSON.stringify(process.env));
require('node:http').createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');
`;
    const repo = makeRepo(join(root, 'env'), { 'server.js': dump }, {});
    const dumpDir = join(root, 'dumps');
    mkdirSync(dumpDir);
    const result = await runAction({
      repo,
      apiUrl: github.url,
      inputs: { start: 'node server.js', env: 'DUMP_DIR, SAFE_SETTING', ...ONE_ROUND },
      env: {
        NPM_TOKEN: 'npm-secret',
        MY_API_KEY: 'k',
        SAFE_SETTING: 'visible',
        UNLISTED_SETTING: 'hidden',
        DUMP_DIR: dumpDir,
        GITHUB_ENV: join(dumpDir, 'github-env'),
        GITHUB_PATH: join(dumpDir, 'github-path'),
      },
    });
    expect(result.code, result.stdout).toBe(0);
    const dumps = readdirSync(dumpDir).filter((f) => f.startsWith('env-'));
    expect(dumps.length).toBeGreaterThanOrEqual(1);
    for (const file of dumps) {
      const env = JSON.parse(readFileSync(join(dumpDir, file), 'utf8')) as Record<string, string>;
      const names = Object.keys(env);
      expect(names.filter((n) => n.startsWith('INPUT_'))).toEqual([]);
      expect(names.filter((n) => n.startsWith('ACTIONS_'))).toEqual([]);
      expect(names).not.toContain('GITHUB_TOKEN');
      expect(names).not.toContain('NPM_TOKEN');
      expect(names).not.toContain('MY_API_KEY');
      expect(JSON.stringify(env)).not.toContain('ghs_secret_token_for_tests');
      expect(env.SAFE_SETTING).toBe('visible');
      // Only an allowlist plus the names in the env input: nothing else of the job's environment.
      expect(names).not.toContain('UNLISTED_SETTING');
      expect(names.filter((n) => /^GITHUB_/.test(n))).toEqual([]);
      expect(names).toContain('PATH');
      expect(env.PORT).toMatch(/^\d+$/);
    }
    // Fork PR: the token cannot write; the job still succeeds with a warning and a summary.
    expect(result.stdout).toMatch(/::warning::.*cannot comment/);
    expect(result.summary).toContain('hotpath');
    expect(result.outputs['comment-url']).toBe('');
  });

  it('names the side and shows the last output lines when the server never becomes ready', async () => {
    const slow = `console.log('connecting to the database...'); setInterval(() => {}, 1000);`;
    const repo = makeRepo(join(root, 'slow'), { 'server.js': slow }, {});
    const result = await runAction({
      repo,
      apiUrl: github.url,
      inputs: { start: 'node server.js', ...ONE_ROUND },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/::error::HP_COMPARE_SERVER_NOT_READY: base server/);
    expect(result.stdout).toContain('connecting to the database...');
  });

  it('names the side and shows the last output lines when the server exits early', async () => {
    const crash = `console.error('Error: missing DATABASE_URL'); process.exit(3);`;
    const ok = `require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');`;
    const repo = makeRepo(join(root, 'crash'), { 'server.js': ok }, { 'server.js': crash });
    const result = await runAction({
      repo,
      apiUrl: github.url,
      inputs: { start: 'node server.js', ...ONE_ROUND },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/::error::HP_COMPARE_SERVER_EXITED: head server/);
    expect(result.stdout).toMatch(/exited with code 3/);
    expect(result.stdout).toContain('missing DATABASE_URL');
  });

  it('a cancelled job (SIGTERM) stops every server and removes the worktrees', async () => {
    const ok = `require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');`;
    const repo = makeRepo(join(root, 'cancel'), { 'server.js': ok }, { 'server.js': `${ok}\n// head` });
    let action = -1;
    const servers = () => serversRunning('server.js', 'HOTPATH_PROBE_DIR=', action);
    const seen: number[] = [];
    const run = await runAction({
      repo,
      apiUrl: github.url,
      inputs: { start: 'node server.js', duration: '60', warmup: '0', rounds: '1', connections: '1' },
      onSpawn: (child) => {
        action = child.pid ?? -1;
        const poll = setInterval(() => {
          seen.push(...servers());
          if (seen.length > 0) {
            clearInterval(poll);
            child.kill('SIGTERM');
          }
        }, 100);
        child.once('exit', () => clearInterval(poll));
      },
    });
    expect(seen.length).toBeGreaterThan(0);
    expect(run.stdout).toMatch(/::error::HP_COMPARE_ABORTED: .*SIGTERM/);
    // The Action exits only after every server has ended, its last thread included.
    expect(leftAlive(seen)).toEqual([]);
    expect(servers()).toEqual([]);
    const worktrees = execFileSync('git', ['worktree', 'list'], { cwd: repo.dir, encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(worktrees).toHaveLength(1);
  });
});
