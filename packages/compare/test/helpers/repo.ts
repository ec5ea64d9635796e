import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `hotpath` bin as npm links it. */
export const CLI_BIN = fileURLToPath(new URL('../../bin/hotpath.js', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

export interface CliRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `hotpath ARGS` without blocking the test's event loop (a comparison takes tens of
 * seconds: a spawnSync that long keeps vitest's worker from answering its runner, whose calls
 * time out after 60 s and fail the run with an unhandled "Timeout calling onTaskUpdate").
 */
export function runCli(
  args: readonly string[],
  options: { cwd?: string; timeout?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd: options.cwd ?? FIXTURES,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), options.timeout ?? 180_000);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  }).trim();

export interface TempRepo {
  dir: string;
  baseSha: string;
  headSha: string;
}

/** Writes `files` (paths relative to `dir`, folders made as needed). */
function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
}

/** A git repo with two commits: base has `baseFiles`, head applies `headFiles` on top. */
export function makeRepo(
  root: string,
  baseFiles: Record<string, string>,
  headFiles: Record<string, string>,
): TempRepo {
  const dir = join(root, 'repo');
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  writeFiles(dir, baseFiles);
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'base');
  const baseSha = git(dir, 'rev-parse', 'HEAD');
  writeFiles(dir, headFiles);
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'head');
  const headSha = git(dir, 'rev-parse', 'HEAD');
  return { dir, baseSha, headSha };
}

/** The CLI's flags for a short comparison: two rounds of 0.7 s at 2 connections. */
export const SHORT_RUN = ['--duration', '0.7', '--warmup', '0.2', '--rounds', '2', '--connections', '2'];
