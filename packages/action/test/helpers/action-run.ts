import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { actionDefaults } from '../../../../scripts/action-defaults.mjs';
import { expectSafeMarkdown } from '../../../compare/test/helpers/gfm.js';
import { OWN_LINKS } from './fake-github.js';

export const ACTION_BUNDLE = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

/** action.yml's declared defaults: GitHub sets INPUT_<NAME> to them for every input a step leaves out. */
export const ACTION_DEFAULTS = actionDefaults();

import type { TempRepo } from '../../../compare/test/helpers/repo.js';

// One temp-repo helper for both packages' end-to-end tests.
export { makeRepo, type TempRepo } from '../../../compare/test/helpers/repo.js';

export function pullRequestEvent(repo: TempRepo, number = 7) {
  return {
    action: 'synchronize',
    number,
    pull_request: {
      number,
      html_url: `https://github.example/o/r/pull/${number}`,
      base: { sha: repo.baseSha, ref: 'main' },
      head: {
        sha: repo.headSha,
        ref: 'feature',
        repo: { html_url: 'https://github.example/o/r', full_name: 'o/r' },
      },
    },
    repository: { name: 'r', owner: { login: 'o' }, html_url: 'https://github.example/o/r' },
  };
}

export interface ActionRun {
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
}

function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /^([^\n<]+)<<(\S+)\n([\s\S]*?)\n\2$/gm;
  for (const [, name, , value] of text.matchAll(re)) {
    if (name !== undefined && value !== undefined) out[name] = value;
  }
  return out;
}

/** A push to the default branch of o/r: the event of the drift and bisect modes. */
export const pushEvent = {
  ref: 'refs/heads/main',
  repository: {
    name: 'r',
    owner: { login: 'o' },
    html_url: 'https://github.example/o/r',
    default_branch: 'main',
  },
};

/** Runs the bundled Action the way GitHub does: node dist/index.js with INPUT_* and GITHUB_*. */
export async function runAction(options: {
  repo: TempRepo;
  inputs: Record<string, string>;
  apiUrl: string;
  event?: unknown;
  env?: Record<string, string>;
  node?: string;
  eventName?: string;
  /** Run as a job whose token was never given: no GITHUB_TOKEN, github-token or ACTIONS_* at all. */
  noToken?: boolean;
  /** Called with the Action's process once it runs (e.g. to cancel it). */
  onSpawn?: (child: import('node:child_process').ChildProcess) => void;
}): Promise<ActionRun> {
  const work = mkdtempSync(join(tmpdir(), 'hotpath-action-run-'));
  // the runner's files (event, outputs, summary, RUNNER_TEMP with the report) last as long as
  // the test that reads them, as a job's do on GitHub
  onTestFinished(() => rmSync(work, { recursive: true, force: true }));
  const eventPath = join(work, 'event.json');
  writeFileSync(eventPath, JSON.stringify(options.event ?? pullRequestEvent(options.repo)));
  const outputPath = join(work, 'output');
  const summaryPath = join(work, 'summary.md');
  writeFileSync(outputPath, '');
  writeFileSync(summaryPath, '');
  const runnerTemp = join(work, 'runner-temp');
  mkdirSync(runnerTemp);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GITHUB_ACTIONS: 'true',
    GITHUB_EVENT_NAME: options.eventName ?? 'pull_request',
    GITHUB_RUN_ID: '4242',
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: 'o/r',
    GITHUB_API_URL: options.apiUrl,
    GITHUB_SERVER_URL: 'https://github.example',
    GITHUB_WORKSPACE: options.repo.dir,
    GITHUB_SHA: options.repo.headSha,
    GITHUB_OUTPUT: outputPath,
    GITHUB_STEP_SUMMARY: summaryPath,
    GITHUB_TOKEN: 'ghs_secret_token_for_tests',
    ACTIONS_RUNTIME_TOKEN: 'actions-runtime-secret',
    RUNNER_TEMP: runnerTemp,
    HOTPATH_V8_PROFILER_INSTALL: 'false',
    'INPUT_GITHUB-TOKEN': 'ghs_secret_token_for_tests',
    ...options.env,
  };
  if (options.noToken) {
    for (const name of Object.keys(env))
      if (/TOKEN/.test(name) || name.startsWith('ACTIONS_')) delete env[name];
  }
  // as GitHub does: every input the step leaves out at action.yml's default, then the step's own
  for (const [name, value] of Object.entries({ ...ACTION_DEFAULTS, ...options.inputs }))
    env[`INPUT_${name.toUpperCase()}`] = value;
  const child = spawn(options.node ?? process.execPath, [ACTION_BUNDLE], {
    cwd: options.repo.dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  options.onSpawn?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += c;
  });
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  const summary = readFileSync(summaryPath, 'utf8');
  // Every job summary of the suite is rendered as GitHub would and checked (comments: fake-github).
  expectSafeMarkdown(summary, OWN_LINKS);
  return {
    code,
    stdout,
    stderr,
    outputs: parseOutputs(readFileSync(outputPath, 'utf8')),
    summary,
  };
}
