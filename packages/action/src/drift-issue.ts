// The drift issue: one open issue per drift key, found by its hidden marker and the token's
// identity, opened, updated or closed from the analysis (what to do is compare's issueAction; the
// text is compare's renderDriftIssue). Only the recording modes (drift-record, drift) call it.
import * as core from '@actions/core';
import * as github from '@actions/github';
import {
  type DriftAnalysis,
  driftIssueMarker,
  issueAction,
  renderDriftIssue,
} from '@hotpath/compare/internal';
import { HotpathActionError } from './errors.js';
import { tokenIdentity } from './github.js';
import type { ActionOptions } from './inputs.js';
import { serverUrl } from './publish.js';

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

/** The drift issue's calls through Octokit (honours GITHUB_API_URL). */
export function octokitIssues(
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

/** Opens, updates or closes the drift issue (drift-issue: true, with a token). */
export async function driftIssue(options: ActionOptions, analysis: DriftAnalysis): Promise<void> {
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
