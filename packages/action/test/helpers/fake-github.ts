import { createServer, type IncomingMessage, type Server } from 'node:http';
import { markdownProblems } from '../../../compare/test/helpers/gfm.js';

export interface RecordedRequest {
  method: string;
  url: string;
  body: string;
  authorization?: string;
}

export interface FakeComment {
  id: number;
  body: string;
  html_url: string;
  user: { login: string };
}

export interface FakeIssue {
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  html_url: string;
  user: { login: string };
}

export interface FakeGitHub {
  url: string;
  requests: RecordedRequest[];
  comments: FakeComment[];
  /** Issues served by /repos/:o/:r/issues (the drift issue). */
  issues: FakeIssue[];
  /** Open pull requests served by GET /repos/:o/:r/pulls. */
  pulls: unknown[];
  /** Pull requests served by GET /repos/:o/:r/commits/:sha/pulls, by commit. */
  commitPulls: Record<string, unknown[]>;
  /** Artifacts served by GET /repos/:o/:r/actions/runs/:id/artifacts, by run id. */
  artifacts: Record<number, { id: number; name: string }[]>;
  /**
   * What GitHub would have made of the comment bodies written (links other than the
   * repository's own, HTML, mentions, references: see markdownProblems); close() fails on any.
   */
  unsafe: string[];
  close(): Promise<void>;
}

/** What the Action's comments and summaries may link to: the test repository's own URLs. */
export const OWN_LINKS = {
  repositoryUrl: 'https://github.example/o/r',
  // The fork the fork-PR tests' head comes from: its source files are linked there.
  headRepositoryUrl: 'https://github.example/fork/r',
  // hotpath's preamble names the pull request it compares.
  ownText: /\(PR #\d+\)/,
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => resolve(body));
  });
}

/**
 * Stands in for GitHub's REST API: the issue-comment endpoints hotpath uses, recording every
 * request. `readOnly` answers writes with 403 like a fork PR's token.
 */
export async function startFakeGitHub(
  options: { readOnly?: boolean; identity?: string } = {},
): Promise<FakeGitHub> {
  const requests: RecordedRequest[] = [];
  const comments: FakeComment[] = [];
  const issues: FakeIssue[] = [];
  let nextIssue = 1;
  const pulls: unknown[] = [];
  const artifacts: Record<number, { id: number; name: string }[]> = {};
  const commitPulls: Record<string, unknown[]> = {};
  const unsafe: string[] = [];
  // An installation token (GITHUB_TOKEN) cannot read /user; its comments are the bot's.
  const identity = options.identity ?? 'github-actions[bot]';
  let nextId = 1000;
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    requests.push({
      method: req.method ?? '',
      url: req.url ?? '',
      body,
      authorization: req.headers.authorization,
    });
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, data: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(data));
    };
    if (url.pathname === '/user' && req.method === 'GET') {
      if (!options.identity) return send(403, { message: 'Resource not accessible by integration' });
      return send(200, { login: identity });
    }
    if (/^\/repos\/[^/]+\/[^/]+\/pulls$/.test(url.pathname) && req.method === 'GET') {
      const head = url.searchParams.get('head');
      const page = Number(url.searchParams.get('page') ?? 1);
      const matching = pulls.filter((p) => {
        if (!head) return true;
        const h = (p as { head: { ref: string; repo: { full_name: string } | null } }).head;
        return `${h.repo?.full_name.split('/')[0]}:${h.ref}` === head;
      });
      return send(200, matching.slice((page - 1) * 100, page * 100));
    }
    const ofCommit = /^\/repos\/[^/]+\/[^/]+\/commits\/([0-9a-f]{40})\/pulls$/.exec(url.pathname);
    if (ofCommit && req.method === 'GET') return send(200, commitPulls[ofCommit[1] ?? ''] ?? []);
    const runArtifacts = /^\/repos\/[^/]+\/[^/]+\/actions\/runs\/(\d+)\/artifacts$/.exec(url.pathname);
    if (runArtifacts && req.method === 'GET') {
      const list = artifacts[Number(runArtifacts[1])] ?? [];
      return send(200, { total_count: list.length, artifacts: list });
    }
    const issueList = /^\/repos\/[^/]+\/[^/]+\/issues$/.test(url.pathname);
    const issueOne = /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)$/.exec(url.pathname);
    if (issueList && req.method === 'GET') {
      const page = Number(url.searchParams.get('page') ?? 1);
      const state = url.searchParams.get('state') ?? 'open';
      const listed = issues.filter((i) => state === 'all' || i.state === state);
      return send(200, listed.slice((page - 1) * 100, page * 100));
    }
    if (issueList && req.method === 'POST') {
      const { title, body: text } = JSON.parse(body) as { title: string; body: string };
      const number = nextIssue++;
      const issue: FakeIssue = {
        number,
        title,
        body: text,
        state: 'open',
        html_url: `https://github.example/o/r/issues/${number}`,
        user: { login: identity },
      };
      issues.push(issue);
      return send(201, issue);
    }
    if (issueOne && req.method === 'PATCH') {
      const issue = issues.find((i) => i.number === Number(issueOne[1]));
      if (!issue) return send(404, { message: 'Not Found' });
      const fields = JSON.parse(body) as Partial<FakeIssue>;
      if (fields.title !== undefined) issue.title = fields.title;
      if (fields.body !== undefined) issue.body = fields.body;
      if (fields.state !== undefined) issue.state = fields.state;
      return send(200, issue);
    }
    const list = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(url.pathname);
    const one = /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/.exec(url.pathname);
    if (list && req.method === 'GET') {
      const page = Number(url.searchParams.get('page') ?? 1);
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      return send(200, comments.slice((page - 1) * perPage, page * perPage));
    }
    if ((list && req.method === 'POST') || (one && req.method === 'PATCH')) {
      if (options.readOnly) return send(403, { message: 'Resource not accessible by integration' });
      const text = (JSON.parse(body) as { body: string }).body;
      // Every comment hotpath writes is rendered as GitHub would and checked.
      unsafe.push(...markdownProblems(text, OWN_LINKS));
      if (list) {
        const id = nextId++;
        const comment = {
          id,
          body: text,
          html_url: `https://github.example/pull/1#issuecomment-${id}`,
          user: { login: identity },
        };
        comments.push(comment);
        return send(201, comment);
      }
      const comment = comments.find((c) => c.id === Number(one?.[3]));
      if (!comment) return send(404, { message: 'Not Found' });
      if (comment.user.login !== identity) return send(403, { message: 'not the author of this comment' });
      comment.body = text;
      return send(200, comment);
    }
    send(404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    comments,
    issues,
    pulls,
    commitPulls,
    artifacts,
    unsafe,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (unsafe.length > 0)
        throw new Error(`a comment renders what hotpath did not build:\n${unsafe.join('\n')}`);
    },
  };
}
