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
import { type DriftResult, runDrift } from '@hotpath/compare';
import {
  type DriftAnalysis,
  driftIssueMarker,
  driftSummaryMarkdown,
  failureText,
  historyBranch,
  issueAction,
  renderDriftIssue,
} from '@hotpath/compare/internal';
import { HotpathActionError } from './errors.js';
import { gitHead } from './git.js';
import { tokenIdentity } from './github.js';
import type { ActionOptions } from './inputs.js';
import { logSafe, withCommandsStopped } from './log.js';
import { serverUrl } from './publish.js';
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

/**
 * The branch a drift run may measure: the repository's default branch (a run dispatched on a
 * feature branch would append that branch's point to the default branch's series, and could
 * close the drift issue). A schedule always runs on the default branch.
 */
export function refuseOtherBranch(
  eventName: string,
  ref: string | undefined,
  defaultBranch: string | undefined,
) {
  if (eventName === 'schedule') return;
  if (!defaultBranch)
    throw new HotpathActionError(
      'HP_ACTION_INVALID_INPUT',
      "mode drift needs the repository's default branch from the event (repository.default_branch), and the event has none",
    );
  if (ref !== `refs/heads/${defaultBranch}`)
    throw new HotpathActionError(
      'HP_ACTION_INVALID_INPUT',
      `mode drift measures the default branch (${JSON.stringify(defaultBranch)}) only: this run is on ${JSON.stringify(ref ?? '')}, whose point would join the default branch's series`,
    );
}

/** Measures (PR-free code only), with the profiler installed if needed; then the token is used. */
async function measureDriftRun(
  workspace: string,
  options: ActionOptions,
  signal: AbortSignal,
): Promise<DriftResult> {
  const settings = await measureSettings(workspace, options, signal);
  const temp = process.env.RUNNER_TEMP ?? tmpdir();
  const work = mkdtempSync(join(temp, 'hotpath-drift-'));
  const headSha = process.env.GITHUB_SHA || (await gitHead(workspace));
  const token = options['github-token'];
  try {
    const extraEnv: Record<string, string> = {};
    const warnings: string[] = [];
    if (settings.profiler === 'cpuprofile') {
      const path = await installV8Profiler(join(work, 'v8-profiler'), process.env, warnings, signal);
      if (path) extraEnv.HOTPATH_V8_PROFILER_PATH = path;
    }
    // Git's push credentials (environment for git only, never the servers'), made before the log
    // stops workflow commands: their mask must reach the runner.
    const pushEnv = await pushCredentials(workspace, token);
    log(`hotpath: drift of ${headSha.slice(0, 12)} against ${logSafe(options.reference)}`);
    return await withCommandsStopped(log, () =>
      runDrift(settings, {
        reference: options.reference,
        head: headSha,
        // The push runs after every process the measurement started has stopped.
        history: historyBranch({ repo: workspace, branch: options['history-branch'], env: pushEnv }),
        out: join(temp, 'hotpath-report'),
        baseDir: workspace,
        allowlistEnv: true,
        extraEnv,
        signal,
        warnings,
        onProgress: (e) => log(logSafe(e.message)),
      }),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export async function runDriftMode(
  workspace: string,
  options: ActionOptions,
  signal: AbortSignal,
): Promise<void> {
  const { eventName, payload } = github.context;
  if (!DRIFT_EVENTS.includes(eventName))
    throw new HotpathActionError(
      'HP_ACTION_INVALID_INPUT',
      `mode drift measures the branch's own code and writes the history branch: run it on push, schedule or workflow_dispatch, not on ${JSON.stringify(eventName)}`,
    );
  const repository = payload.repository as { default_branch?: unknown } | undefined;
  refuseOtherBranch(
    eventName,
    process.env.GITHUB_REF,
    typeof repository?.default_branch === 'string' ? repository.default_branch : undefined,
  );
  const result = await measureDriftRun(workspace, options, signal);
  for (const [name, value] of Object.entries(result.outputs)) core.setOutput(name, value);
  core.info(`hotpath: ${logSafe(result.note)}`);
  if (process.env.GITHUB_STEP_SUMMARY)
    await core.summary.addRaw(driftSummaryMarkdown(result.analysis, result.history, result.report)).write();
  await driftIssue(options, result.analysis);
  if (result.failed.failed) core.setFailed(failureText(result.failed));
}

/** Opens, updates or closes the drift issue (drift-issue: true, with a token). */
async function driftIssue(options: ActionOptions, analysis: DriftAnalysis): Promise<void> {
  const token = options['github-token'];
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
      { key: options['comment-key'], runUrl },
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
