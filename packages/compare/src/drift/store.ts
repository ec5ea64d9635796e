// Where a drift history lives: a local file (`hotpath drift --history FILE`), or a file on a
// results branch of the repository (`hotpath-history`), written with plain git plumbing — no
// checkout, no work-tree change: the new history is a blob, a tree and a commit whose parent is
// the branch as fetched, pushed without force. A push that loses a race (another writer pushed
// first) is refused by the remote; the writer re-reads the branch, merges its point into it and
// pushes again. A run cancelled before its push leaves the branch as it was; one cancelled after
// it has written its point whole: a push is atomic.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { HotpathCompareError } from '../errors.js';
import { writeOutputFile } from '../output-file.js';
import {
  appendPoint,
  emptyHistory,
  type History,
  type HistoryPoint,
  historyText,
  parseHistory,
  type Reference,
} from './history.js';

/** Reads a history file; an absent file is an empty history. */
export function readHistoryFile(path: string): History {
  if (!existsSync(path)) return emptyHistory();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new HotpathCompareError('HP_COMPARE_HISTORY', `cannot read ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return parseHistory(text, path);
}

/** Writes a history file whole (a new temp file renamed over it: never half written, never through a link). */
export function writeHistoryFile(path: string, history: History): void {
  try {
    // A new temp file (O_EXCL, no link followed) renamed over the name.
    writeOutputFile(path, historyText(history));
  } catch (err) {
    throw new HotpathCompareError('HP_COMPARE_HISTORY', `cannot write ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

export interface HistoryBranch {
  /** A clone of the repository (the workspace). */
  repo: string;
  /** Remote name or URL (default origin). */
  remote?: string;
  /** Default hotpath-history. */
  branch?: string;
  /** The file on the branch (default history.json). */
  file?: string;
  /** Extra environment for git (e.g. GIT_CONFIG_* carrying the push credentials). */
  env?: NodeJS.ProcessEnv;
  /** Pushes before giving up (default 5). */
  attempts?: number;
  /** Called after the branch was read and before the push (tests use it to lose a race). */
  beforePush?: (attempt: number) => Promise<void> | void;
}

const IDENTITY = {
  GIT_AUTHOR_NAME: 'hotpath',
  GIT_AUTHOR_EMAIL: 'hotpath@localhost',
  GIT_COMMITTER_NAME: 'hotpath',
  GIT_COMMITTER_EMAIL: 'hotpath@localhost',
};

function git(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv | undefined,
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      'git',
      args,
      {
        cwd,
        env: { ...process.env, ...env, ...IDENTITY, GIT_TERMINAL_PROMPT: '0' },
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? Number((err as { code: number }).code)
            : 1
          : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

async function gitOk(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv | undefined,
  input?: string,
) {
  const r = await git(cwd, args, env, input);
  if (r.code !== 0)
    throw new HotpathCompareError(
      'HP_COMPARE_HISTORY',
      `git ${args[0]} failed in ${cwd}: ${r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`}`,
    );
  return r.stdout.trim();
}

function validBranch(branch: string): string {
  if (!/^[\w][\w./-]{0,99}$/.test(branch) || branch.includes('..') || branch.endsWith('.lock'))
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `invalid history branch ${JSON.stringify(branch)}: expected a branch name of letters, digits, ".", "_", "/" or "-"`,
    );
  return branch;
}

/** The branch's commit and history as the remote has them now (no commit: an empty history). */
async function fetchHistory(options: HistoryBranch): Promise<{ parent?: string; history: History }> {
  const branch = validBranch(options.branch ?? 'hotpath-history');
  const remote = options.remote ?? 'origin';
  const file = options.file ?? 'history.json';
  const local = `refs/hotpath/${branch}`;
  const fetched = await git(
    options.repo,
    ['fetch', '--quiet', '--no-tags', remote, `+refs/heads/${branch}:${local}`],
    options.env,
  );
  if (fetched.code !== 0) {
    // A branch that does not exist yet is an empty history; anything else is an error.
    const listed = await git(
      options.repo,
      ['ls-remote', '--heads', remote, `refs/heads/${branch}`],
      options.env,
    );
    if (listed.code === 0 && listed.stdout.trim() === '') return { history: emptyHistory() };
    throw new HotpathCompareError(
      'HP_COMPARE_HISTORY',
      `cannot fetch the history branch ${branch} from ${remote}: ${fetched.stderr.trim().split('\n').at(-1) ?? ''}`,
    );
  }
  const parent = await gitOk(options.repo, ['rev-parse', '--verify', `${local}^{commit}`], options.env);
  const shown = await git(options.repo, ['show', `${parent}:${file}`], options.env);
  if (shown.code !== 0) return { parent, history: emptyHistory() };
  return { parent, history: parseHistory(shown.stdout, `${file} on branch ${branch}`) };
}

/** Reads the history on the results branch (empty when the branch does not exist yet). */
export async function readHistoryBranch(options: HistoryBranch): Promise<History> {
  return (await fetchHistory(options)).history;
}

/**
 * Appends a point to the history on the results branch and pushes it, re-reading and merging
 * when another writer pushed first. Returns the history as pushed.
 */
export async function appendToHistoryBranch(
  options: HistoryBranch,
  reference: Reference,
  point: HistoryPoint,
): Promise<{ history: History; attempts: number; commit: string }> {
  const branch = validBranch(options.branch ?? 'hotpath-history');
  const remote = options.remote ?? 'origin';
  const file = options.file ?? 'history.json';
  const attempts = options.attempts ?? 5;
  let lastError = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const { parent, history } = await fetchHistory(options);
    const next = appendPoint(history, reference, point);
    const blob = await gitOk(options.repo, ['hash-object', '-w', '--stdin'], options.env, historyText(next));
    const tree = await gitOk(options.repo, ['mktree'], options.env, `100644 blob ${blob}\t${file}\n`);
    const message = `hotpath drift: ${point.commit.slice(0, 12)} vs ${reference.sha.slice(0, 12)}`;
    const commit = await gitOk(
      options.repo,
      ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message],
      options.env,
    );
    await options.beforePush?.(attempt);
    const pushed = await git(
      options.repo,
      ['push', '--quiet', '--porcelain', remote, `${commit}:refs/heads/${branch}`],
      options.env,
    );
    if (pushed.code === 0) return { history: next, attempts: attempt, commit };
    lastError = `${pushed.stderr.trim()} ${pushed.stdout.trim()}`.trim().split('\n').at(-1) ?? '';
    // Rejected (someone pushed first) or a transient failure: read again, merge, push again.
  }
  throw new HotpathCompareError(
    'HP_COMPARE_HISTORY',
    `could not push the history branch ${branch} to ${remote} after ${attempts} attempts: ${lastError}`,
  );
}
