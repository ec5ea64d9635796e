import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as core from '@actions/core';
import * as github from '@actions/github';
import {
  HotpathCompareError,
  type RunResult,
  runCompare,
  runMeasure,
  runReport,
  type Settings,
  type WrittenFiles,
} from '@hotpath/compare';
import { printable } from '@hotpath/compare/internal';
import { uploadReportArtifact } from './artifact-upload.js';
import { runBisectMeasureMode, runBisectRecordMode } from './bisect.js';
import { type CodeRuntime, withCodeRuntime } from './code-runtime.js';
import { runDriftMeasureMode, runDriftMode, runDriftRecordMode } from './drift.js';
import { HotpathActionError } from './errors.js';
import { gitHead } from './git.js';
import {
  type PullRequest,
  pullRequestFromEvent,
  pullRequestOfRun,
  triggeringRunFromEvent,
} from './github.js';
import { type ActionOptions, readActionOptions } from './inputs.js';
import { logSafe } from './log.js';
import { publish, serverUrl } from './publish.js';
import { measureSettings, reportRules } from './settings.js';

export { V8_PROFILER_VERSION } from './v8-profiler.js';

/**
 * Runs PR code (modes measure and all): the code runtime, and base and head as the pull request
 * names them — no API call, and everything the PR's code prints is inert in the log.
 */
async function withPullRequestRuntime<T>(
  workspace: string,
  settings: Settings,
  pr: PullRequest,
  signal: AbortSignal,
  run: (runtime: PullRequestRuntime) => Promise<T>,
): Promise<T> {
  // Head is what the workflow checked out (for pull_request: the merge of head into base).
  const headSha = await gitHead(workspace);
  const heading = `hotpath: base ${pr.baseSha.slice(0, 12)} vs head ${headSha.slice(0, 12)}`;
  return withCodeRuntime(workspace, settings, heading, signal, (runtime) =>
    run({
      ...runtime,
      refs: { base: { ref: pr.baseRef, sha: pr.baseSha }, head: { ref: pr.headRef, sha: headSha } },
    }),
  );
}

type PullRequestRuntime = CodeRuntime & Pick<Parameters<typeof runMeasure>[1], 'refs'>;

function refuseUnsafeEvent(options: ActionOptions): void {
  if (github.context.eventName === 'pull_request_target' && !options['allow-pull-request-target']) {
    throw new HotpathActionError(
      'HP_ACTION_PULL_REQUEST_TARGET',
      `mode ${options.mode} runs the pull request's code, and pull_request_target gives that code a write token and secrets: measure on pull_request (mode measure) and comment from a workflow_run job (mode report), or set allow-pull-request-target: true if you accept the risk`,
    );
  }
}

/** The pull request to report on: from the event, or for workflow_run from the API. */
async function reportTarget(
  octokit: ReturnType<typeof github.getOctokit> | undefined,
): Promise<{ pr: PullRequest; runId: number }> {
  const { eventName, payload } = github.context;
  if (eventName === 'workflow_run') {
    if (!octokit)
      throw new HotpathActionError(
        'HP_ACTION_GITHUB_API',
        'workflow_run needs github-token to find the pull request',
      );
    const run = triggeringRunFromEvent(payload);
    const pr = await pullRequestOfRun(run, async ({ head, page }) => {
      const { data } = await octokit.rest.pulls.list({
        owner: run.owner,
        repo: run.repo,
        state: 'open',
        per_page: 100,
        page,
        ...(head ? { head } : {}),
      });
      return data as unknown[];
    });
    return { pr, runId: run.runId };
  }
  return { pr: pullRequestFromEvent(eventName, payload), runId: Number(process.env.GITHUB_RUN_ID ?? 0) };
}

/** Source links point at the PR's head commit, in the fork for a fork's PR. */
const linksOf = (pr: PullRequest) => ({
  repositoryUrl: pr.fromFork ? pr.headRepositoryUrl : `${serverUrl()}/${pr.owner}/${pr.repo}`,
  sha: pr.headSha,
});

const reportDir = () => join(process.env.RUNNER_TEMP ?? tmpdir(), 'hotpath-report');

/**
 * Uploads the report folder (report.html, report.json, report.md, folded stacks, flame graphs)
 * as one artifact; its link for the comment, from hotpath's own parts (never from PR text).
 */
async function uploadReport(files: WrittenFiles, pr: PullRequest) {
  const upload = await uploadReportArtifact(files.dir, process.env);
  if (upload.state !== 'uploaded') {
    core.warning(`hotpath: the report files were not uploaded as an artifact: ${logSafe(upload.reason)}`);
    return undefined;
  }
  core.info(`hotpath: uploaded ${upload.files.length} files as artifact ${upload.name}`);
  const runId = process.env.GITHUB_RUN_ID;
  if (!upload.id || !runId || !/^\d+$/.test(runId)) return { links: [] };
  const url = `${serverUrl()}/${pr.owner}/${pr.repo}/actions/runs/${runId}/artifacts/${upload.id}`;
  const html = files.html && upload.files.includes(files.html) ? { name: upload.name, url } : undefined;
  return { links: [`[${upload.name}](${url})`], html };
}

/** After a report (modes report and all): its notes, the artifact, then publish. */
async function finish(
  result: RunResult,
  pr: PullRequest,
  options: ActionOptions,
  where: { runId: number; artifactLinks: boolean },
): Promise<void> {
  for (const note of result.files.notes) core.warning(`hotpath: ${logSafe(note)}`);
  const uploaded = options['upload-artifact'] ? await uploadReport(result.files, pr) : undefined;
  await publish(result, pr, options, {
    links: where.artifactLinks ? (uploaded?.links ?? []) : [],
    runId: where.runId,
    htmlArtifact: uploaded?.html,
  });
}

/** Mode measure: the pull request's rounds, raw results written for the report job; no API call. */
async function runMeasureMode(
  workspace: string,
  options: ActionOptions,
  resultsDir: string,
  signal: AbortSignal,
): Promise<void> {
  refuseUnsafeEvent(options);
  if (options['github-token'] !== '')
    core.warning(
      "hotpath: mode measure calls no GitHub API, but github-token is set: the token stays in this step's environment, where the pull request's code can read it (/proc/<pid>/environ). Set github-token: '' in the measure job.",
    );
  const settings = await measureSettings(workspace, options, signal);
  const pr = pullRequestFromEvent(github.context.eventName, github.context.payload);
  const measured = await withPullRequestRuntime(workspace, settings, pr, signal, (runtime) =>
    runMeasure(settings, { ...runtime, shard: options.shard, results: resultsDir }),
  );
  core.setOutput('results', measured.results ?? resultsDir);
  core.info(
    `hotpath: shard ${measured.shard.shard.index}/${measured.shard.shard.total} wrote its results to ${measured.results}; upload ${options.results} as an artifact for the report job`,
  );
}

/** The Action: modes measure, report and all — the GitHub edge around measure → report → render. */
export async function run(): Promise<void> {
  // A cancelled job sends SIGINT, then SIGTERM: stop every server, install and worktree, then
  // exit. The handlers stay until the end: a second signal must not kill the Action mid-cleanup
  // (its process groups would outlive it).
  const stop = new AbortController();
  const onSignal = (name: string) => () => {
    if (!stop.signal.aborted) stop.abort(new Error(`${name}: the job was cancelled`));
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  try {
    const options = readActionOptions((name) => core.getInput(name));
    const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
    const resultsDir = resolve(workspace, options.results);

    if (options.mode === 'measure') {
      await runMeasureMode(workspace, options, resultsDir, stop.signal);
      return;
    }

    if (options.mode === 'drift') {
      await runDriftMode(workspace, options, stop.signal);
      return;
    }
    if (options.mode === 'drift-measure') {
      await runDriftMeasureMode(workspace, options, resultsDir, stop.signal);
      return;
    }
    if (options.mode === 'drift-record') {
      await runDriftRecordMode(workspace, options, resultsDir);
      return;
    }
    if (options.mode === 'bisect-measure') {
      await runBisectMeasureMode(workspace, options, resultsDir, stop.signal);
      return;
    }
    if (options.mode === 'bisect-record') {
      await runBisectRecordMode(options, resultsDir);
      return;
    }

    if (options.mode === 'report') {
      const token = options['github-token'];
      const { pr, runId } = await reportTarget(token ? github.getOctokit(token) : undefined);
      const result = runReport([resultsDir], {
        ...reportRules(workspace, options),
        out: reportDir(),
        links: linksOf(pr),
      });
      core.info(`hotpath: merged ${result.report.shards} shard(s), ${result.report.rounds} rounds per side`);
      await finish(result, pr, options, { runId, artifactLinks: false });
      return;
    }

    // all: measure and report in one step (same-repository pull requests, no secrets in the job).
    refuseUnsafeEvent(options);
    const settings = await measureSettings(workspace, options, stop.signal);
    const pr = pullRequestFromEvent(github.context.eventName, github.context.payload);
    const result = await withPullRequestRuntime(workspace, settings, pr, stop.signal, (runtime) =>
      runCompare(settings, { ...runtime, shard: options.shard, out: reportDir(), links: linksOf(pr) }),
    );
    await finish(result, pr, options, { runId: 0, artifactLinks: true });
  } catch (err) {
    if (err instanceof HotpathActionError || err instanceof HotpathCompareError)
      core.setFailed(printable(`${err.code}: ${err.message}`, { newlines: true }));
    else
      core.setFailed(
        `hotpath: unexpected failure: ${printable((err as Error)?.stack ?? String(err), { newlines: true })}`,
      );
  } finally {
    process.removeListener('SIGINT', onInt);
    process.removeListener('SIGTERM', onTerm);
  }
}
