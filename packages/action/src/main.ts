import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as core from '@actions/core';
import * as github from '@actions/github';
import {
  allowlistedEnvironment,
  COMMENT_MARKER,
  HotpathCompareError,
  loadConfig,
  renderMarkdown,
  resolveSettings,
  runComparison,
  type Settings,
} from '@hotpath/compare';
import { uploadReportArtifact } from './artifact-upload.js';
import { HotpathActionError } from './errors.js';
import { gitHead, runCommand } from './git.js';
import {
  isReadOnlyTokenError,
  octokitComments,
  pullRequestFromEvent,
  upsertStickyComment,
} from './github.js';
import { settingInputs } from './inputs.js';

/** Reads every input once (core.getInput: INPUT_<NAME>), plus the config file it names. */
export async function readSettings(workspace: string): Promise<Settings> {
  const overrides: Record<string, unknown> = {};
  for (const [input, key] of settingInputs()) {
    const value = core.getInput(input);
    if (value !== '') overrides[key] = value;
  }
  const configInput = core.getInput('config');
  const loaded = configInput ? await loadConfig(resolve(workspace, configInput)) : undefined;
  return resolveSettings({
    config: loaded?.config,
    configName: loaded ? `config file ${configInput}` : undefined,
    overrides,
    overridesSource: 'input',
  });
}

/** The exact v8-profiler-next the Action installs at run time (a native addon, built for the job's Node). */
export const V8_PROFILER_VERSION = '1.10.0';

/**
 * Installs v8-profiler-next for the Node on PATH (the one the workflow set up) into a private
 * prefix, since the bundle cannot carry a native addon. Returns its path, or undefined (then
 * the probe falls back to node:inspector and the report says so).
 */
async function installV8Profiler(
  dir: string,
  env: NodeJS.ProcessEnv,
  warnings: string[],
): Promise<string | undefined> {
  if (env.HOTPATH_V8_PROFILER_INSTALL === 'false') return undefined;
  mkdirSync(dir, { recursive: true });
  const { code, tail } = await runCommand(
    `npm install --no-save --no-package-lock --no-audit --no-fund --prefix . v8-profiler-next@${V8_PROFILER_VERSION}`,
    dir,
    allowlistedEnvironment(env),
  );
  if (code !== 0) {
    warnings.push(
      `v8-profiler-next could not be installed for this Node (${tail || `exit ${code}`}); profiled with node:inspector instead`,
    );
    return undefined;
  }
  return join(dir, 'node_modules', 'v8-profiler-next');
}

/** The Action: base vs head of the pull request, sticky comment, summary, outputs. */
export async function run(): Promise<void> {
  let work: string | undefined;
  try {
    const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
    const settings = await readSettings(workspace);
    const token = core.getInput('github-token');
    const pr = pullRequestFromEvent(github.context.eventName, github.context.payload);
    const temp = process.env.RUNNER_TEMP ?? tmpdir();
    // Head is what the workflow checked out (for pull_request: the merge of head into base).
    const headSha = await gitHead(workspace);

    core.startGroup(`hotpath: base ${pr.baseSha.slice(0, 12)} vs head ${headSha.slice(0, 12)}`);
    const warnings: string[] = [];
    const extraEnv: Record<string, string> = {};
    work = mkdtempSync(join(temp, 'hotpath-'));
    if (settings.profiler === 'cpuprofile') {
      const path = await installV8Profiler(join(work, 'v8-profiler'), process.env, warnings);
      if (path) extraEnv.HOTPATH_V8_PROFILER_PATH = path;
    }
    const serverUrl = process.env.GITHUB_SERVER_URL ?? 'https://github.com';
    const { report, files } = await runComparison(
      { ...settings, out: join(temp, 'hotpath-report') },
      {
        baseDir: workspace,
        allowlistEnv: true,
        refs: { base: { ref: pr.baseRef, sha: pr.baseSha }, head: { ref: pr.headRef, sha: headSha } },
        links: {
          repositoryUrl: pr.fromFork ? pr.headRepositoryUrl : `${serverUrl}/${pr.owner}/${pr.repo}`,
          sha: pr.headSha,
        },
        warnings,
        extraEnv,
        onProgress: (e) => core.info(e.message),
      },
    );
    core.endGroup();
    for (const note of files.notes) core.warning(`hotpath: ${note}`);

    let where = `\`${files.dir}\``;
    if (!/^(false|0|no)$/i.test(core.getInput('upload-artifact').trim())) {
      const upload = await uploadReportArtifact(files.dir, process.env);
      if (upload.state === 'uploaded') {
        where = `the workflow artifact \`${upload.name}\``;
        core.info(`hotpath: uploaded ${upload.files.length} files as artifact ${upload.name}`);
      } else {
        core.warning(`hotpath: the report files were not uploaded as an artifact: ${upload.reason}`);
      }
    }
    const filesNote = `<sub>Report, folded stacks and flame graphs: ${where}.</sub>`;
    const markdown = renderMarkdown(report, { marker: true, filesNote });
    core.setOutput('regressed', String(report.regressed));
    core.setOutput('throughput-change', (report.throughputChange * 100).toFixed(2));
    core.setOutput('report', files.report);

    if (process.env.GITHUB_STEP_SUMMARY) {
      await core.summary.addRaw(markdown).write();
    }

    let commentUrl = '';
    if (!token) {
      core.warning('hotpath: no github-token, so no pull-request comment (the job summary has the report)');
    } else {
      try {
        const octokit = github.getOctokit(token);
        const result = await upsertStickyComment(octokitComments(octokit, pr), COMMENT_MARKER, markdown);
        commentUrl = result.url;
        core.info(`hotpath: ${result.action} comment ${result.url}`);
      } catch (err) {
        if (isReadOnlyTokenError(err)) {
          core.warning(
            `hotpath: the token cannot comment on this pull request (${(err as Error).message}); a fork PR's pull_request token is read-only: the report is in the job summary, and the README shows the workflow_run pattern for commenting`,
          );
        } else {
          throw new HotpathActionError(
            'HP_ACTION_GITHUB_API',
            `writing the comment failed: ${(err as Error).message}`,
            {
              cause: err,
            },
          );
        }
      }
    }
    core.setOutput('comment-url', commentUrl);
    core.info(report.summary.replace(/[\r\n]/g, ' ').replace(/::/g, ': :'));
    if (report.regressed && settings.failOnRegression) {
      core.setFailed(`hotpath: ${report.summary.replace(/[\r\n]/g, ' ')}`);
    }
  } catch (err) {
    if (err instanceof HotpathActionError || err instanceof HotpathCompareError)
      core.setFailed(`${err.code}: ${err.message}`);
    else core.setFailed(`hotpath: unexpected failure: ${(err as Error)?.stack ?? String(err)}`);
  } finally {
    if (work) rmSync(work, { recursive: true, force: true });
  }
}
