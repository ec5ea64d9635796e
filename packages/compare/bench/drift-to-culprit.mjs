// From a drift issue to the commit, through the bundled GitHub Action run the way GitHub runs it
// (not a CI test): a repository whose default branch got a CPU step at a random commit since its
// release tag; `mode: drift` on a push opens the drift issue and outputs the step's range;
// `mode: bisect-measure` searches that range (no token); `mode: bisect-record` reads the search
// and comments on the drift issue naming the commit and its pull request. GitHub's REST API is a
// local server that records what it got (the issue, the comment).
//
//   node bench/drift-to-culprit.mjs [--commits 16] [--step 15] [--seed N] [--budget 900]
//
// Every input at action.yml's default (GitHub sets INPUT_* for each) unless named here.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runActionStep } from './via-action.mjs';

const { values } = parseArgs({
  options: {
    commits: { type: 'string', default: '16' },
    step: { type: 'string', default: '15' },
    seed: { type: 'string' },
    budget: { type: 'string', default: '900' },
  },
});
const commits = Number(values.commits);
let seed = Number(values.seed ?? Date.now() % 2 ** 31);
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const at = 1 + Math.floor(random() * commits);
const WORK = 200_000;

const work = mkdtempSync(join(tmpdir(), 'hotpath-drift-to-culprit-'));
const dir = join(work, 'repo');
mkdirSync(dir);
const git = (cwd, ...args) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@e',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@e',
    },
  }).trim();
git(dir, 'init', '-q', '-b', 'main');
const shas = [];
for (let i = 0; i <= commits; i++) {
  const n = i >= at ? Math.round(WORK * (1 + Number(values.step) / 100)) : WORK;
  writeFileSync(
    join(dir, 'server.cjs'),
    `// revision ${i}\nconst http = require('node:http');\nfunction handle(res) {\n  let x = 0;\n  for (let i = 0; i < ${n}; i++) x += Math.sqrt(i) * 1e-9;\n  res.end(String(x));\n}\nhttp.createServer((_req, res) => handle(res)).listen(Number(process.env.PORT), '127.0.0.1');\n`,
  );
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', i === at ? `the step (+${values.step} %)` : `comment ${i}`);
  shas.push(git(dir, 'rev-parse', 'HEAD'));
}
git(dir, 'tag', 'v1.0.0', shas[0]);
const remote = join(work, 'remote.git');
git(work, 'init', '-q', '--bare', remote);
git(dir, 'remote', 'add', 'origin', remote);
git(dir, 'push', '-q', 'origin', 'main', '--tags');

// GitHub's REST API: issues, their comments, the pull requests of a commit; everything recorded.
const requests = [];
const issues = [];
const comments = [];
const api = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => {
    body += c;
  });
  req.on('end', () => {
    requests.push({ method: req.method, url: req.url });
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status, data) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(data));
    };
    const bot = { login: 'github-actions[bot]' };
    if (url.pathname === '/user') return send(403, { message: 'Resource not accessible by integration' });
    if (/^\/repos\/o\/r\/issues$/.test(url.pathname)) {
      if (req.method === 'GET')
        return send(
          200,
          url.searchParams.get('page') === '1' ? issues.filter((i) => i.state === 'open') : [],
        );
      const { title, body: text } = JSON.parse(body);
      const issue = { number: issues.length + 1, title, body: text, state: 'open', user: bot };
      issue.html_url = `https://github.example/o/r/issues/${issue.number}`;
      issues.push(issue);
      return send(201, issue);
    }
    const one = /^\/repos\/o\/r\/issues\/(\d+)$/.exec(url.pathname);
    if (one && req.method === 'PATCH') {
      const issue = issues.find((i) => i.number === Number(one[1]));
      Object.assign(issue, JSON.parse(body));
      return send(200, issue);
    }
    const onIssue = /^\/repos\/o\/r\/issues\/(\d+)\/comments$/.exec(url.pathname);
    if (onIssue && req.method === 'GET')
      return send(200, url.searchParams.get('page') === '1' ? comments : []);
    if (onIssue && req.method === 'POST') {
      const comment = {
        id: 1000 + comments.length,
        issue: Number(onIssue[1]),
        body: JSON.parse(body).body,
        user: bot,
      };
      comment.html_url = `https://github.example/o/r/issues/${onIssue[1]}#issuecomment-${comment.id}`;
      comments.push(comment);
      return send(201, comment);
    }
    const pulls = /^\/repos\/o\/r\/commits\/([0-9a-f]{40})\/pulls$/.exec(url.pathname);
    if (pulls)
      return send(200, pulls[1] === shas[at] ? [{ number: 40 + at, merged_at: '2026-12-01T00:00:00Z' }] : []);
    send(404, { message: 'Not Found' });
  });
});
await new Promise((resolve) => api.listen(0, '127.0.0.1', resolve));
const apiUrl = `http://127.0.0.1:${api.address().port}`;

/** One step of the workflow: the bundled Action with INPUT_* and GITHUB_* as a runner sets them. */
async function step(inputs, label) {
  const runner = mkdtempSync(join(work, 'runner-'));
  const files = {
    event: join(runner, 'event.json'),
    output: join(runner, 'output'),
    summary: join(runner, 'summary.md'),
  };
  writeFileSync(
    files.event,
    JSON.stringify({
      ref: 'refs/heads/main',
      repository: {
        name: 'r',
        owner: { login: 'o' },
        html_url: 'https://github.example/o/r',
        default_branch: 'main',
      },
    }),
  );
  writeFileSync(files.output, '');
  writeFileSync(files.summary, '');
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GITHUB_ACTIONS: 'true',
    GITHUB_EVENT_NAME: 'push',
    GITHUB_EVENT_PATH: files.event,
    GITHUB_REF: 'refs/heads/main',
    GITHUB_REPOSITORY: 'o/r',
    GITHUB_RUN_ID: '77',
    GITHUB_API_URL: apiUrl,
    GITHUB_SERVER_URL: 'https://github.example',
    GITHUB_WORKSPACE: dir,
    GITHUB_SHA: shas[commits],
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
    RUNNER_TEMP: runner,
    HOTPATH_V8_PROFILER_INSTALL: 'false',
  };
  const started = Date.now();
  const { code, outputs, log } = await runActionStep({
    dir,
    env,
    inputs: { 'github-token': 'ghs_bench', ...inputs },
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  console.error(`  ${label}: exit ${code}, ${seconds} s`);
  if (code !== 0)
    console.error(
      log
        .split('\n')
        .filter((l) => l.startsWith('::error::'))
        .join('\n'),
    );
  return { code, outputs, seconds, log };
}

try {
  const start = 'node server.cjs';
  const drift = await step({ mode: 'drift', start, url: '/', install: 'none' }, 'drift');
  const good = drift.outputs['drift-step-good'] ?? '';
  const bad = drift.outputs['drift-step-bad'] ?? '';
  console.error(
    `  drift: ${drift.outputs['drift-status']}, confirmed ${drift.outputs['drift-confirmed']}, issue ${issues.length ? `#${issues[0].number}` : 'none'}, step range ${good.slice(0, 12)}..${bad.slice(0, 12)}`,
  );
  const results = join(work, 'hotpath-bisect');
  let record = { outputs: {}, seconds: 0 };
  let measure = { outputs: {}, seconds: 0 };
  if (bad) {
    measure = await step(
      {
        mode: 'bisect-measure',
        start,
        url: '/',
        install: 'none',
        good,
        bad,
        results,
        'bisect-budget': `${values.budget}s`,
        'github-token': '',
      },
      'bisect-measure',
    );
    record = await step({ mode: 'bisect-record', results }, 'bisect-record');
  }
  const comment = comments.at(-1)?.body ?? '';
  const named = record.outputs.culprit ?? '';
  const line = {
    step: at,
    drift: drift.outputs['drift-status'],
    issue: issues.length,
    range: bad ? [shas.indexOf(good), shas.indexOf(bad)] : null,
    conclusion: record.outputs['bisect-conclusion'] ?? measure.outputs['bisect-conclusion'] ?? null,
    named: named ? shas.indexOf(named) : null,
    right: named === shas[at],
    pull: record.outputs['culprit-pull-request'] ?? '',
    commentNames: named
      ? comment.includes(named.slice(0, 12)) && comment.includes(`(PR #${40 + at})`)
      : false,
    seconds: { drift: drift.seconds, bisect: measure.seconds, record: record.seconds },
    writes: requests.filter((r) => r.method !== 'GET').length,
  };
  console.log(JSON.stringify(line));
} finally {
  api.close();
  rmSync(work, { recursive: true, force: true });
}
