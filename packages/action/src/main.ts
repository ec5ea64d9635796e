import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as core from '@actions/core';
import * as github from '@actions/github';
import { uploadReportArtifact } from './artifact-upload.js';
import {
  addWorktree,
  ensureCommit,
  gitRoot,
  installPlan,
  mapIntoCheckout,
  prepareCheckout,
  removeWorktree,
} from './checkout.js';
import { compare } from './engine.js';
import { untrustedEnvironment } from './environment.js';
import { HotpathActionError } from './errors.js';
import {
  isReadOnlyTokenError,
  octokitComments,
  pullRequestFromEvent,
  upsertStickyComment,
} from './github.js';
import { COMMENT_MARKER, renderMarkdown } from './markdown.js';
import { INPUT_NAMES, parseSettings, type RawInputs, type Settings } from './options.js';
import { runCommand } from './process-group.js';

/** Reads every input once (core.getInput: INPUT_<NAME>), validated by the shared schema. */
export function readSettings(): Settings {
  const raw: RawInputs = {};
  for (const name of INPUT_NAMES) {
    raw[name] = core.getInput(name);
  }
  if (!raw.start) raw.start = undefined;
  return parseSettings(raw, 'input');
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
): Promise<string | undefined> {
  if (env.HOTPATH_V8_PROFILER_INSTALL === 'false') return undefined;
  mkdirSync(dir, { recursive: true });
  const { exit, output } = await runCommand(
    'npm install --no-save --no-package-lock --no-audit --no-fund --prefix . v8-profiler-next@1',
    { cwd: dir, env: untrustedEnvironment(env), timeoutMs: 240_000 },
  );
  if (exit.code !== 0) {
    warnings.push(
      `v8-profiler-next could not be installed for this Node (${output.last(1)[0] ?? `exit ${exit.code}`}); profiled with node:inspector instead`,
    );
    return undefined;
  }
  return join(dir, 'node_modules', 'v8-profiler-next');
}

/** The Action: base vs head of the pull request, sticky comment, summary, outputs. */
export async function run(): Promise<void> {
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const settings = readSettings();
    const token = core.getInput('github-token');
    const pr = pullRequestFromEvent(github.context.eventName, github.context.payload);
    const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
    const temp = process.env.RUNNER_TEMP ?? tmpdir();
    const root = await gitRoot(workspace);
    const appHead = mapIntoCheckout(root, join(workspace, settings.workingDirectory), root);

    core.startGroup(
      `hotpath: base ${pr.baseSha.slice(0, 12)} (${pr.baseRef}) vs head ${pr.headSha.slice(0, 12)}`,
    );
    await ensureCommit(root, pr.baseSha, 'base');
    const work = mkdtempSync(join(temp, 'hotpath-'));
    cleanups.push(async () => rmSync(work, { recursive: true, force: true }));
    const baseTree = join(work, 'base');
    await addWorktree(root, pr.baseSha, baseTree);
    cleanups.unshift(() => removeWorktree(root, baseTree));
    const appBase = mapIntoCheckout(root, appHead, baseTree);

    const log = (line: string) => core.info(line);
    for (const [side, appDir, tree] of [
      ['base', appBase, baseTree],
      ['head', appHead, root],
    ] as const) {
      const steps: { label: 'install' | 'build'; command: string; cwd: string }[] = [];
      const install = installPlan(settings.install, appDir, tree);
      if (install) steps.push({ label: 'install', ...install });
      if (settings.build) steps.push({ label: 'build', command: settings.build, cwd: appDir });
      await prepareCheckout(side, steps, process.env, log);
    }
    const warnings: string[] = [];
    const extraEnv: Record<string, string> = {};
    if (settings.profiler === 'cpuprofile') {
      const path = await installV8Profiler(join(work, 'v8-profiler'), process.env, warnings);
      if (path) extraEnv.HOTPATH_V8_PROFILER_PATH = path;
    }
    core.endGroup();

    core.startGroup('hotpath: rounds');
    const outDir = join(temp, 'hotpath-report');
    const serverUrl = process.env.GITHUB_SERVER_URL ?? 'https://github.com';
    const { report, files } = await compare({
      base: { side: 'base', command: settings.start, cwd: appBase },
      head: { side: 'head', command: settings.start, cwd: appHead },
      settings,
      outDir,
      sides: {
        base: { command: settings.start, cwd: appBase, ref: pr.baseRef, sha: pr.baseSha },
        head: { command: settings.start, cwd: appHead, ref: pr.headRef, sha: pr.headSha },
      },
      links: {
        repositoryUrl: pr.fromFork ? pr.headRepositoryUrl : `${serverUrl}/${pr.owner}/${pr.repo}`,
        sha: pr.headSha,
        root,
      },
      warnings,
      extraEnv,
      log,
    });
    core.endGroup();
    for (const note of files.notes) core.warning(`hotpath: ${note}`);

    let where = `\`${files.dir}\``;
    if (settings.uploadArtifact) {
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
    core.setOutput('throughput-change', report.throughputChange.toFixed(4));
    core.setOutput('report', files.report);

    if (process.env.GITHUB_STEP_SUMMARY) {
      await core.summary.addRaw(markdown).write();
    } else {
      core.info(markdown);
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
    core.info(report.summary);
    if (report.regressed && settings.failOnRegression) {
      core.setFailed(`hotpath: ${report.summary}`);
    }
  } catch (err) {
    if (err instanceof HotpathActionError) core.setFailed(`${err.code}: ${err.message}`);
    else core.setFailed(`hotpath: unexpected failure: ${(err as Error)?.stack ?? String(err)}`);
  } finally {
    for (const cleanup of cleanups) {
      try {
        await cleanup();
      } catch {
        // best effort
      }
    }
  }
}
