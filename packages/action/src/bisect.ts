// The bisect modes: from a drift step's range (drift-record's drift-step-good..drift-step-bad)
// to the commit that made it, and that commit named on the drift issue with its pull request.
//
// Split like drift: `bisect-measure` runs the repository's code (each step installs, builds and
// starts two commits' servers) with a read-only token and writes the search to the results
// folder; `bisect-record`, in a job holding issues: write, reads that search (validated: another
// job's artifact), asks the API for the culprit's pull request, writes the summary and the
// comment on the open drift issue, and runs no code of the repository.
import { join } from 'node:path';
import * as core from '@actions/core';
import * as github from '@actions/github';
import { runBisect } from '@hotpath/compare';
import {
  BISECT_FILE,
  type BisectSummary,
  bisectCommentMarker,
  driftIssueMarker,
  parseDuration,
  readBisectSearch,
  renderBisectMarkdown,
} from '@hotpath/compare/internal';
import { withCodeRuntime } from './code-runtime.js';
import { findDriftIssue, octokitIssues } from './drift-issue.js';
import { HotpathActionError } from './errors.js';
import { octokitComments, tokenIdentity, upsertStickyComment } from './github.js';
import type { ActionOptions } from './inputs.js';
import { logSafe } from './log.js';
import { measureSettings } from './settings.js';

/** Events whose code is the repository's own (a bisect never measures a pull request's code). */
const BISECT_EVENTS = ['push', 'schedule', 'workflow_dispatch', 'workflow_run'];

function refuseOtherEvent(mode: string): void {
  const { eventName } = github.context;
  if (!BISECT_EVENTS.includes(eventName))
    throw new HotpathActionError(
      'HP_ACTION_INVALID_INPUT',
      `mode ${mode} measures the branch's own commits: run it on push, schedule, workflow_dispatch or workflow_run (after a drift job), not on ${JSON.stringify(eventName)}`,
    );
}

/** mode bisect-measure: the search, written to the results folder for the bisect-record job. */
export async function runBisectMeasureMode(
  workspace: string,
  options: ActionOptions,
  resultsDir: string,
  signal: AbortSignal,
): Promise<void> {
  refuseOtherEvent('bisect-measure');
  if (!options.good || !options.bad)
    throw new HotpathActionError(
      'HP_ACTION_INVALID_INPUT',
      `mode bisect-measure needs the inputs good and bad (a drift-record job's drift-step-good and drift-step-bad outputs), got good ${JSON.stringify(options.good)} and bad ${JSON.stringify(options.bad)}`,
    );
  if (options['github-token'] !== '')
    core.warning(
      "hotpath: mode bisect-measure calls no GitHub API, but github-token is set: the token stays in this step's environment, where the repository's servers and their dependencies can read it (/proc/<pid>/environ). Set github-token: '' in the bisect-measure job.",
    );
  const settings = await measureSettings(workspace, options, signal);
  const heading = `hotpath: bisect of ${logSafe(options.good)}..${logSafe(options.bad)}`;
  const result = await withCodeRuntime(workspace, settings, heading, signal, (runtime) =>
    runBisect(settings, {
      ...runtime,
      good: options.good,
      bad: options.bad,
      budget: parseDuration(options['bisect-budget']) ?? 1800,
      out: resultsDir,
      onStep: (line) => core.info(logSafe(line)),
    }),
  );
  for (const [name, value] of Object.entries(result.outputs)) core.setOutput(name, value);
  core.setOutput('results', resultsDir);
  core.info(logSafe(result.text));
  core.info(
    `hotpath: the search is in ${logSafe(result.files.search)}; upload ${logSafe(options.results)} as an artifact for the bisect-record job`,
  );
  // A culprit is what the job is for, not a failure: the record job still needs the artifact.
}

/** The culprit's pull request: the first one merged that the API lists for the commit. */
async function pullOfCommit(
  octokit: ReturnType<typeof github.getOctokit>,
  sha: string,
): Promise<number | undefined> {
  const { owner, repo } = github.context.repo;
  const pulls = (
    await octokit.rest.repos.listPullRequestsAssociatedWithCommit({ owner, repo, commit_sha: sha })
  ).data as { number?: unknown; merged_at?: unknown }[];
  const merged = pulls.find((p) => typeof p.number === 'number' && p.merged_at) ?? pulls[0];
  return typeof merged?.number === 'number' && Number.isSafeInteger(merged.number)
    ? merged.number
    : undefined;
}

/**
 * mode bisect-record: the search a bisect-measure job wrote → the summary, the outputs, and (with
 * a token, when a drift issue of this key is open) one comment on it naming the commit and its
 * pull request, edited in place by the next search.
 */
export async function runBisectRecordMode(options: ActionOptions, resultsDir: string): Promise<void> {
  refuseOtherEvent('bisect-record');
  const search: BisectSummary = readBisectSearch(join(resultsDir, BISECT_FILE));
  const token = options['github-token'];
  const octokit = token ? github.getOctokit(token) : undefined;
  let pull: number | undefined;
  try {
    if (octokit && search.culprit) pull = await pullOfCommit(octokit, search.culprit.sha);
  } catch (err) {
    core.warning(
      `hotpath: the culprit's pull request could not be looked up: ${logSafe((err as Error).message)}`,
    );
  }
  core.setOutput('bisect-conclusion', search.conclusion);
  core.setOutput('culprit', search.culprit?.sha ?? '');
  core.setOutput('culprit-pull-request', pull === undefined ? '' : String(pull));
  if (process.env.GITHUB_STEP_SUMMARY)
    await core.summary.addRaw(renderBisectMarkdown(search, { pull })).write();
  core.info(
    `hotpath: bisect ${search.conclusion}${search.culprit ? ` ${search.culprit.sha.slice(0, 12)}${pull ? ` (PR #${pull})` : ''}` : ''}`,
  );
  if (!octokit) {
    core.warning(
      'hotpath: no github-token, so the drift issue does not name the culprit (the job summary has it)',
    );
    return;
  }
  const { owner, repo } = github.context.repo;
  try {
    const author = await tokenIdentity(octokit);
    const issue = await findDriftIssue(
      octokitIssues(octokit, owner, repo),
      driftIssueMarker(options['comment-key']),
      author,
    );
    if (!issue) {
      core.info('hotpath: no open drift issue of this key: the search is in the job summary only');
      return;
    }
    const body = renderBisectMarkdown(search, { pull, key: options['comment-key'], marker: true });
    const written = await upsertStickyComment(
      octokitComments(octokit, { owner, repo, number: issue.number }),
      bisectCommentMarker(options['comment-key']),
      body,
      author,
    );
    core.setOutput('issue-url', issue.html_url);
    core.info(`hotpath: drift issue #${issue.number}: bisect comment ${written.action} ${written.url}`);
  } catch (err) {
    throw new HotpathActionError(
      'HP_ACTION_GITHUB_API',
      `naming the culprit on the drift issue failed: ${(err as Error).message}`,
      { cause: err },
    );
  }
}
