import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as core from '@actions/core';
import * as github from '@actions/github';
import {
  allowlistedEnvironment,
  analyse,
  commentMarker,
  findResults,
  HotpathCompareError,
  loadConfig,
  mergeShards,
  parseShard,
  type Report,
  readShard,
  renderMarkdown,
  resolveSettings,
  runCommand,
  runMeasurements,
  type Settings,
  writeReportFiles,
  writeResults,
} from '@hotpath/compare';
import { uploadReportArtifact } from './artifact-upload.js';
import { HotpathActionError } from './errors.js';
import { gitHead } from './git.js';
import {
  findStickyComment,
  isReadOnlyTokenError,
  octokitComments,
  type PullRequest,
  pullRequestFromEvent,
  pullRequestOfRun,
  tokenIdentity,
  triggeringRunFromEvent,
  upsertStickyComment,
} from './github.js';
import { type ActionOptions, readActionOptions, settingInputs } from './inputs.js';
import { logSafe, withCommandsStopped } from './log.js';

/** The exact v8-profiler-next the Action installs at run time (a native addon, built for the job's Node). */
export const V8_PROFILER_VERSION = '1.10.0';

/** Setting keys that decide the verdict: in report mode they come from the report job, never from results. */
const VERDICT_KEYS = ['threshold', 'hotThreshold', 'metrics', 'failOn', 'failOnRegression'] as const;

/** Reads every setting input once (core.getInput: INPUT_<NAME>), plus the config file it names. */
export async function readSettings(
  workspace: string,
  options: ActionOptions,
  base?: unknown,
): Promise<Settings> {
  const overrides: Record<string, unknown> = {};
  for (const [input, key] of settingInputs()) {
    const value = core.getInput(input);
    if (value !== '') overrides[key] = value;
  }
  const loaded = options.config ? await loadConfig(resolve(workspace, options.config)) : undefined;
  let config = loaded?.config;
  if (base !== undefined) {
    // Report mode: what was measured (scenarios, rounds, windows) from the results, the rules of
    // the verdict from this job's own config and inputs.
    const own = (loaded?.config ?? {}) as Record<string, unknown>;
    const measured = { ...(base as Record<string, unknown>) };
    for (const key of VERDICT_KEYS) {
      delete measured[key];
      if (own[key] !== undefined) measured[key] = own[key];
    }
    config = measured;
    for (const key of Object.keys(overrides))
      if (!(VERDICT_KEYS as readonly string[]).includes(key)) delete overrides[key];
  }
  return resolveSettings({
    config,
    configName: base !== undefined ? 'the results' : loaded ? `config file ${options.config}` : undefined,
    overrides,
    overridesSource: 'input',
  });
}

/**
 * Installs v8-profiler-next for the Node on PATH (the one the workflow set up) into a private
 * prefix, since the bundle cannot carry a native addon. Returns its path, or undefined (then
 * the probe falls back to node:inspector and the report says so).
 */
async function installV8Profiler(
  dir: string,
  env: NodeJS.ProcessEnv,
  warnings: string[],
  signal: AbortSignal,
): Promise<string | undefined> {
  if (env.HOTPATH_V8_PROFILER_INSTALL === 'false') return undefined;
  mkdirSync(dir, { recursive: true });
  const { exit, output } = await runCommand(
    `npm install --no-save --no-package-lock --no-audit --no-fund --prefix . v8-profiler-next@${V8_PROFILER_VERSION}`,
    { cwd: dir, env: allowlistedEnvironment(env), timeoutMs: 240_000, signal },
  );
  // A cancelled job: runCommand has stopped npm and everything it started.
  if (signal.aborted)
    throw new HotpathCompareError(
      'HP_COMPARE_ABORTED',
      `installing v8-profiler-next was aborted (${String(signal.reason?.message ?? signal.reason)})`,
    );
  if (exit.code !== 0) {
    warnings.push(
      `v8-profiler-next ${V8_PROFILER_VERSION} could not be installed for this Node (${output.last(1)[0] ?? `exit ${exit.code}`}); profiled with node:inspector instead`,
    );
    return undefined;
  }
  return join(dir, 'node_modules', 'v8-profiler-next');
}

const serverUrl = () => process.env.GITHUB_SERVER_URL ?? 'https://github.com';
const log = (line: string) => process.stdout.write(`${line}\n`);

/** Measures base and head of the pull request (modes measure and all). Runs PR code: no API call. */
async function measurePullRequest(
  workspace: string,
  settings: Settings,
  pr: PullRequest,
  warnings: string[],
  signal: AbortSignal,
) {
  const temp = process.env.RUNNER_TEMP ?? tmpdir();
  // Head is what the workflow checked out (for pull_request: the merge of head into base).
  const headSha = await gitHead(workspace);
  const work = mkdtempSync(join(temp, 'hotpath-'));
  try {
    const extraEnv: Record<string, string> = {};
    if (settings.profiler === 'cpuprofile') {
      const path = await installV8Profiler(join(work, 'v8-profiler'), process.env, warnings, signal);
      if (path) extraEnv.HOTPATH_V8_PROFILER_PATH = path;
    }
    log(`hotpath: base ${pr.baseSha.slice(0, 12)} vs head ${headSha.slice(0, 12)}`);
    // Everything the PR's code prints from here on is inert in the log.
    return await withCommandsStopped(log, () =>
      runMeasurements(settings, {
        baseDir: workspace,
        allowlistEnv: true,
        refs: { base: { ref: pr.baseRef, sha: pr.baseSha }, head: { ref: pr.headRef, sha: headSha } },
        extraEnv,
        signal,
        onProgress: (e) => log(logSafe(e.message)),
      }),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

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

/** Links to the results artifacts of a run (what report mode merged), through the API. */
async function resultsArtifactLinks(
  octokit: ReturnType<typeof github.getOctokit>,
  pr: PullRequest,
  runId: number,
): Promise<string[]> {
  if (!runId) return [];
  try {
    const { data } = await octokit.rest.actions.listWorkflowRunArtifacts({
      owner: pr.owner,
      repo: pr.repo,
      run_id: runId,
      per_page: 100,
    });
    return data.artifacts
      .filter((a) => /^hotpath[\w.-]*$/.test(a.name) && Number.isSafeInteger(a.id))
      .map(
        (a) =>
          `[${a.name.replace(/[^\w.-]/g, '')}](${serverUrl()}/${pr.owner}/${pr.repo}/actions/runs/${runId}/artifacts/${a.id})`,
      );
  } catch {
    return [];
  }
}

/** The first lines of the comment: the commits compared, the artifact, how to reproduce. */
function preamble(report: Report, pr: PullRequest, options: ActionOptions, artifacts: string[]): string[] {
  const sha = (s: string | undefined) => (s && /^[0-9a-f]{7,64}$/.test(s) ? s.slice(0, 12) : '?');
  const base = report.sides.base.sha;
  const head = report.sides.head.sha;
  const shards =
    report.shards > 1
      ? ` · ${report.shards} shards, ${report.rounds} rounds per side`
      : ` · ${report.rounds} rounds per side`;
  const config = options.config && /^[\w./-]+$/.test(options.config) ? ` --config ${options.config}` : '';
  return [
    `Compared base \`${sha(base)}\` with head \`${sha(head)}\` (PR #${pr.number})${shards}.`,
    ...(artifacts.length ? [`Results: ${artifacts.join(', ')}.`] : []),
    `Reproduce locally: \`npx -p @hotpath/compare hotpath compare --base ${sha(base)} --head ${sha(head)}${config}\``,
  ];
}

function shouldComment(mode: ActionOptions['comment'], report: Report, hasEarlier: boolean): boolean {
  if (mode === 'never') return false;
  if (mode === 'always' || hasEarlier) return true;
  if (mode === 'on-regression') return report.regressed;
  return report.regressed || report.improved;
}

/** Job summary, outputs, sticky comment, failure (modes report and all). Runs no PR code. */
async function publish(
  report: Report,
  reportPath: string,
  pr: PullRequest,
  options: ActionOptions,
  links: string[],
  runId: number,
) {
  const token = options['github-token'];
  const octokit = token ? github.getOctokit(token) : undefined;
  const artifacts = octokit && links.length === 0 ? await resultsArtifactLinks(octokit, pr, runId) : links;
  const markdown = renderMarkdown(report, {
    marker: true,
    commentKey: options['comment-key'],
    preamble: preamble(report, pr, options, artifacts),
  });
  core.setOutput('regressed', String(report.regressed));
  core.setOutput('throughput-change', (report.throughputChange * 100).toFixed(2));
  core.setOutput('report', reportPath);
  core.setOutput('shards', String(report.shards));
  if (process.env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(markdown).write();

  let commentUrl = '';
  if (!octokit) {
    core.warning('hotpath: no github-token, so no pull-request comment (the job summary has the report)');
  } else if (options.comment !== 'never') {
    const marker = commentMarker(options['comment-key']);
    try {
      const api = octokitComments(octokit, pr);
      const author = await tokenIdentity(octokit);
      const earlier = await findStickyComment(api, marker, author);
      if (shouldComment(options.comment, report, earlier !== undefined)) {
        const result = await upsertStickyComment(api, marker, markdown, author);
        commentUrl = result.url;
        core.info(`hotpath: ${result.action} comment ${result.url}`);
      } else {
        core.info(`hotpath: no comment (comment: ${options.comment}, nothing to report)`);
      }
    } catch (err) {
      if (isReadOnlyTokenError(err)) {
        core.warning(
          `hotpath: the token cannot comment on this pull request (${logSafe((err as Error).message)}); a fork PR's pull_request token is read-only: measure there and comment from a workflow_run job (mode report), as the README shows`,
        );
      } else {
        throw new HotpathActionError(
          'HP_ACTION_GITHUB_API',
          `writing the comment failed: ${(err as Error).message}`,
          { cause: err },
        );
      }
    }
  }
  core.setOutput('comment-url', commentUrl);
  await withCommandsStopped(log, async () => log(logSafe(report.summary)));
  if (report.regressed && report.settings.failOnRegression)
    core.setFailed('hotpath: a scenario regressed (see the summary)');
}

/** The Action: modes measure, report and all. */
export async function run(): Promise<void> {
  // A cancelled job sends SIGINT, then SIGTERM: stop every server, remove every worktree, then exit.
  const stop = new AbortController();
  const onSignal = (name: string) => () => stop.abort(new Error(`${name}: the job was cancelled`));
  process.once('SIGINT', onSignal('SIGINT'));
  process.once('SIGTERM', onSignal('SIGTERM'));
  try {
    const options = readActionOptions((name) => core.getInput(name));
    const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
    const resultsDir = resolve(workspace, options.results);
    const warnings: string[] = [];

    if (options.mode === 'measure') {
      refuseUnsafeEvent(options);
      const shard = parseShard(options.shard);
      const settings = await readSettings(workspace, options);
      const pr = pullRequestFromEvent(github.context.eventName, github.context.payload);
      const { measurements, sides } = await measurePullRequest(
        workspace,
        settings,
        pr,
        warnings,
        stop.signal,
      );
      const folder = writeResults(resultsDir, { shard, settings, sides, measurements, warnings });
      core.setOutput('results', folder);
      core.info(
        `hotpath: shard ${shard.index}/${shard.total} wrote its results to ${folder}; upload ${options.results} as an artifact for the report job`,
      );
      return;
    }

    if (options.mode === 'report') {
      const files = findResults(resultsDir);
      if (files.length === 0)
        throw new HotpathCompareError(
          'HP_COMPARE_RESULTS',
          `no hotpath-results.json below ${resultsDir}: download the measure jobs' artifacts there`,
        );
      let measured: unknown;
      const shards = files.map((file) =>
        readShard(file, (raw) => {
          measured ??= raw;
          return resolveSettings({ config: raw, configName: `results ${file}` });
        }),
      );
      const merged = mergeShards(shards);
      const settings = await readSettings(workspace, options, measured);
      const token = options['github-token'];
      const { pr, runId } = await reportTarget(token ? github.getOctokit(token) : undefined);
      const report = analyse(merged.measurements, {
        settings,
        sides: merged.sides,
        shards: merged.shards,
        links: {
          repositoryUrl: pr.fromFork ? pr.headRepositoryUrl : `${serverUrl()}/${pr.owner}/${pr.repo}`,
          sha: pr.headSha,
        },
        warnings: merged.warnings,
      });
      const out = writeReportFiles(
        join(process.env.RUNNER_TEMP ?? tmpdir(), 'hotpath-report'),
        report,
        merged.measurements,
      );
      core.info(`hotpath: merged ${merged.shards} shard(s), ${report.rounds} rounds per side`);
      await publish(report, out.report, pr, options, [], runId);
      return;
    }

    // all: measure and report in one step (same-repository pull requests, no secrets in the job).
    refuseUnsafeEvent(options);
    const settings = await readSettings(workspace, options);
    const pr = pullRequestFromEvent(github.context.eventName, github.context.payload);
    const { measurements, sides } = await measurePullRequest(workspace, settings, pr, warnings, stop.signal);
    const report = analyse(measurements, {
      settings,
      sides,
      links: {
        repositoryUrl: pr.fromFork ? pr.headRepositoryUrl : `${serverUrl()}/${pr.owner}/${pr.repo}`,
        sha: pr.headSha,
      },
      warnings,
    });
    const files = writeReportFiles(
      join(process.env.RUNNER_TEMP ?? tmpdir(), 'hotpath-report'),
      report,
      measurements,
    );
    for (const note of files.notes) core.warning(`hotpath: ${logSafe(note)}`);
    const links: string[] = [];
    if (options['upload-artifact']) {
      const upload = await uploadReportArtifact(files.dir, process.env);
      if (upload.state === 'uploaded') {
        core.info(`hotpath: uploaded ${upload.files.length} files as artifact ${upload.name}`);
        if (upload.id && process.env.GITHUB_RUN_ID)
          links.push(
            `[${upload.name}](${serverUrl()}/${pr.owner}/${pr.repo}/actions/runs/${process.env.GITHUB_RUN_ID}/artifacts/${upload.id})`,
          );
      } else {
        core.warning(`hotpath: the report files were not uploaded as an artifact: ${logSafe(upload.reason)}`);
      }
    }
    await publish(report, files.report, pr, options, links, 0);
  } catch (err) {
    if (err instanceof HotpathActionError || err instanceof HotpathCompareError)
      core.setFailed(`${err.code}: ${err.message}`);
    else core.setFailed(`hotpath: unexpected failure: ${(err as Error)?.stack ?? String(err)}`);
  }
}
