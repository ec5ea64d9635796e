// The three front doors of a report — `hotpath report`, the Action's mode report and the API's
// runReport() — on the same recorded shard: the same report, the same outputs and the same fail
// decision, because each only reads its inputs and calls the run layer. A change to the fail
// rule, the alpha or the threshold's unit lands in verdict/policy.ts and all three follow.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The built package, as the Action's bundle and a user's test import it.
import { runReport } from '@hotpath/compare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN } from '../../compare/test/helpers/repo.js';
import { makeRepo, runAction, type TempRepo } from './helpers/action-run.js';
import { type FakeGitHub, startFakeGitHub } from './helpers/fake-github.js';

/** A shard recorded with `hotpath compare --results`: base async pbkdf2, head pbkdf2Sync (3 rounds). */
const RECORDED = new URL('../../compare/test/fixtures/recorded-shard/', import.meta.url).pathname;

/** The report as the doors wrote it, but for what differs by design: links (the Action's) and paths. */
function comparable(text: string) {
  const json = JSON.parse(text) as { links?: unknown; settings: { out?: string } };
  delete json.links;
  delete json.settings.out;
  return json;
}

/** Outputs but the report's path (each door writes its own folder). */
const withoutPath = ({ report: _report, ...rest }: Record<string, string>) => rest;

describe('one run layer behind every front door of a report', () => {
  let root: string;
  let repo: TempRepo;
  let github: FakeGitHub;
  let results: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-doors-'));
    repo = makeRepo(root, { 'server.js': '' }, { 'server.js': '// head\n' });
    results = join(root, 'results');
    cpSync(RECORDED, results, { recursive: true });
    github = await startFakeGitHub();
  });

  afterAll(async () => {
    await github.close();
    rmSync(root, { recursive: true, force: true });
  });

  // Four rule sets on a run whose verdict metrics are too noisy at the defaults (3 pairs):
  // inconclusive, failing only when asked; with requests/s alone it regressed, failing only when asked.
  const cases: {
    name: string;
    flags: string[];
    inputs: Record<string, string>;
    rules: Record<string, string | boolean>;
  }[] = [
    { name: 'the defaults', flags: [], inputs: {}, rules: {} },
    {
      name: 'fail on inconclusive',
      flags: ['--fail-on-inconclusive'],
      inputs: { 'fail-on-inconclusive': 'true' },
      rules: { failOnInconclusive: true },
    },
    {
      name: 'requests/s alone, fail on regression',
      flags: ['--metrics', 'requestsPerSecond', '--fail-on-regression'],
      inputs: { metrics: 'requestsPerSecond', 'fail-on-regression': 'true' },
      rules: { metrics: 'requestsPerSecond', failOnRegression: true },
    },
    {
      name: 'requests/s alone',
      flags: ['--metrics', 'requestsPerSecond'],
      inputs: { metrics: 'requestsPerSecond' },
      rules: { metrics: 'requestsPerSecond' },
    },
  ];

  for (const c of cases) {
    it(`${c.name}: the CLI, the Action and runReport() agree on the report, the outputs and the failure`, async () => {
      const cliOut = join(root, `cli-${cases.indexOf(c)}`);
      const cli = spawnSync(
        process.execPath,
        [CLI_BIN, 'report', results, '--json', '--out', cliOut, ...c.flags],
        {
          encoding: 'utf8',
        },
      );
      expect([0, 1], cli.stderr).toContain(cli.status);

      const action = await runAction({
        repo,
        apiUrl: github.url,
        inputs: { mode: 'report', results, comment: 'never', ...c.inputs },
      });

      const api = runReport([results], {
        out: join(root, `api-${cases.indexOf(c)}`),
        overrides: c.rules,
        overridesSource: 'flag',
      });

      const fromCli = comparable(cli.stdout);
      expect(comparable(readFileSync(action.outputs.report ?? '', 'utf8'))).toEqual(fromCli);
      expect(comparable(readFileSync(api.files.report, 'utf8'))).toEqual(fromCli);
      // the one fail decision: the CLI's exit status, the Action's failed step, the API's `failed`
      expect(cli.status).toBe(api.failed.failed ? 1 : 0);
      expect(action.code).toBe(api.failed.failed ? 1 : 0);
      expect(action.stdout.includes('::error::')).toBe(api.failed.failed);
      expect(withoutPath(action.outputs)).toEqual({ ...withoutPath(api.outputs), 'comment-url': '' });
      // the report files go where the door says, never where the results' recorded settings point
      expect(api.files.dir).toBe(join(root, `api-${cases.indexOf(c)}`));
    });
  }

  it('the rule sets give different decisions (the comparison above can fail)', () => {
    const decisions = cases.map((c) =>
      runReport([results], { out: join(root, 'decisions'), overrides: c.rules, overridesSource: 'flag' }),
    );
    expect(decisions.map((d) => [d.report.outcome, d.failed])).toEqual([
      ['inconclusive', { failed: false }],
      ['inconclusive', { failed: true, reason: 'inconclusive' }],
      ['regressed', { failed: true, reason: 'regressed' }],
      ['regressed', { failed: false }],
    ]);
  });
});
