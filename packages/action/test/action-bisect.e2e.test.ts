import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeBisectRepo } from '../../compare/test/helpers/bisect-repo.js';
import { pushEvent, runAction, type TempRepo } from './helpers/action-run.js';
import { type FakeGitHub, startFakeGitHub } from './helpers/fake-github.js';

// The bisect modes as a drift workflow runs them: bisect-measure searches a step range on real
// worktrees (no token), bisect-record reads its results folder (the artifact) and names the
// culprit and its pull request in a comment on the open drift issue (a recording stand-in for the
// API). Short windows and a 3× step keep each comparison to a few seconds.

const BASE = 200_000;
const FAST = {
  start: 'node server.js',
  url: '/',
  install: 'none',
  duration: '0.5',
  warmup: '0.2',
  connections: '2',
  'max-rounds': '8',
  'max-time': '40',
  threshold: '20',
  profiler: 'none',
  memory: 'off',
  waiting: 'off',
  metrics: 'cpuPerRequest',
};

describe('modes bisect-measure and bisect-record: the drift issue names the commit', () => {
  let root: string;
  let repo: TempRepo;
  let shas: string[];
  let github: FakeGitHub;
  let results: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-bisect-action-'));
    const dir = join(root, 'repo');
    mkdirSync(dir);
    // commits 0..2, the step at 1: the one probe, 1 against 0, shows the step and is the culprit's
    // own comparison (one comparison keeps the test short; bisect.test.ts searches longer ranges)
    shas = makeBisectRepo(dir, [BASE, 3 * BASE, 3 * BASE]);
    repo = { dir, baseSha: shas[0] as string, headSha: shas[2] as string };
    results = join(root, 'results');
    github = await startFakeGitHub();
    github.issues.push({
      number: 1,
      title: 'hotpath: CPU per request drifted +200 % since v1.0.0',
      body: '<!-- hotpath-drift -->\nSince v1.0.0 the branch drifted beyond the 20 % threshold.',
      state: 'open',
      html_url: 'https://github.example/o/r/issues/1',
      user: { login: 'github-actions[bot]' },
    });
    github.commitPulls[shas[1] as string] = [{ number: 12, merged_at: '2026-12-01T00:00:00Z' }];
  });

  /** A bisect-record run on a push, reading the results folder the measure job wrote. */
  const record = () =>
    runAction({
      repo,
      inputs: { mode: 'bisect-record', results },
      apiUrl: github.url,
      event: pushEvent,
      eventName: 'push',
    });

  afterAll(async () => {
    await github.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('bisect-measure finds the commit without a token and writes the search for the record job', async () => {
    const run = await runAction({
      repo,
      inputs: {
        ...FAST,
        mode: 'bisect-measure',
        good: shas[0] as string,
        bad: shas[2] as string,
        results,
        'github-token': '',
      },
      apiUrl: github.url,
      event: pushEvent,
      eventName: 'push',
    });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.outputs['bisect-conclusion']).toBe('culprit');
    expect(run.outputs.culprit).toBe(shas[1]);
    expect(run.stdout).toMatch(/step 1: .*regressed \(the step S the rest are placed by\)/);
    const search = JSON.parse(readFileSync(join(results, 'report.json'), 'utf8'));
    expect(search.schema).toBe('hotpath-bisect/1');
    expect(search.comparisons).toBe(1);
    expect(github.requests).toEqual([]);
  }, 180_000);

  it('bisect-record names the culprit and its pull request on the drift issue, once', async () => {
    const run = await record();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.outputs).toMatchObject({
      'bisect-conclusion': 'culprit',
      culprit: shas[1],
      'culprit-pull-request': '12',
      'issue-url': 'https://github.example/o/r/issues/1',
    });
    expect(github.comments).toHaveLength(1);
    const body = github.comments[0]?.body ?? '';
    expect(body.split('\n')[0]).toBe('<!-- hotpath-bisect -->');
    expect(body).toContain(`**hotpath bisect: the step is \`${shas[1]?.slice(0, 12)}\`** (PR #12)`);
    expect(body).toMatch(/its own comparison against its parent: cpuPerRequest \+\d/);
    expect(run.summary).toContain(`\`${shas[1]?.slice(0, 12)}\``);
    // a second record edits the same comment
    expect((await record()).code).toBe(0);
    expect(github.comments).toHaveLength(1);
  }, 60_000);

  it('a tampered search is refused with one line; hostile subjects are shown as text', async () => {
    const file = join(results, 'report.json');
    const search = JSON.parse(readFileSync(file, 'utf8'));
    const hostile = 'fix @octocat [click](https://evil.example) <img src=x> #3 ::warning::x';
    search.culprit.subject = hostile;
    for (const c of search.commits) c.subject = hostile;
    search.why = hostile;
    writeFileSync(file, JSON.stringify(search));
    const before = github.comments[0]?.body;
    const ok = await record();
    expect(ok.code, ok.stdout).toBe(0);
    // fake-github checks every comment renders no link, mention, reference or HTML (close() fails)
    expect(github.comments[0]?.body).not.toBe(before);
    expect(github.comments[0]?.body).toContain('fix @\u200boctocat \\[click\\]');

    search.culprit.sha = 'not-a-commit';
    writeFileSync(file, JSON.stringify(search));
    const writes = github.requests.filter((r) => r.method !== 'GET').length;
    const bad = await record();
    expect(bad.code).not.toBe(0);
    const errors = bad.stdout.split('\n').filter((l) => l.startsWith('::error::'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/HP_COMPARE_RESULTS: bisect search .*culprit\.sha: expected a commit id/);
    expect(github.requests.filter((r) => r.method !== 'GET').length).toBe(writes);
  }, 60_000);

  it('bisect-measure without good and bad, or on a pull request, says what it needs', async () => {
    const missing = await runAction({
      repo,
      inputs: { ...FAST, mode: 'bisect-measure', 'github-token': '' },
      apiUrl: github.url,
      event: pushEvent,
      eventName: 'push',
    });
    expect(missing.stdout).toMatch(
      /::error::HP_ACTION_INVALID_INPUT: mode bisect-measure needs the inputs good and bad/,
    );
    const onPr = await runAction({
      repo,
      inputs: { ...FAST, mode: 'bisect-measure', good: shas[0] as string, bad: shas[2] as string },
      apiUrl: github.url,
    });
    expect(onPr.stdout).toMatch(
      /::error::HP_ACTION_INVALID_INPUT: mode bisect-measure measures the branch's own commits/,
    );
    const option = await runAction({
      repo,
      inputs: { ...FAST, mode: 'bisect-measure', good: '--upload-pack=x', bad: shas[2] as string },
      apiUrl: github.url,
      event: pushEvent,
      eventName: 'push',
    });
    expect(option.stdout).toMatch(
      /::error::HP_ACTION_INVALID_INPUT: invalid input "good": expected a commit, tag or branch/,
    );
  }, 60_000);
});
