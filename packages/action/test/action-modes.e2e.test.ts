import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN } from '../../compare/test/helpers/repo.js';
import { makeRepo, runAction, type TempRepo } from './helpers/action-run.js';
import { defined } from './helpers/defined.js';
import { type FakeGitHub, startFakeGitHub } from './helpers/fake-github.js';

/** Base hashes 2 000 PBKDF2 iterations per request, head 6 000: a clearly slower head. */
const server = (iterations: number) => `const crypto = require('node:crypto');
require('node:http').createServer((req, res) => {
  res.end(crypto.pbkdf2Sync('pw', 'salt', ${iterations}, 32, 'sha256').toString('hex'));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

// The two jobs' plumbing is the subject: no memory edges (their collections cost a fifth of a short run).
const FAST = {
  start: 'node server.js',
  duration: '0.8',
  warmup: '0.2',
  rounds: '4',
  connections: '2',
  memory: 'off',
};

describe('two jobs: measure without a token (matrix shards), report from the results', () => {
  let root: string;
  let repo: TempRepo;
  let github: FakeGitHub;
  let results: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-modes-'));
    repo = makeRepo(root, { 'server.js': server(2000) }, { 'server.js': server(6000) });
    github = await startFakeGitHub();
    results = join(root, 'downloaded');
    mkdirSync(results);
  });

  afterAll(async () => {
    await github.close();
    rmSync(root, { recursive: true, force: true });
  });

  const workflowRun = () => ({
    action: 'completed',
    workflow_run: {
      id: 99,
      event: 'pull_request',
      head_sha: repo.headSha,
      head_branch: 'feature',
      head_repository: { full_name: 'fork/r', owner: { login: 'fork' } },
    },
    repository: { name: 'r', owner: { login: 'o' }, html_url: 'https://github.example/o/r' },
  });

  it('measure: two shards with no token anywhere write their results and call no API', async () => {
    for (const shard of ['1/2', '2/2']) {
      // Each shard's artifact is downloaded into its own folder, as download-artifact does.
      const run = await runAction({
        repo,
        apiUrl: github.url,
        noToken: true,
        env: { RUNNER_NAME: `runner-${shard[0]}` },
        inputs: { ...FAST, mode: 'measure', shard, results: join(results, `hotpath-results-${shard[0]}`) },
      });
      expect(run.stdout.match(/::error::.*/)?.[0], run.stdout).toBeUndefined();
      expect(run.code).toBe(0);
      expect(
        existsSync(join(defined(run.outputs.results, 'the results output'), 'hotpath-results.json')),
      ).toBe(true);
      expect(run.outputs.regressed).toBeUndefined();
    }
    expect(github.requests).toEqual([]);
    expect(readdirSync(join(results, 'hotpath-results-2'))).toEqual(['shard-2-of-2']);
  });

  it('report (workflow_run): finds the PR through the API, merges both shards, comments once, edits on a re-run, leaves others’ markers alone', async () => {
    // Someone else's comment that carries hotpath's marker: it must not be edited.
    github.comments.push({
      id: 1,
      body: '<!-- hotpath-report -->\nfake all-clear',
      html_url: 'https://github.example/pull/7#issuecomment-1',
      user: { login: 'mallory' },
    });
    github.pulls.push(
      {
        number: 6,
        state: 'open',
        base: { sha: repo.baseSha, ref: 'main' },
        head: {
          sha: 'f'.repeat(40),
          ref: 'feature',
          repo: { full_name: 'fork/r', html_url: 'https://github.example/fork/r' },
        },
      },
      {
        number: 7,
        state: 'open',
        base: { sha: repo.baseSha, ref: 'main' },
        head: {
          sha: repo.headSha,
          ref: 'feature',
          repo: { full_name: 'fork/r', html_url: 'https://github.example/fork/r' },
        },
      },
    );
    github.artifacts[99] = [
      { id: 501, name: 'hotpath-results-1' },
      { id: 502, name: 'hotpath-results-2' },
    ];
    const report = () =>
      runAction({
        repo,
        apiUrl: github.url,
        eventName: 'workflow_run',
        event: workflowRun(),
        inputs: { mode: 'report', results },
      });
    const first = await report();
    expect(first.stdout.match(/::error::.*/)?.[0], first.stdout).toBeUndefined();
    expect(first.code).toBe(0);
    expect(first.outputs.regressed, first.summary).toBe('true');
    expect(first.outputs.shards).toBe('2');
    // requests/s, a wall-clock metric, leaves out pairs a neighbour spoiled; with none left the
    // output is empty (unknown), never a 0 that reads as "unchanged"
    const rps = JSON.parse(
      readFileSync(defined(first.outputs.report, 'the report'), 'utf8'),
    ).scenarios[0].metrics.find((m: { metric: string }) => m.metric === 'requestsPerSecond');
    if (rps.pairs === 0) expect(first.outputs['throughput-change']).toBe('');
    else expect(Number(first.outputs['throughput-change'])).toBeLessThan(-10);
    const mine = github.comments.filter((c) => c.user.login === 'github-actions[bot]');
    expect(mine).toHaveLength(1);
    expect(github.requests.some((r) => r.method === 'POST' && r.url === '/repos/o/r/issues/7/comments')).toBe(
      true,
    );
    const body = defined(mine[0], 'our comment').body;
    expect(body.split('\n')[0]).toBe('<!-- hotpath-report -->');
    expect(body).toContain(
      `Compared base \`${repo.baseSha.slice(0, 12)}\` with head \`${repo.headSha.slice(0, 12)}\` (PR #7) · 2 shards, 8 rounds per side.`,
    );
    expect(body).toContain('https://github.example/o/r/actions/runs/99/artifacts/501');
    expect(body).toContain(
      `npx -p @hotpath/compare hotpath compare --base ${repo.baseSha.slice(0, 12)} --head ${repo.headSha.slice(0, 12)}`,
    );
    expect(github.comments.find((c) => c.id === 1)?.body).toBe('<!-- hotpath-report -->\nfake all-clear');
    // The machines that measured (one line per runner), not the report job's.
    expect(body).toContain('- **measured on 2 machines**:');
    expect(body).toMatch(/^ {2}- `runner-1`: Node v\d+/m);
    expect(body).toMatch(/^ {2}- `runner-2`: Node v\d+/m);

    // The CLI's `hotpath report` on the same shards goes through the same report(): same JSON,
    // but for what only the Action adds (source links) and where the files went.
    const cli = spawnSync(
      process.execPath,
      [CLI_BIN, 'report', results, '--json', '--out', join(root, 'cli-report')],
      {
        encoding: 'utf8',
      },
    );
    expect(cli.status, cli.stderr).toBe(0);
    const comparable = (text: string) => {
      const json = JSON.parse(text) as { links?: unknown; settings: { out?: string } };
      delete json.links;
      delete json.settings.out;
      return json;
    };
    expect(comparable(cli.stdout)).toEqual(comparable(readFileSync(first.outputs.report ?? '', 'utf8')));

    const second = await report();
    expect(second.code).toBe(0);
    expect(github.comments.filter((c) => c.user.login === 'github-actions[bot]')).toHaveLength(1);
    expect(github.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
    expect(github.requests.filter((r) => r.method === 'PATCH').map((r) => r.url)).toEqual([
      `/repos/o/r/issues/comments/${defined(mine[0], 'our comment').id}`,
    ]);
    expect(github.comments.find((c) => c.id === 1)?.body).toBe('<!-- hotpath-report -->\nfake all-clear');
  });

  it('report: no results is a clear failure, and a comment-key keeps a separate sticky comment', async () => {
    const empty = await runAction({
      repo,
      apiUrl: github.url,
      eventName: 'workflow_run',
      event: workflowRun(),
      inputs: { mode: 'report', results: join(root, 'nothing-here') },
    });
    expect(empty.code).toBe(1);
    expect(empty.stdout).toMatch(/::error::HP_COMPARE_RESULTS: no hotpath-results.json below/);
    const keyed = await runAction({
      repo,
      apiUrl: github.url,
      eventName: 'workflow_run',
      event: workflowRun(),
      inputs: { mode: 'report', results, 'comment-key': 'nightly' },
    });
    expect(keyed.code).toBe(0);
    expect(github.comments.filter((c) => c.body.startsWith('<!-- hotpath-report:nightly -->'))).toHaveLength(
      1,
    );
  });

  it('refuses to measure on pull_request_target unless allowed', async () => {
    const run = await runAction({
      repo,
      apiUrl: github.url,
      eventName: 'pull_request_target',
      inputs: { ...FAST, mode: 'measure', results: join(root, 'prt') },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /::error::HP_ACTION_PULL_REQUEST_TARGET: mode measure runs the pull request's code/,
    );
    expect(existsSync(join(root, 'prt'))).toBe(false);
  });
});
