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
  list(page: number): Promise<{ id: number; body?: string | null; html_url: string }[]>;
  create(body: string): Promise<{ id: number; html_url: string }>;
  update(id: number, body: string): Promise<{ id: number; html_url: string }>;
}

export interface CommentResult {
  action: 'created' | 'updated';
  url: string;
  id: number;
}

/**
 * One comment per pull request: the first comment carrying `marker` is updated in place,
 * otherwise a new one is created.
 */
export async function upsertStickyComment(
  api: CommentsApi,
  marker: string,
  body: string,
): Promise<CommentResult> {
  for (let page = 1; page <= 50; page++) {
    const comments = await api.list(page);
    const existing = comments.find((c) => c.body?.includes(marker));
    if (existing) {
      const updated = await api.update(existing.id, body);
      return { action: 'updated', url: updated.html_url, id: updated.id };
    }
    if (comments.length < 100) break;
  }
  const created = await api.create(body);
  return { action: 'created', url: created.html_url, id: created.id };
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
