// The rules of `pnpm lint:workflows` beyond actionlint, as pure functions of a workflow's text
// (scripts/lint-workflows.mjs reads the files and prints; packages/action/test/lint-workflows.test.ts
// tests each rule). A problem is { line, message }, line 1-based in the text given.
//
// 1. pin: a third-party action (or reusable workflow) is pinned by a full commit SHA. Only this
//    repository's own Action may be used by tag (`hotpath-dev/hotpath@v0`, what the examples show
//    users) or by path (`./`). Checked line by line, so it also applies to a README's fragments.
// 2. pull-request code next to a write token: a job that holds a write permission must not check
//    out or run code from a pull request. A job "holds a write permission" when its permissions —
//    its own `permissions:`, else the workflow's — grant `write` on any scope (`id-token: write`
//    included) or are `write-all`. When neither the job nor the workflow sets `permissions`, the
//    token gets the repository's or organisation's default, which may be read/write on every
//    scope and cannot be seen from the file: an unset block counts as `write-all`. (`read-all`
//    and `{}` hold no write.) A job "checks out or runs code from a pull request" when
//    a. an actions/checkout step's `ref` names the pull request's head or merge commit
//       (`github.event.pull_request.head.sha`/`.ref`, `github.head_ref`, `merge_commit_sha`,
//       `refs/pull/…`, `github.event.workflow_run.head_sha`/`head_branch`) or its `repository` the
//       head repository — on any event; or
//    b. a `run:` line fetches it: `gh pr checkout`, or git fetch/checkout/switch/worktree/pull/
//       clone/reset on the same line as one of those references; or
//    c. on an event whose default checkout IS the pull request's merge commit (`pull_request`,
//       `pull_request_review`, `pull_request_review_comment`), an actions/checkout step with no
//       `ref` (or `${{ github.sha }}`/`${{ github.ref }}`) and no other `repository` is followed by
//       a `uses: ./…` step (a local action: files of that checkout) or a `run:` step. On
//       `pull_request_target` and `workflow_run` the default checkout is the base branch, not the
//       pull request, so c does not apply there (a and b do). A job's `if:` that requires
//       `github.event_name == 'X'` (or excludes one with `!=`), with no `||`, narrows its events.
//    An action used by tag or SHA that runs the workspace's code itself (hotpath's own `mode: all`
//    is one) is not detected: the rule sees `./` and `run:` only. Jobs that call a reusable
//    workflow (`jobs.<id>.uses`) are not looked into.
// 3. persist-credentials: in a job that holds a write permission, every actions/checkout step
//    sets `persist-credentials: false` (the token is otherwise left in .git/config for every
//    later step).
// 4. installs next to a write token: a job that holds a write permission has no `run:` line that
//    installs packages (`npm install|i|ci|add`, `pnpm install|i|add`, `yarn install|add`, bare
//    `yarn`, `bun install|add`) unless it says `--ignore-scripts`: an install runs every
//    dependency's install scripts with the job's token within reach. Build and test in a job with
//    a read-only token, hand the publish job its tarballs as an artifact.
// 5. code next to a write token: a job that holds a write permission builds or starts no code —
//    a. no `run:` line runs a package script or a package's binary (`npm|pnpm|yarn|bun` `run`,
//       `run-script`, `test`, `start`, `exec`, `build`, `dlx`, `x`; `npx`, `pnpx`, `bunx`) or
//       `node` on a file (`node server.js`, `node --flag scripts/x.mjs`; `node -e`/`-p` with
//       inline code and `node --version` are the workflow's own text, not the repository's);
//    b. no step uses hotpath's Action (`hotpath-dev/hotpath@…` or `./`) in a mode that runs the
//       repository's code: `all` (the default when `mode` is unset), `measure`, `drift-measure`,
//       `drift`, `bisect-measure`, or a mode given by an expression. `report`, `drift-record` and
//       `bisect-record` run none.
//    Any process started there can read the token from its parent's environment
//    (/proc/<ppid>/environ), whatever environment it was given. Other local actions
//    (`./.github/actions/…`) and `bash script.sh` are not detected.
import yaml from 'js-yaml';

export const OWN_ACTION = 'hotpath-dev/hotpath';

/** Events whose default checkout (GITHUB_SHA) is the pull request's merge commit. */
export const PULL_REQUEST_CODE_EVENTS = [
  'pull_request',
  'pull_request_review',
  'pull_request_review_comment',
];

/** References to the pull request's head or merge commit, in a `ref:` or a `run:` line. */
const PULL_REQUEST_HEAD =
  /github\.event\.pull_request\.head\.(?:sha|ref)|github\.head_ref|merge_commit_sha|refs\/pull\/|github\.event\.workflow_run\.head_(?:sha|branch)|github\.event\.workflow_run\.head_commit/;
/** A `repository:` naming the pull request's head repository. */
const PULL_REQUEST_REPOSITORY = /pull_request\.head\.repo|workflow_run\.head_repository/;
/** A `ref:` that is the default checkout after all. */
const DEFAULT_REF = /^\s*(?:\$\{\{\s*github\.(?:sha|ref)\s*\}\})?\s*$/;
const GIT_FETCH = /\bgit\b.*\b(?:fetch|checkout|switch|worktree|pull|clone|reset)\b/;

const isCheckout = (step) => typeof step?.uses === 'string' && /^actions\/checkout@/.test(step.uses);
const isLocalAction = (step) => typeof step?.uses === 'string' && step.uses.startsWith('./');
const isRun = (step) => step != null && typeof step === 'object' && 'run' in step;

/** `uses:` lines not pinned by a full commit SHA (rule 1). Works on any text, also a fragment. */
export function pinProblems(text) {
  const problems = [];
  text.split('\n').forEach((line, index) => {
    const uses = /^\s*(?:-\s+)?uses:\s*['"]?([^\s'"#]+)/.exec(line)?.[1];
    if (!uses || uses.startsWith('./') || uses.startsWith('docker://')) return;
    const [path = '', ref = ''] = uses.split('@');
    const repo = path.split('/').slice(0, 2).join('/');
    if (repo === OWN_ACTION) return;
    if (!/^[0-9a-f]{40}$/.test(ref))
      problems.push({ line: index + 1, message: `${uses} is not pinned by a full commit SHA` });
  });
  return problems;
}

/** The event names of a workflow's `on:`. */
export function eventsOf(on) {
  if (typeof on === 'string') return [on];
  if (Array.isArray(on)) return on.filter((e) => typeof e === 'string');
  if (on && typeof on === 'object') return Object.keys(on);
  return [];
}

/** The events a job runs on: the workflow's, narrowed by an `if:` on github.event_name. */
export function jobEvents(job, events) {
  const condition = typeof job?.if === 'string' ? job.if.replace(/^\s*\$\{\{|\}\}\s*$/g, '') : '';
  if (!condition || condition.includes('||')) return events;
  let out = events;
  for (const clause of condition.split('&&')) {
    const m = /^\s*\(?\s*github\.event_name\s*(==|!=)\s*'([\w-]+)'\s*\)?\s*$/.exec(clause);
    if (!m) continue;
    out = m[1] === '==' ? out.filter((e) => e === m[2]) : out.filter((e) => e !== m[2]);
  }
  return out;
}

/**
 * The write permissions a job holds: its own `permissions`, else the workflow's. Unset at both
 * levels is the repository default, counted as write-all.
 */
export function writePermissions(job, workflow) {
  const permissions = job?.permissions !== undefined ? job.permissions : workflow?.permissions;
  if (permissions === undefined || permissions === null)
    return ['write-all (permissions unset: the repository default token, which may write)'];
  if (permissions === 'write-all') return ['write-all'];
  if (permissions === 'read-all') return [];
  if (typeof permissions === 'object')
    return Object.entries(permissions)
      .filter(([, access]) => access === 'write')
      .map(([scope]) => `${scope}: write`);
  return [`permissions: ${String(permissions)} (not read-all, write-all or a map: counted as write-all)`];
}

/** Why a job checks out or runs code from a pull request, or undefined (rule 2, a–c). */
export function pullRequestCode(job, events) {
  const steps = Array.isArray(job?.steps) ? job.steps : [];
  const defaultIsPullRequest = events.some((e) => PULL_REQUEST_CODE_EVENTS.includes(e));
  let defaultCheckout;
  for (const [index, step] of steps.entries()) {
    const label = `step ${index + 1}${step?.name ? ` (${step.name})` : ''}`;
    if (isCheckout(step)) {
      const ref = step.with?.ref;
      const repository = step.with?.repository;
      if (typeof ref === 'string' && PULL_REQUEST_HEAD.test(ref))
        return `${label} checks out the pull request (ref: ${ref})`;
      if (typeof repository === 'string' && PULL_REQUEST_REPOSITORY.test(repository))
        return `${label} checks out the pull request's repository (repository: ${repository})`;
      const ownRepository =
        repository === undefined || /^\s*\$\{\{\s*github\.repository\s*\}\}\s*$/.test(String(repository));
      const defaultRef = ref === undefined || ref === null || DEFAULT_REF.test(String(ref));
      if (defaultIsPullRequest && ownRepository && defaultRef && defaultCheckout === undefined)
        defaultCheckout = label;
      continue;
    }
    if (isRun(step)) {
      const fetch = String(step.run)
        .split('\n')
        .find(
          (line) =>
            /\bgh\s+pr\s+checkout\b/.test(line) || (GIT_FETCH.test(line) && PULL_REQUEST_HEAD.test(line)),
        );
      if (fetch !== undefined) return `${label} fetches the pull request (${fetch.trim()})`;
    }
    if (defaultCheckout !== undefined && (isLocalAction(step) || isRun(step))) {
      const what = isRun(step) ? 'a run: step' : `uses: ${step.uses}`;
      return `${label} (${what}) runs the pull request's code, which ${defaultCheckout} checked out (the default checkout on ${events.filter((e) => PULL_REQUEST_CODE_EVENTS.includes(e)).join(', ')} is the pull request's merge commit)`;
    }
  }
  return undefined;
}

/** actions/checkout steps that leave the token in .git/config (rule 3). */
export function persistedCheckouts(job) {
  const steps = Array.isArray(job?.steps) ? job.steps : [];
  const out = [];
  for (const [index, step] of steps.entries()) {
    if (!isCheckout(step)) continue;
    const persist = step.with?.['persist-credentials'];
    if (persist !== false && persist !== 'false') out.push(index + 1);
  }
  return out;
}

const INSTALL =
  /(?:^|[\s;&|(])(?:(?:npm|pnpm|bun)\s+(?:-[-\w=]*\s+)*(?:install|i|ci|add)(?=\s|$|[;&|)])|yarn(?:\s+(?:-[-\w=]*\s+)*(?:install|add)(?=\s|$|[;&|)])|\s*(?:$|[;&|)])))/;

/** `run:` lines that install packages with their scripts (rule 4): [step, line text]. */
export function installSteps(job) {
  const steps = Array.isArray(job?.steps) ? job.steps : [];
  const out = [];
  for (const [index, step] of steps.entries()) {
    if (!isRun(step)) continue;
    for (const line of String(step.run).split('\n')) {
      const code = line.replace(/(^|\s)#.*$/, '');
      if (INSTALL.test(code) && !/--ignore-scripts\b/.test(code)) out.push([index + 1, line.trim()]);
    }
  }
  return out;
}

const PACKAGE_SCRIPT =
  /(?:^|[\s;&|(])(?:(?:npm|pnpm|yarn|bun)\s+(?:-[-\w=]*\s+)*(?:run|run-script|test|t|start|exec|build|dlx|x)(?=\s|$|[;&|)])|(?:npx|pnpx|bunx)\s)/;
/** `node` as a command with a first argument that is a file (not -e/-p/--eval/--print/-v/--version). */
const NODE_FILE =
  /(?:^|[;&|(])\s*(?:\w+=\S*\s+)*node(?:\s+--?(?!e\b|p\b|eval\b|print\b|v\b|version\b|check\b|c\b)[\w-]+(?:=\S*)?)*\s+(?!-)[^\s;&|)]+/;
/** Modes of hotpath's Action that run no code of the repository. */
const SAFE_MODES = ['report', 'drift-record', 'bisect-record'];

const isOwnAction = (step) =>
  typeof step?.uses === 'string' && (step.uses === './' || step.uses.split('@')[0] === OWN_ACTION);

/** Steps that build or start code (rule 5): [step, what]. */
export function codeSteps(job) {
  const steps = Array.isArray(job?.steps) ? job.steps : [];
  const out = [];
  for (const [index, step] of steps.entries()) {
    if (isOwnAction(step)) {
      const mode = step.with?.mode ?? 'all';
      if (!SAFE_MODES.includes(String(mode).trim()))
        out.push([index + 1, `uses ${step.uses} with mode ${mode}, which runs the repository's code`]);
      continue;
    }
    if (!isRun(step)) continue;
    for (const line of String(step.run).split('\n')) {
      const code = line.replace(/(^|\s)#.*$/, '');
      if (PACKAGE_SCRIPT.test(code) || NODE_FILE.test(code)) out.push([index + 1, `runs ${line.trim()}`]);
    }
  }
  return out;
}

/** The 1-based line of a job's key under `jobs:`, else 1. */
function jobLine(text, id) {
  const lines = text.split('\n');
  const jobs = lines.findIndex((line) => /^jobs:\s*(?:#.*)?$/.test(line));
  const escaped = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const key = new RegExp(`^\\s+['"]?${escaped}['"]?:\\s*(?:#.*)?$`);
  const at = lines.findIndex((line, i) => i > jobs && key.test(line));
  return at >= 0 ? at + 1 : 1;
}

/** Rules 2 to 5 on a parsed workflow; `text` only places the problems on lines. */
export function jobProblems(workflow, text = '') {
  const problems = [];
  const jobs = workflow?.jobs && typeof workflow.jobs === 'object' ? workflow.jobs : {};
  const events = eventsOf(workflow?.on);
  for (const [id, job] of Object.entries(jobs)) {
    if (!job || typeof job !== 'object' || typeof job.uses === 'string') continue;
    const writes = writePermissions(job, workflow);
    if (writes.length === 0) continue;
    const line = jobLine(text, id);
    const why = pullRequestCode(job, jobEvents(job, events));
    if (why)
      problems.push({
        line,
        message: `job "${id}" holds ${writes.join(', ')} and ${why}: run pull-request code in a job with a read-only token, and write from a job that runs none`,
      });
    for (const [step, install] of installSteps(job))
      problems.push({
        line,
        message: `job "${id}" holds ${writes.join(', ')} and its step ${step} installs packages, running their install scripts (${install}): install and build in a job with a read-only token`,
      });
    for (const [step, what] of codeSteps(job))
      problems.push({
        line,
        message: `job "${id}" holds ${writes.join(', ')} and its step ${step} ${what}: any process it starts can read the token from its parent's environment; build and run code in a job with a read-only token, and write from a job that runs none`,
      });
    for (const step of persistedCheckouts(job))
      problems.push({
        line,
        message: `job "${id}" holds ${writes.join(', ')} and its step ${step} (actions/checkout) does not set persist-credentials: false`,
      });
  }
  return problems;
}

/**
 * Every rule on one workflow's text (or a README's YAML block): the pins line by line, and the
 * job rules when the text parses as a workflow (`on` and `jobs`). A block that does not parse
 * is a problem; a fragment that parses but is not a workflow gets the pin rule only.
 */
export function workflowProblems(text) {
  const problems = pinProblems(text);
  let workflow;
  try {
    workflow = yaml.load(text);
  } catch (error) {
    problems.push({
      line: (error.mark?.line ?? 0) + 1,
      message: `not valid YAML: ${error.reason ?? error.message}`,
    });
    return problems;
  }
  if (workflow && typeof workflow === 'object' && 'on' in workflow && 'jobs' in workflow)
    problems.push(...jobProblems(workflow, text));
  return problems.sort((a, b) => a.line - b.line);
}

/** The ```yaml / ```yml blocks of a markdown text, each with the line its first line is on. */
export function yamlBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*ya?ml\b/.exec(lines[i] ?? '');
    if (!open) continue;
    const fence = open[2] ?? '```';
    const indent = open[1]?.length ?? 0;
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !(lines[j] ?? '').trim().startsWith(fence); j++)
      body.push((lines[j] ?? '').slice(indent));
    blocks.push({ line: i + 2, text: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** Every rule on a markdown file's YAML blocks, lines in the markdown file. */
export function markdownProblems(markdown) {
  return yamlBlocks(markdown).flatMap((block) =>
    workflowProblems(block.text).map((p) => ({ line: block.line + p.line - 1, message: p.message })),
  );
}
