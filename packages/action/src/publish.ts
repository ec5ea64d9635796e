import * as core from '@actions/core';
import * as github from '@actions/github';
import { type Report, type RunResult, render } from '@hotpath/compare';
import { commentMarker, commentPreamble, failureText } from '@hotpath/compare/internal';
import { HotpathActionError } from './errors.js';
import {
  findStickyComment,
  isReadOnlyTokenError,
  octokitComments,
  type PullRequest,
  tokenIdentity,
  upsertStickyComment,
} from './github.js';
import type { ActionOptions } from './inputs.js';
import { logSafe, withCommandsStopped } from './log.js';

export const serverUrl = () => process.env.GITHUB_SERVER_URL ?? 'https://github.com';
const log = (line: string) => process.stdout.write(`${line}\n`);

/** Links to the results artifacts of a run (what report mode merged), through the API. */
export async function resultsArtifactLinks(
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

function shouldComment(mode: ActionOptions['comment'], report: Report, hasEarlier: boolean): boolean {
  if (mode === 'never') return false;
  if (mode === 'always' || hasEarlier) return true;
  if (mode === 'on-regression') return report.regressed;
  return report.outcome !== 'unchanged' && report.outcome !== 'not-worse';
}

/** Job summary, outputs, sticky comment, failure (modes report and all). Runs no PR code. */
export async function publish(
  result: RunResult,
  pr: PullRequest,
  options: ActionOptions,
  extra: { links: string[]; runId: number; htmlArtifact?: { name: string; url: string } },
) {
  const { report } = result;
  const token = options['github-token'];
  const octokit = token ? github.getOctokit(token) : undefined;
  const artifacts =
    octokit && extra.links.length === 0 ? await resultsArtifactLinks(octokit, pr, extra.runId) : extra.links;
  const text = render(report, {
    markdown: {
      marker: true,
      commentKey: options['comment-key'],
      preamble: commentPreamble(report, { pullRequest: pr.number, config: options.config, artifacts }),
      htmlArtifact: extra.htmlArtifact,
    },
  });
  const markdown = text.markdown;
  for (const [name, value] of Object.entries(result.outputs)) core.setOutput(name, value);
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
  await withCommandsStopped(log, async () => log(logSafe(text.summary)));
  if (result.failed.failed) core.setFailed(failureText(result.failed));
}
