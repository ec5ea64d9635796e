import type { getOctokit } from '@actions/github';
import { z } from 'zod';
import { HotpathActionError } from './errors.js';

/** The parts of a pull_request event the Action uses (the event file is external input). */
const pullRequestEvent = z.object({
  pull_request: z.object({
    number: z.number().int().positive(),
    html_url: z.string().optional(),
    base: z.object({ sha: z.string().regex(/^[0-9a-f]{40,64}$/), ref: z.string() }),
    head: z.object({
      sha: z.string().regex(/^[0-9a-f]{40,64}$/),
      ref: z.string(),
      repo: z.object({ html_url: z.string(), full_name: z.string() }).nullable().optional(),
    }),
  }),
  repository: z.object({ name: z.string(), owner: z.object({ login: z.string() }), html_url: z.string() }),
});

export interface PullRequest {
  number: number;
  owner: string;
  repo: string;
  baseSha: string;
  baseRef: string;
  headSha: string;
  headRef: string;
  /** Web URL of the repository holding head (the fork, for a fork PR). */
  headRepositoryUrl: string;
  /** Head comes from another repository. */
  fromFork: boolean;
}

/** Reads base and head of the pull request from the event payload. */
export function pullRequestFromEvent(eventName: string, payload: unknown): PullRequest {
  const parsed = pullRequestEvent.safeParse(payload);
  if (!parsed.success) {
    throw new HotpathActionError(
      'HP_ACTION_NO_PULL_REQUEST',
      `the ${JSON.stringify(eventName)} event has no pull request with base and head commits: run hotpath on "pull_request" (or "pull_request_target")`,
    );
  }
  const { pull_request: pr, repository } = parsed.data;
  const headRepo = pr.head.repo;
  return {
    number: pr.number,
    owner: repository.owner.login,
    repo: repository.name,
    baseSha: pr.base.sha,
    baseRef: pr.base.ref,
    headSha: pr.head.sha,
    headRef: pr.head.ref,
    headRepositoryUrl: headRepo?.html_url ?? repository.html_url,
    fromFork: headRepo ? headRepo.full_name !== `${repository.owner.login}/${repository.name}` : false,
  };
}

/** The REST calls the sticky comment needs (a subset of Octokit's, so tests can see the shape). */
export interface CommentsApi {
  list(
    page: number,
  ): Promise<{ id: number; body?: string | null; html_url: string; user?: { login: string } | null }[]>;
  create(body: string): Promise<{ id: number; html_url: string }>;
  update(id: number, body: string): Promise<{ id: number; html_url: string }>;
}

export interface CommentResult {
  action: 'created' | 'updated';
  url: string;
  id: number;
}

/**
 * One comment per pull request and key: the first comment carrying `marker` *written by the
 * token's own identity* (`author`) is edited in place, otherwise a new one is created. A marker in
 * a comment by anyone else is ignored: a PR author cannot make hotpath edit their comment.
 */
export async function upsertStickyComment(
  api: CommentsApi,
  marker: string,
  body: string,
  author: string,
): Promise<CommentResult> {
  const existing = await findStickyComment(api, marker, author);
  if (existing) {
    const updated = await api.update(existing.id, body);
    return { action: 'updated', url: updated.html_url, id: updated.id };
  }
  const created = await api.create(body);
  return { action: 'created', url: created.html_url, id: created.id };
}

/** hotpath's own sticky comment of this key, if there is one. */
export async function findStickyComment(
  api: CommentsApi,
  marker: string,
  author: string,
): Promise<{ id: number; html_url: string } | undefined> {
  for (let page = 1; page <= 50; page++) {
    const comments = await api.list(page);
    const found = comments.find(
      (c) => c.user?.login === author && (c.body ?? '').split('\n', 1)[0] === marker,
    );
    if (found) return found;
    if (comments.length < 100) break;
  }
  return undefined;
}

/** A read-only token (fork PRs on `pull_request`) answers 403, sometimes 404. */
export function isReadOnlyTokenError(err: unknown): boolean {
  const status = (err as { status?: number })?.status;
  return status === 403 || status === 404;
}

type Octokit = ReturnType<typeof getOctokit>;

/** GitHub's REST API through @actions/github's Octokit (honours GITHUB_API_URL). */
export function octokitComments(
  octokit: Octokit,
  pr: Pick<PullRequest, 'owner' | 'repo' | 'number'>,
): CommentsApi {
  const where = { owner: pr.owner, repo: pr.repo };
  return {
    list: async (page) =>
      (await octokit.rest.issues.listComments({ ...where, issue_number: pr.number, per_page: 100, page }))
        .data,
    create: async (body) =>
      (await octokit.rest.issues.createComment({ ...where, issue_number: pr.number, body })).data,
    update: async (id, body) =>
      (await octokit.rest.issues.updateComment({ ...where, comment_id: id, body })).data,
  };
}

/** The login comments written with this token carry: the app bot's, or the user's. */
export async function tokenIdentity(octokit: Octokit): Promise<string> {
  try {
    return (await octokit.rest.users.getAuthenticated()).data.login;
  } catch {
    // An installation token (GITHUB_TOKEN) cannot read /user; its comments are the bot's.
    return 'github-actions[bot]';
  }
}

/** The parts of a workflow_run event used to find its pull request (all from GitHub, not from the run's files). */
const workflowRunEvent = z.object({
  workflow_run: z.object({
    id: z.number().int().positive(),
    head_sha: z.string().regex(/^[0-9a-f]{40,64}$/),
    head_branch: z.string().nullable().optional(),
    event: z.string(),
    head_repository: z.object({ full_name: z.string(), owner: z.object({ login: z.string() }) }).nullable(),
  }),
  repository: z.object({ name: z.string(), owner: z.object({ login: z.string() }), html_url: z.string() }),
});

/** What a workflow_run event says about the run that triggered it. */
export interface TriggeringRun {
  runId: number;
  headSha: string;
  headBranch?: string;
  headRepository: string;
  headOwner: string;
  owner: string;
  repo: string;
  repositoryUrl: string;
}

export function triggeringRunFromEvent(payload: unknown): TriggeringRun {
  const parsed = workflowRunEvent.safeParse(payload);
  const headRepository = parsed.success ? parsed.data.workflow_run.head_repository : undefined;
  if (!parsed.success || !headRepository) {
    throw new HotpathActionError(
      'HP_ACTION_NO_PULL_REQUEST',
      'the workflow_run event has no triggering run with a head commit and repository',
    );
  }
  const { workflow_run: run, repository } = parsed.data;
  return {
    runId: run.id,
    headSha: run.head_sha,
    headBranch: run.head_branch ?? undefined,
    headRepository: headRepository.full_name,
    headOwner: headRepository.owner.login,
    owner: repository.owner.login,
    repo: repository.name,
    repositoryUrl: repository.html_url,
  };
}

/** The REST call that lists a repository's open pull requests (a subset of Octokit's). */
export type ListPulls = (query: { head?: string; page: number }) => Promise<unknown[]>;

const pullSummary = z.object({
  number: z.number().int().positive(),
  state: z.string(),
  base: z.object({ sha: z.string().regex(/^[0-9a-f]{40,64}$/), ref: z.string() }),
  head: z.object({
    sha: z.string(),
    ref: z.string(),
    repo: z.object({ full_name: z.string(), html_url: z.string() }).nullable(),
  }),
});

/**
 * The pull request of a workflow_run, found through the API from the triggering run's head
 * commit and head repository — never from a number or text in the run's artifacts, which the
 * PR's code wrote. Open PRs of `owner:branch` first, then every open PR; the match must have that
 * exact head commit from that exact repository.
 */
export async function pullRequestOfRun(run: TriggeringRun, list: ListPulls): Promise<PullRequest> {
  const matches = (raw: unknown) => {
    const p = pullSummary.safeParse(raw);
    return p.success && p.data.head.sha === run.headSha && p.data.head.repo?.full_name === run.headRepository
      ? p.data
      : undefined;
  };
  const queries: (string | undefined)[] = run.headBranch
    ? [`${run.headOwner}:${run.headBranch}`, undefined]
    : [undefined];
  for (const head of queries) {
    for (let page = 1; page <= 20; page++) {
      const pulls = await list({ head, page });
      for (const raw of pulls) {
        const pr = matches(raw);
        if (pr)
          return {
            number: pr.number,
            owner: run.owner,
            repo: run.repo,
            baseSha: pr.base.sha,
            baseRef: pr.base.ref,
            headSha: pr.head.sha,
            headRef: pr.head.ref,
            headRepositoryUrl: pr.head.repo?.html_url ?? run.repositoryUrl,
            fromFork: run.headRepository !== `${run.owner}/${run.repo}`,
          };
      }
      if (pulls.length < 100) break;
    }
  }
  throw new HotpathActionError(
    'HP_ACTION_NO_PULL_REQUEST',
    `no open pull request has head ${run.headSha.slice(0, 12)} from ${run.headRepository}: nothing to comment on`,
  );
}
