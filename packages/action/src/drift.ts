// mode drift: on a push to the default branch or a schedule, the branch head against a fixed
// reference (the highest release tag, or a pinned ref), with the same paired rounds as a pull
// request; the run's point is appended to the history branch, the trend goes to the job summary,
// and one issue says when the drift exceeds the threshold. The code measured is the repository's
// own (never a pull request's): the event is refused otherwise. The token is used only after
// every process the measurement started has stopped, and never written to .git/config.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as core from '@actions/core';
import * as github from '@actions/github';
import { render, writeReport } from '@hotpath/compare';
import {
  analyseSeries,
  appendToHistoryBranch,
  type DriftAnalysis,
  driftIssueMarker,
  issueAction,
  measureDrift,
  renderDriftIssue,
  renderTrendMarkdown,
} from '@hotpath/compare/internal';
import { HotpathActionError } from './errors.js';
import { gitHead } from './git.js';
import { tokenIdentity } from './github.js';
import type { ActionOptions } from './inputs.js';
import { logSafe, withCommandsStopped } from './log.js';
import { serverUrl, throughputOutput } from './publish.js';
import { measureSettings } from './settings.js';
import { installV8Profiler } from './v8-profiler.js';

const log = (line: string) => process.stdout.write(`${line}\n`);

/** Events whose code is the repository's own: drift never measures a pull request's code. */
const DRIFT_EVENTS = ['push', 'schedule', 'workflow_dispatch'];

/** The REST calls the drift issue needs (a subset of Octokit's). */
export interface IssuesApi {
  listOpen(page: number): Promise<
    {
      number: number;
      body?: string | null;
      html_url: string;
      user?: { login: string } | null;
      pull_request?: unknown;
    }[]
  >;
  create(title: string, body: string): Promise<{ number: number; html_url: string }>;
  update(
    number: number,
    fields: { title: string; body: string; state?: 'closed' },
  ): Promise<{ number: number; html_url: string }>;
}

/** hotpath's open drift issue of this key: the first open issue by the token's identity whose first line is the marker. */
export async function findDriftIssue(api: IssuesApi, marker: string, author: string) {
  for (let page = 1; page <= 20; page++) {
    const issues = await api.listOpen(page);
    const found = issues.find(
      (i) => !i.pull_request && i.user?.login === author && (i.body ?? '').split('\n', 1)[0] === marker,
    );
    if (found) return found;
    if (issues.length < 100) break;
  }
  return undefined;
}

/** Opens, updates or closes the drift issue; returns what it did and the issue's URL. */
export async function syncDriftIssue(
  api: IssuesApi,
  author: string,
  analysis: DriftAnalysis,
  options: { key?: string; runUrl?: string },
): Promise<{ action: string; url: string }> {
  const marker = driftIssueMarker(options.key);
  const open = await findDriftIssue(api, marker, author);
  const action = issueAction(analysis, open !== undefined);
  const { title, body } = renderDriftIssue(analysis, options);
  if (action === 'create') return { action, url: (await api.create(title, body)).html_url };
  if (action === 'update' && open)
    return { action, url: (await api.update(open.number, { title, body })).html_url };
  if (action === 'close' && open)
    return { action, url: (await api.update(open.number, { title, body, state: 'closed' })).html_url };
  return { action: 'none', url: '' };
}

function octokitIssues(
  octokit: ReturnType<typeof github.getOctokit>,
  owner: string,
  repo: string,
): IssuesApi {
  return {
    listOpen: async (page) =>
      (await octokit.rest.issues.listForRepo({ owner, repo, state: 'open', per_page: 100, page })).data,
    create: async (title, body) => (await octokit.rest.issues.create({ owner, repo, title, body })).data,
    update: async (number, fields) =>
      (await octokit.rest.issues.update({ owner, repo, issue_number: number, ...fields })).data,
  };
}

/**
 * git configuration (as environment, never on disk or in argv) that lets the push use the token,
 * unless the checkout already carries credentials (actions/checkout's persist-credentials).
 */
async function pushCredentials(workspace: string, token: string): Promise<NodeJS.ProcessEnv> {
  if (!token) return {};
  const { execFile } = await import('node:child_process');
  const configured = await new Promise<boolean>((resolve) =>
    execFile('git', ['config', '--get-regexp', '^http\\..*\\.extraheader$'], { cwd: workspace }, (err, out) =>
      resolve(!err && String(out).trim() !== ''),
    ),
  );
  if (configured) return {};
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  core.setSecret(basic);
  return {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: `http.${serverUrl()}/.extraheader`,
    GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
  };
}

export async function runDriftMode(
  workspace: string,
  options: ActionOptions,
  signal: AbortSignal,
): Promise<void> {
  const { eventName } = github.context;
  if (!DRIFT_EVENTS.includes(eventName))
    throw new HotpathActionError(
      'HP_ACTION_INVALID_INPUT',
      `mode drift measures the branch's own code and writes the history branch: run it on push, schedule or workflow_dispatch, not on ${JSON.stringify(eventName)}`,
    );
  const settings = await measureSettings(workspace, options, signal);
  const temp = process.env.RUNNER_TEMP ?? tmpdir();
  const work = mkdtempSync(join(temp, 'hotpath-drift-'));
  const headSha = process.env.GITHUB_SHA || (await gitHead(workspace));
  let run: Awaited<ReturnType<typeof measureDrift>>;
  try {
    const extraEnv: Record<string, string> = {};
    const warnings: string[] = [];
    if (settings.profiler === 'cpuprofile') {
      const path = await installV8Profiler(join(work, 'v8-profiler'), process.env, warnings, signal);
      if (path) extraEnv.HOTPATH_V8_PROFILER_PATH = path;
    }
    log(`hotpath: drift of ${headSha.slice(0, 12)} against ${logSafe(options.reference)}`);
    run = await withCommandsStopped(log, () =>
      measureDrift(settings, options.reference, {
        baseDir: workspace,
        allowlistEnv: true,
        extraEnv,
        signal,
        warnings,
        head: headSha,
        onProgress: (e) => log(logSafe(e.message)),
      }),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const files = writeReport(join(temp, 'hotpath-report'), run.report);
  core.setOutput('report', files.report);
  core.setOutput('regressed', String(run.report.regressed));
  core.setOutput('throughput-change', throughputOutput(run.report));

  const token = options['github-token'];
  const pushed = await appendToHistoryBranch(
    { repo: workspace, branch: options['history-branch'], env: await pushCredentials(workspace, token) },
    run.reference,
    run.point,
  );
  core.info(
    `hotpath: appended the run to ${options['history-branch']} (${pushed.commit.slice(0, 12)}, ${pushed.attempts} attempt${pushed.attempts > 1 ? 's' : ''})`,
  );
  const series = pushed.history.series.find((s) => s.reference.sha === run.reference.sha);
  if (!series)
    throw new HotpathActionError('HP_ACTION_GITHUB_API', 'the pushed history lacks this run (a bug)');
  const analysis = analyseSeries(series);
  core.setOutput('drift-exceeded', String(analysis.exceeded.length > 0));
  core.setOutput('drift-confirmed', String(analysis.confirmed));
  core.setOutput('drift-status', analysis.status);
  const markdown = `${renderTrendMarkdown(analysis, pushed.history)}\n<details><summary>This run: ${run.report.sides.head.sha?.slice(0, 12) ?? ''} vs ${logSafe(run.reference.ref).replace(/[^\w.+/-]/g, '_')}</summary>\n\n${render(run.report, { markdown: {} }).markdown}\n</details>\n`;
  if (process.env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(markdown).write();

  if (!options['drift-issue']) return;
  if (!token) {
    core.warning('hotpath: no github-token, so no drift issue (the job summary has the trend)');
    return;
  }
  const octokit = github.getOctokit(token);
  const { owner, repo } = github.context.repo;
  const runUrl = process.env.GITHUB_RUN_ID
    ? `${serverUrl()}/${owner}/${repo}/actions/runs/${process.env.GITHUB_RUN_ID}`
    : undefined;
  try {
    const result = await syncDriftIssue(
      octokitIssues(octokit, owner, repo),
      await tokenIdentity(octokit),
      analysis,
      {
        key: options['comment-key'],
        runUrl,
      },
    );
    core.setOutput('issue-url', result.url);
    core.info(`hotpath: drift issue: ${result.action}${result.url ? ` ${result.url}` : ''}`);
  } catch (err) {
    throw new HotpathActionError(
      'HP_ACTION_GITHUB_API',
      `writing the drift issue failed: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}
