import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, pushEvent, runAction, type TempRepo } from './helpers/action-run.js';
import { type FakeGitHub, startFakeGitHub } from './helpers/fake-github.js';

// Issue 67's High item: drift split like the pull-request flow. The measure job (mode
// drift-measure) runs the repository's servers with no write token anywhere a child can read —
// its own environment, its parent's, any ancestor's (/proc/<pid>/environ) — and the record job
// (mode drift-record) holds the token and starts none of the repository's code.

const WRITE_TOKEN = 'ghs_write_token_of_the_record_job';

/**
 * A server that, once started, writes every environment it can read — its own and each
 * ancestor's up to pid 1 — into DUMP/<pid>.json, then hashes PBKDF2 `iterations` times a request.
 */
const server = (dump: string, iterations: number) => `const fs = require('node:fs');
const crypto = require('node:crypto');
const seen = [];
let pid = process.pid;
for (let depth = 0; depth < 12 && pid > 1; depth++) {
  let environ = '';
  try { environ = fs.readFileSync('/proc/' + pid + '/environ', 'latin1'); } catch (e) { environ = 'unreadable: ' + e.code; }
  seen.push({ pid, environ });
  const stat = fs.readFileSync('/proc/' + pid + '/stat', 'latin1');
  pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}
fs.writeFileSync(${JSON.stringify(dump)} + '/' + process.pid + '.json', JSON.stringify(seen));
require('node:http').createServer((req, res) => {
  res.end(crypto.pbkdf2Sync('pw', 'salt', ${iterations}, 32, 'sha256').toString('hex'));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

const FAST = {
  start: 'node server.js',
  duration: '0.6',
  warmup: '0.2',
  rounds: '6',
  connections: '2',
  profiler: 'none',
  // the split of measure and report is the subject: no memory edges (a fifth of a run)
  memory: 'off',
};

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e',
    },
  }).trim();

const onPush = { eventName: 'push', event: pushEvent, env: { GITHUB_REF: 'refs/heads/main' } };

describe('drift in two jobs: drift-measure runs the code with no write token, drift-record writes', () => {
  let root: string;
  let dump: string;
  let repo: TempRepo;
  let remote: string;
  let results: string;
  let github: FakeGitHub;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-drift-split-'));
    dump = join(root, 'environments');
    mkdirSync(dump);
    repo = makeRepo(root, { 'server.js': server(dump, 2000) }, { 'server.js': server(dump, 8000) });
    git(repo.dir, 'tag', 'v1.0.0', repo.baseSha);
    remote = join(root, 'remote.git');
    git(root, 'init', '-q', '--bare', remote);
    git(repo.dir, 'remote', 'add', 'origin', remote);
    git(repo.dir, 'push', '-q', 'origin', 'main', '--tags');
    results = join(root, 'results');
    github = await startFakeGitHub();
  });

  afterAll(async () => {
    await github.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("drift-measure: every server's own and ancestors' environments hold no token; no API call, no push", async () => {
    let actionPid = 0;
    // The measure job as the README writes it: permissions contents: read, github-token: ''.
    const run = await runAction({
      repo,
      inputs: { ...FAST, mode: 'drift-measure', results, 'github-token': '' },
      apiUrl: github.url,
      noToken: true,
      ...onPush,
      onSpawn: (child) => {
        actionPid = child.pid ?? 0;
      },
    });
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).not.toMatch(/::error::|::warning::/);
    expect(run.outputs.results).toBe(join(results, 'shard-1-of-1'));
    expect(existsSync(join(results, 'shard-1-of-1', 'hotpath-results.json'))).toBe(true);
    expect(github.requests).toEqual([]);
    expect(() => git(remote, 'show', 'hotpath-history:history.json')).toThrow();

    // base's and head's servers, every round: each read its own and its ancestors' environments
    const files = readdirSync(dump);
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) {
      const seen: { pid: number; environ: string }[] = JSON.parse(readFileSync(join(dump, file), 'utf8'));
      // the chain reached the Action's own process (the parent the old drift mode leaked through);
      // above it is the test runner, not the job
      const upToAction = seen.findIndex((s) => s.pid === actionPid);
      expect(upToAction).toBeGreaterThanOrEqual(1);
      for (const { environ } of seen.slice(0, upToAction + 1)) {
        expect(environ).not.toMatch(/^unreadable/);
        // variables end in NUL: an empty github-token input (the README's) holds nothing
        expect(environ.split('\0').filter((v) => /ghs_|TOKEN=./.test(v))).toEqual([]);
      }
    }
  }, 90_000);

  it('drift-record: starts no server, pushes the point of this commit and opens the drift issue', async () => {
    rmSync(dump, { recursive: true, force: true });
    mkdirSync(dump);
    const run = await runAction({
      repo,
      // the record job copies the measure job's inputs: the measurement's are ignored (warned)
      inputs: { ...FAST, mode: 'drift-record', results, 'github-token': WRITE_TOKEN },
      apiUrl: github.url,
      ...onPush,
    });
    expect(run.code, run.stdout).toBe(0);
    // no process of the repository ran: no server wrote its environments
    expect(readdirSync(dump)).toEqual([]);
    const history = JSON.parse(git(remote, 'show', 'hotpath-history:history.json'));
    expect(history.series[0].reference).toEqual({ ref: 'v1.0.0', sha: repo.baseSha });
    expect(history.series[0].points.map((p: { commit: string }) => p.commit)).toEqual([repo.headSha]);
    expect(run.outputs['drift-exceeded']).toBe('true');
    expect(run.summary).toContain('```mermaid\nxychart-beta');
    // 4× the PBKDF2 work: surely beyond the threshold after one run, so the issue opens
    expect(github.issues).toHaveLength(1);
    expect(github.requests.every((r) => r.authorization === `token ${WRITE_TOKEN}`)).toBe(true);
    expect(git(repo.dir, 'config', '--list')).not.toMatch(/extraheader|ghs_/);
  }, 60_000);

  it("drift-record refuses results of another commit than the run's (a point joins only as its own commit)", async () => {
    const run = await runAction({
      repo,
      inputs: { mode: 'drift-record', results, 'github-token': WRITE_TOKEN },
      apiUrl: github.url,
      ...onPush,
      env: { ...onPush.env, GITHUB_SHA: repo.baseSha },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /::error::HP_COMPARE_RESULTS: the results measured [0-9a-f]{12}, not this run's commit/,
    );
    const history = JSON.parse(git(remote, 'show', 'hotpath-history:history.json'));
    expect(history.series[0].points).toHaveLength(1);
  }, 30_000);

  it('mode drift (both in one step) warns when it holds a token', async () => {
    const run = await runAction({
      repo,
      inputs: { ...FAST, mode: 'drift', rounds: '2', 'drift-issue': 'false' },
      apiUrl: github.url,
      ...onPush,
    });
    expect(run.stdout).toMatch(
      /::warning::hotpath: mode drift runs the repository's code .* split the job into mode drift-measure/,
    );
  }, 60_000);
});
