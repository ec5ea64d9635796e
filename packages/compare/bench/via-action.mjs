// One comparison through the bundled GitHub Action, run the way GitHub runs it: `node` on
// action.yml's `main` with every input at action.yml's default (GitHub sets INPUT_* for each)
// unless the bench overrides it, the GITHUB_* variables, files for outputs and the job summary, a
// pull_request event, and GitHub's REST API served by a local server that records what it got.
// Used by detection.mjs --via action; it returns the report.json the Action wrote.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { actionDefaults } from '../../../scripts/action-defaults.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The Action's entry point, from action.yml's `runs.main`. */
function actionMain(text) {
  const main = /^ {2}main: (\S+)$/m.exec(text)?.[1];
  if (!main) throw new Error('action.yml has no runs.main');
  return join(ROOT, main);
}

/** A stand-in for GitHub's REST API: lists no comments, accepts the sticky comment, records all. */
async function fakeGitHub() {
  const requests = [];
  let id = 1000;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, body });
      res.setHeader('content-type', 'application/json');
      if (req.method === 'GET' && /\/comments(\?|$)/.test(req.url ?? '')) return res.end('[]');
      if ((req.method === 'POST' || req.method === 'PATCH') && /\/comments/.test(req.url ?? '')) {
        res.statusCode = req.method === 'POST' ? 201 : 200;
        id++;
        return res.end(
          JSON.stringify({
            id,
            html_url: `https://github.example/o/r/pull/7#issuecomment-${id}`,
            body: JSON.parse(body || '{}').body ?? '',
            user: { login: 'github-actions[bot]' },
          }),
        );
      }
      res.statusCode = 404;
      res.end('{"message":"Not Found"}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

const INPUT_OF = {
  start: 'start',
  url: 'url',
  install: 'install',
  connections: 'connections',
  placement: 'placement',
};

/**
 * Runs the Action on the repository at `dir` for a pull request from `base` to `head` (head is
 * checked out, as actions/checkout leaves a workspace) and returns { report, comment, outputs }.
 * `overrides` are settings by key (start, url, rounds, …), passed as the matching inputs.
 */
/**
 * The bundled Action once, as a runner runs one step: every input at action.yml's default unless
 * `inputs` names it, the runner's variables in `env` (GITHUB_OUTPUT among them). Returns its exit
 * code, the outputs it wrote and its log.
 */
export async function runActionStep({ dir, env, inputs, node = process.execPath }) {
  const actionYml = readFileSync(join(ROOT, 'action.yml'), 'utf8');
  const full = { ...env };
  for (const [name, value] of Object.entries({ ...actionDefaults(), ...inputs }))
    full[`INPUT_${name.toUpperCase()}`] = String(value);
  const child = spawn(node, [actionMain(actionYml)], {
    cwd: dir,
    env: full,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (c) => {
    log += c;
  });
  child.stderr.on('data', (c) => {
    log += c;
  });
  const code = await new Promise((resolve) => child.on('exit', resolve));
  const outputs = {};
  for (const [, name, , value] of readFileSync(env.GITHUB_OUTPUT, 'utf8').matchAll(
    /^([^\n<]+)<<(\S+)\n([\s\S]*?)\n\2$/gm,
  ))
    outputs[name] = value;
  return { code, outputs, log };
}

export async function compareThroughAction({ dir, base, head, overrides, git, node = process.execPath }) {
  git('checkout', '-q', '--detach', head);
  const work = mkdtempSync(join(tmpdir(), 'hotpath-bench-action-'));
  const api = await fakeGitHub();
  try {
    const event = {
      action: 'synchronize',
      number: 7,
      pull_request: {
        number: 7,
        html_url: 'https://github.example/o/r/pull/7',
        base: { sha: base, ref: 'main' },
        head: {
          sha: head,
          ref: 'feature',
          repo: { html_url: 'https://github.example/o/r', full_name: 'o/r' },
        },
      },
      repository: { name: 'r', owner: { login: 'o' }, html_url: 'https://github.example/o/r' },
    };
    const files = {
      event: join(work, 'event.json'),
      output: join(work, 'output'),
      summary: join(work, 'summary.md'),
    };
    writeFileSync(files.event, JSON.stringify(event));
    writeFileSync(files.output, '');
    writeFileSync(files.summary, '');
    mkdirSync(join(work, 'runner-temp'));
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_EVENT_PATH: files.event,
      GITHUB_RUN_ID: '4242',
      GITHUB_REPOSITORY: 'o/r',
      GITHUB_API_URL: api.url,
      GITHUB_SERVER_URL: 'https://github.example',
      GITHUB_WORKSPACE: dir,
      GITHUB_SHA: head,
      GITHUB_OUTPUT: files.output,
      GITHUB_STEP_SUMMARY: files.summary,
      RUNNER_TEMP: join(work, 'runner-temp'),
      HOTPATH_V8_PROFILER_INSTALL: process.env.HOTPATH_V8_PROFILER_INSTALL ?? 'false',
    };
    const inputs = { 'github-token': 'ghs_bench_token' };
    for (const [key, value] of Object.entries(overrides)) inputs[INPUT_OF[key] ?? key] = String(value);
    const { code, outputs, log } = await runActionStep({ dir, env, inputs, node });
    if (!outputs.report) throw new Error(`the Action exited ${code} without a report:\n${log.slice(-3000)}`);
    const report = JSON.parse(readFileSync(outputs.report, 'utf8'));
    const posted = api.requests.filter((r) => r.method === 'POST' || r.method === 'PATCH');
    return {
      code,
      report,
      outputs,
      comment: posted.length ? JSON.parse(posted.at(-1).body).body : undefined,
    };
  } finally {
    await api.close();
    rmSync(work, { recursive: true, force: true });
  }
}
