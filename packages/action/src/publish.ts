import * as core from '@actions/core';
import * as github from '@actions/github';
import { type Report, render } from '@hotpath/compare';
import { codeSpan, commentMarker, escapeText, reproduceCommand } from '@hotpath/compare/internal';
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

/**
 * The `throughput-change` output: the lowest change of requests/s over the scenarios, in percent;
 * empty when a scenario's requests/s has no round pair to tell it from (every pair spoiled by
 * other load on the machine), where the report's 0 would read as "unchanged".
 */
export function throughputOutput(report: Pick<Report, 'scenarios' | 'throughputChange'>): string {
  const unmeasured = report.scenarios.some((s) => {
    const rps = s.metrics.find((m) => m.metric === 'requestsPerSecond');
    return !rps || rps.pairs === 0;
  });
  return unmeasured ? '' : (report.throughputChange * 100).toFixed(2);
}

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

/** The first lines of the comment: the commits compared, the artifact, how to reproduce. */
function preamble(report: Report, pr: PullRequest, options: ActionOptions, artifacts: string[]): string[] {
  const sha = (s: string | undefined) => (s && /^[0-9a-f]{7,64}$/.test(s) ? s.slice(0, 12) : '?');
  const base = report.sides.base.sha;
  const head = report.sides.head.sha;
  const shards =
    report.shards > 1
      ? ` · ${report.shards} shards, ${report.rounds} rounds per side`
      : ` · ${report.rounds} rounds per side`;
  // The run's settings: its config file, or (settings given as inputs) the same values as flags.
  const again = reproduceCommand(report, {
    config: options.config || undefined,
    base: sha(base),
    head: sha(head),
  });
  const missing = again.missing.length ? ` (add ${again.missing.join('; ')})` : '';
  return [
    `Compared base \`${sha(base)}\` with head \`${sha(head)}\` (PR #${pr.number})${shards}.`,
    ...(artifacts.length ? [`Results: ${artifacts.join(', ')}.`] : []),
    `Reproduce locally: ${codeSpan(again.command, 2000)}${escapeText(missing)}`,
  ];
}

function shouldComment(mode: ActionOptions['comment'], report: Report, hasEarlier: boolean): boolean {
  if (mode === 'never') return false;
  if (mode === 'always' || hasEarlier) return true;
  if (mode === 'on-regression') return report.regressed;
  return report.outcome !== 'unchanged';
}

/** Job summary, outputs, sticky comment, failure (modes report and all). Runs no PR code. */
export async function publish(
  report: Report,
  reportPath: string,
  pr: PullRequest,
  options: ActionOptions,
  links: string[],
  runId: number,
  htmlArtifact?: { name: string; url: string },
) {
  const token = options['github-token'];
  const octokit = token ? github.getOctokit(token) : undefined;
  const artifacts = octokit && links.length === 0 ? await resultsArtifactLinks(octokit, pr, runId) : links;
  const text = render(report, {
    markdown: {
      marker: true,
      commentKey: options['comment-key'],
      preamble: preamble(report, pr, options, artifacts),
      htmlArtifact,
    },
  });
  const markdown = text.markdown;
  core.setOutput('verdict', report.outcome);
  core.setOutput('regressed', String(report.regressed));
  core.setOutput('throughput-change', throughputOutput(report));
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
  await withCommandsStopped(log, async () => log(logSafe(text.summary)));
  if (report.regressed && report.settings.failOnRegression)
    core.setFailed('hotpath: a scenario regressed (see the summary)');
  else if (report.outcome === 'inconclusive' && report.settings.failOnInconclusive)
    core.setFailed(
      'hotpath: the run could not tell whether the change is slower (inconclusive; see the summary): rerun, or give it more time (max-time) or shards',
    );
}
