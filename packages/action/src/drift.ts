// The drift modes: on a push to the default branch or a schedule, the branch head against a
// fixed reference (the highest release tag, or a pinned ref), with the same paired rounds as a
// pull request; the run's point is appended to the history branch, the trend goes to the job
// summary, and one issue says when the drift exceeds the threshold.
//
// Like a pull request's, a drift run is split in two jobs: `drift-measure` runs the repository's
// code (installs, builds, servers — and every dependency's scripts) in a job with a read-only
// token and writes the results; `drift-record`, in a job holding contents: write and issues:
// write, reads those results (validated, as mode report reads a pull request's), pushes the
// history and writes the issue, and runs no code of the repository. Any process started next to
// a token can read it (/proc/<ppid>/environ), whatever environment it was given. `drift` does
// both in one step, for a job that holds no write token or accepts the risk (it warns).
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as core from '@actions/core';
import * as github from '@actions/github';
import { type DriftResult, runDrift, runDriftMeasure, runDriftRecord } from '@hotpath/compare';
import { driftSummaryMarkdown, failureText, historyBranch } from '@hotpath/compare/internal';
import { withCodeRuntime } from './code-runtime.js';
import { driftIssue } from './drift-issue.js';
import { HotpathActionError } from './errors.js';
import { gitHead } from './git.js';
import type { ActionOptions } from './inputs.js';
import { logSafe } from './log.js';
import { serverUrl } from './publish.js';
import { measureSettings, reportRules } from './settings.js';

/** Events whose code is the repository's own: drift never measures a pull request's code. */
const DRIFT_EVENTS = ['push', 'schedule', 'workflow_dispatch'];

const reportDir = () => join(process.env.RUNNER_TEMP ?? tmpdir(), 'hotpath-report');

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

/** The event and branch every drift mode requires (the repository's own default branch). */
function refuseOtherEvent(mode: string): void {
  const { eventName, payload } = github.context;
  if (!DRIFT_EVENTS.includes(eventName))
    throw new HotpathActionError(
      'HP_ACTION_INVALID_INPUT',
      `mode ${mode} measures the branch's own code and writes the history branch: run it on push, schedule or workflow_dispatch, not on ${JSON.stringify(eventName)}`,
    );
  const repository = payload.repository as { default_branch?: unknown } | undefined;
  refuseOtherBranch(
    eventName,
    process.env.GITHUB_REF,
    typeof repository?.default_branch === 'string' ? repository.default_branch : undefined,
  );
}

/**
 * mode drift-measure: head against the reference into the results folder — the repository's code
 * runs here, so the job holds a read-only token and the Action warns when github-token is set.
 */
export async function runDriftMeasureMode(
  workspace: string,
  options: ActionOptions,
  resultsDir: string,
  signal: AbortSignal,
): Promise<void> {
  refuseOtherEvent('drift-measure');
  if (options['github-token'] !== '')
    core.warning(
      "hotpath: mode drift-measure calls no GitHub API, but github-token is set: the token stays in this step's environment, where the repository's servers and their dependencies can read it (/proc/<pid>/environ). Set github-token: '' in the measure job.",
    );
  const settings = await measureSettings(workspace, options, signal);
  const headSha = process.env.GITHUB_SHA || (await gitHead(workspace));
  const heading = `hotpath: drift of ${headSha.slice(0, 12)} against ${logSafe(options.reference)}`;
  const measured = await withCodeRuntime(workspace, settings, heading, signal, (runtime) =>
    runDriftMeasure(settings, {
      ...runtime,
      reference: options.reference,
      head: headSha,
      results: resultsDir,
    }),
  );
  core.setOutput('results', measured.results);
  core.info(
    `hotpath: drift results of ${headSha.slice(0, 12)} against ${logSafe(measured.reference.ref)} written to ${logSafe(measured.results)}; upload ${logSafe(options.results)} as an artifact for the drift-record job`,
  );
}

/**
 * mode drift-record: the measure job's results → report → point → the history branch, the
 * summary and the issue. Runs no code of the repository (a JSON config only, as mode report).
 */
export async function runDriftRecordMode(
  workspace: string,
  options: ActionOptions,
  resultsDir: string,
): Promise<void> {
  refuseOtherEvent('drift-record');
  const rules = reportRules(workspace, options);
  const pushEnv = await pushCredentials(workspace, options['github-token']);
  const result = await runDriftRecord([resultsDir], {
    history: historyBranch({ repo: workspace, branch: options['history-branch'], env: pushEnv }),
    out: reportDir(),
    rules,
    ...(process.env.GITHUB_SHA ? { head: process.env.GITHUB_SHA } : {}),
  });
  await publishDrift(result, options);
}

/**
 * mode drift: both halves in one step. The repository's code runs next to github-token, so the
 * Action warns when one is set; the push uses it after every process the measurement started has
 * stopped, and never writes it to .git/config.
 */
export async function runDriftMode(
  workspace: string,
  options: ActionOptions,
  signal: AbortSignal,
): Promise<void> {
  refuseOtherEvent('drift');
  const token = options['github-token'];
  if (token !== '')
    core.warning(
      "hotpath: mode drift runs the repository's code (installs, builds, servers) in the step that holds github-token, where any of those processes can read it (/proc/<pid>/environ): split the job into mode drift-measure (read-only token) and mode drift-record (contents: write, issues: write), see the README",
    );
  const settings = await measureSettings(workspace, options, signal);
  const headSha = process.env.GITHUB_SHA || (await gitHead(workspace));
  // Git's push credentials (environment for git only, never the servers'), made before the log
  // stops workflow commands: their mask must reach the runner.
  const pushEnv = await pushCredentials(workspace, token);
  const heading = `hotpath: drift of ${headSha.slice(0, 12)} against ${logSafe(options.reference)}`;
  const result = await withCodeRuntime(workspace, settings, heading, signal, (runtime) =>
    runDrift(settings, {
      ...runtime,
      reference: options.reference,
      head: headSha,
      // The push runs after every process the measurement started has stopped.
      history: historyBranch({ repo: workspace, branch: options['history-branch'], env: pushEnv }),
      out: reportDir(),
    }),
  );
  await publishDrift(result, options);
}

/** A recorded drift run's outputs, note, summary, issue and step status. */
async function publishDrift(result: DriftResult, options: ActionOptions): Promise<void> {
  for (const [name, value] of Object.entries(result.outputs)) core.setOutput(name, value);
  core.info(`hotpath: ${logSafe(result.note)}`);
  if (process.env.GITHUB_STEP_SUMMARY)
    await core.summary.addRaw(driftSummaryMarkdown(result.analysis, result.history, result.report)).write();
  await driftIssue(options, result.analysis);
  if (result.failed.failed) core.setFailed(failureText(result.failed));
}
