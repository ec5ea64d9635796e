import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { formatTail, HotpathCompareError } from '../errors.js';
import type { Side } from '../model.js';
import { printable } from '../printable.js';
import { throwIfAborted } from './abort.js';
import { untrustedEnvironment } from './environment.js';
import { runCommand } from './process-group.js';

/** Runs git without a shell: refs and paths are arguments, never parts of a command string. */
export function git(cwd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile('git', args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        reject(
          new HotpathCompareError(
            'HP_COMPARE_GIT',
            `git ${printable(args.join(' '))} failed in ${printable(cwd)}: ${printable(stderr.trim() || err.message, { newlines: true })}`,
            {
              cause: err,
            },
          ),
        );
      } else resolvePromise(stdout.trim());
    });
  });
}

export function gitRoot(dir: string): Promise<string> {
  return git(dir, ['rev-parse', '--show-toplevel']);
}

async function hasCommit(root: string, sha: string): Promise<boolean> {
  try {
    await git(root, ['cat-file', '-e', `${sha}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure `sha` is in the clone: a shallow checkout (actions/checkout's default depth 1)
 * lacks the base commit, so fetch exactly that commit; fail with advice when that is impossible.
 */
export async function ensureCommit(root: string, sha: string, side: Side = 'base'): Promise<void> {
  if (await hasCommit(root, sha)) return;
  const attempts: string[][] = [
    ['fetch', '--no-tags', '--depth=1', 'origin', sha],
    ['fetch', '--no-tags', 'origin', sha],
  ];
  let last = '';
  for (const args of attempts) {
    try {
      await git(root, args);
      if (await hasCommit(root, sha)) return;
    } catch (err) {
      last = (err as Error).message;
    }
  }
  throw new HotpathCompareError(
    'HP_COMPARE_BASE_NOT_FOUND',
    `${side} commit ${sha} is not in this clone and could not be fetched (${last || 'fetch gave nothing'}); check out with actions/checkout "fetch-depth: 0" so the base commit is present`,
    { side },
  );
}

/** Resolves a ref (branch, tag, sha, HEAD~1) to a commit sha. */
export async function resolveCommit(root: string, ref: string): Promise<string> {
  if (ref.startsWith('-')) {
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `invalid ref ${JSON.stringify(ref)}: expected a branch, tag or commit`,
    );
  }
  try {
    return await git(root, ['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`]);
  } catch (err) {
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `unknown ref ${JSON.stringify(ref)}: expected a branch, tag or commit of ${root}`,
      { cause: err },
    );
  }
}

/** The merge base of HEAD with the default branch (origin/HEAD, else main or master). */
export async function defaultBase(root: string): Promise<string> {
  const candidates: string[] = [];
  try {
    candidates.push(await git(root, ['symbolic-ref', '--short', 'refs/remotes/origin/HEAD']));
  } catch {
    // no remote HEAD
  }
  candidates.push('origin/main', 'origin/master', 'main', 'master');
  for (const branch of candidates) {
    try {
      return await git(root, ['merge-base', 'HEAD', branch]);
    } catch {
      // try the next
    }
  }
  throw new HotpathCompareError(
    'HP_COMPARE_GIT',
    `could not find the default branch of ${root} to compare with: pass --base <ref>`,
  );
}

/** Checks out `sha` into `dir` as a detached git worktree. */
export async function addWorktree(root: string, sha: string, dir: string): Promise<void> {
  await git(root, ['worktree', 'add', '--detach', '--force', dir, sha]);
}

export async function removeWorktree(root: string, dir: string): Promise<void> {
  try {
    await git(root, ['worktree', 'remove', '--force', dir]);
  } catch {
    // already gone
  }
  try {
    await git(root, ['worktree', 'prune']);
  } catch {
    // nothing to prune
  }
}

/** The directory inside another checkout that corresponds to `dir` inside `root`. */
export function mapIntoCheckout(root: string, dir: string, checkout: string): string {
  return join(checkout, relative(root, resolve(dir)));
}

export interface InstallPlan {
  command: string;
  cwd: string;
  lockfile?: string;
}

const LOCKFILES: readonly [string, string][] = [
  ['pnpm-lock.yaml', 'pnpm install --frozen-lockfile'],
  ['yarn.lock', 'yarn install --frozen-lockfile'],
  ['package-lock.json', 'npm ci'],
  ['npm-shrinkwrap.json', 'npm ci'],
];

/**
 * The install command for an app directory: the nearest lockfile from `dir` up to `root`
 * decides the package manager (run where the lockfile is); a package.json without lockfile
 * gets `npm install`; nothing to install gives undefined.
 */
export function detectInstall(dir: string, root: string): InstallPlan | undefined {
  let current = resolve(dir);
  const top = resolve(root);
  for (;;) {
    for (const [file, command] of LOCKFILES) {
      if (existsSync(join(current, file))) return { command, cwd: current, lockfile: file };
    }
    if (current === top || dirname(current) === current) break;
    current = dirname(current);
  }
  if (existsSync(join(dir, 'package.json'))) {
    return { command: 'npm install --no-audit --no-fund', cwd: resolve(dir) };
  }
  return undefined;
}

/** `install` setting: '' = detect, 'none'/'false'/'skip' = skip, anything else = that command. */
export function installPlan(setting: string, dir: string, root: string): InstallPlan | undefined {
  const s = setting.trim();
  if (s === '') return detectInstall(dir, root);
  if (['none', 'false', 'skip'].includes(s.toLowerCase())) return undefined;
  return { command: s, cwd: resolve(dir) };
}

/** Runs install then build in one checkout, with the untrusted environment. */
export async function prepareCheckout(
  side: Side,
  steps: readonly { label: 'install' | 'build'; command: string; cwd: string }[],
  env: NodeJS.ProcessEnv,
  log?: (line: string) => void,
  signal?: AbortSignal,
  passEnv: readonly string[] = [],
): Promise<void> {
  for (const step of steps) {
    throwIfAborted(signal);
    log?.(`${side}: ${step.label}: ${printable(step.command)} (in ${printable(step.cwd)})`);
    const { exit, output } = await runCommand(step.command, {
      cwd: step.cwd,
      env: untrustedEnvironment(env, passEnv),
      timeoutMs: 20 * 60_000,
      signal,
    });
    throwIfAborted(signal);
    if (exit.code !== 0) {
      throw new HotpathCompareError(
        'HP_COMPARE_COMMAND_FAILED',
        `${side}: ${step.label} command ${JSON.stringify(step.command)} exited with ${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`} in ${step.cwd}. Last output lines:\n${formatTail(output.last(20))}`,
        { side },
      );
    }
  }
}
