import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { git } from '../measure/checkout.js';
import { SETTINGS } from '../settings/table.js';
import type { Project } from './detect.js';
import { appendToProjectFile, checkProjectPath, writeProjectFile } from './project-files.js';
import { configFile, installCommand, measureWorkflow, reportWorkflow, runCommand } from './templates.js';

export { detectProject, type Project, startCommand } from './detect.js';

export interface InitChoices {
  /** The start command (default: what detectProject found). */
  start: string;
  /** The routes to measure, each a path starting with "/". */
  routes: string[];
  /** An SLO for capacity, as its canonical text (settings/slo.ts); none when unset. */
  slo?: string;
  /** Overwrite files that exist. */
  force: boolean;
  /**
   * Add @hotpath/compare with the package manager (false: write it into package.json only).
   * Running it runs the repository's code (.pnpmfile.cjs, yarnPath, install scripts): the CLI
   * sets it only when the user said yes on a terminal.
   */
  install: boolean;
  /** The version range to depend on, e.g. "^0.2.0". */
  versionRange: string;
}

export interface InitResult {
  written: string[];
  /** Files that existed and were kept (no --force). */
  kept: string[];
  /** How @hotpath/compare became a devDependency: installed, written, already there, or failed. */
  dependency: 'installed' | 'written' | 'present' | { failed: string; command: string };
  /** The command to run next. */
  next: string;
  /** What `next` measures, in a few words. */
  nextMeasures: string;
  /** `.gitignore` got hotpath's output folder (it lacked it). */
  gitignore: boolean;
}

/** hotpath's default output folder (the `out` setting), which a run rewrites: never something to commit. */
const OUT_DIR = String(SETTINGS.find((s) => s.key === 'out')?.default);

/** Adds the output folder to the project's .gitignore (made if absent) unless a line covers it. */
function ignoreOutput(dir: string): boolean {
  return appendToProjectFile(dir, '.gitignore', (text) => {
    const covered = text.split(/\r?\n/).some((line) => line.trim().replace(/^\/|\/$/g, '') === OUT_DIR);
    return covered ? undefined : `${text === '' || text.endsWith('\n') ? '' : '\n'}${OUT_DIR}/\n`;
  });
}

/** git's output, or undefined when the command fails (no repository, no such ref). */
const tryGit = (dir: string, args: string[]): Promise<string | undefined> =>
  git(dir, args).catch(() => undefined);

/**
 * The first comparison to run: against the default branch's merge-base when there is one that
 * differs from HEAD (a feature branch); on the default branch itself (a fresh repository with no
 * remote, say) that merge-base is HEAD, so the last commit is measured instead: --base HEAD~1.
 */
async function firstComparison(dir: string, run: string): Promise<{ next: string; nextMeasures: string }> {
  const merged = {
    next: `${run} compare`,
    nextMeasures: "your working tree against the default branch's merge-base",
  };
  const head = await tryGit(dir, ['rev-parse', 'HEAD']);
  if (!head) return merged;
  const remote = await tryGit(dir, ['symbolic-ref', '--short', 'refs/remotes/origin/HEAD']);
  for (const branch of [remote, 'origin/main', 'origin/master', 'main', 'master']) {
    if (!branch) continue;
    const base = await tryGit(dir, ['merge-base', 'HEAD', branch]);
    if (base === undefined) continue;
    if (base !== head) return merged;
    break;
  }
  if ((await tryGit(dir, ['rev-parse', '--verify', '-q', 'HEAD~1'])) === undefined) return merged;
  return {
    next: `${run} compare --base HEAD~1`,
    nextMeasures: 'your working tree against the commit before HEAD',
  };
}

const PACKAGE = '@hotpath/compare';

/** Adds the devDependency to package.json text, keeping its indentation; undefined if present. */
export function withDevDependency(text: string, range: string): string | undefined {
  const pkg = JSON.parse(text) as Record<string, unknown>;
  const dev = { ...((pkg.devDependencies as Record<string, string> | undefined) ?? {}) };
  const deps = (pkg.dependencies as Record<string, string> | undefined) ?? {};
  if (PACKAGE in dev || PACKAGE in deps) return undefined;
  dev[PACKAGE] = range;
  pkg.devDependencies = Object.fromEntries(Object.entries(dev).sort(([a], [b]) => a.localeCompare(b)));
  const indent = /^[ \t]+(?=")/m.exec(text)?.[0] ?? '  ';
  return `${JSON.stringify(pkg, null, indent)}\n`;
}

/**
 * Writes hotpath.config.json and the two workflows (measure on pull_request, report on
 * workflow_run) into the project, and makes @hotpath/compare a devDependency. A file that
 * exists is kept unless `force`. Nothing is written through a symbolic link (see
 * project-files.ts): when any file init may write, or a folder on its path, is a link or not a
 * regular file, HP_COMPARE_INIT_UNSAFE_PATH names it before anything is written.
 */
export async function initProject(project: Project, choices: InitChoices): Promise<InitResult> {
  const files: [string, string][] = [
    [
      'hotpath.config.json',
      configFile(choices.start, choices.routes, choices.slo, project.build, project.protocol),
    ],
    [
      '.github/workflows/hotpath.yml',
      measureWorkflow(project.packageManager, project.data, project.lockfile !== undefined),
    ],
    ['.github/workflows/hotpath-report.yml', reportWorkflow()],
  ];
  const exists = new Map(
    [...files.map(([name]) => name), 'package.json', '.gitignore'].map((name) => [
      name,
      checkProjectPath(project.dir, name),
    ]),
  );
  const written: string[] = [];
  const kept: string[] = [];
  for (const [name, text] of files) {
    const there = exists.get(name) === true;
    if (there && !choices.force) {
      kept.push(name);
      continue;
    }
    writeProjectFile(project.dir, name, text, there);
    written.push(name);
  }
  let dependency: InitResult['dependency'] = 'present';
  const writePackageJson = (text: string) =>
    writeProjectFile(project.dir, 'package.json', text, exists.get('package.json') === true);
  const current = project.packageJson?.text;
  const updated =
    current === undefined
      ? `${JSON.stringify({ private: true, devDependencies: { [PACKAGE]: choices.versionRange } }, null, 2)}\n`
      : withDevDependency(current, choices.versionRange);
  if (updated !== undefined) {
    if (choices.install) {
      const [command, args] = installCommand(project.packageManager, `${PACKAGE}@${choices.versionRange}`);
      if (current === undefined) writePackageJson(updated);
      try {
        await promisify(execFile)(command, args, { cwd: project.dir, timeout: 600_000 });
        dependency = 'installed';
      } catch (err) {
        const message =
          (err as { stderr?: string }).stderr?.trim().split('\n').at(-1) ?? (err as Error).message;
        dependency = { failed: message, command: [command, ...args].join(' ') };
      }
    } else {
      writePackageJson(updated);
      dependency = 'written';
    }
  }
  const gitignore = ignoreOutput(project.dir);
  return {
    written,
    kept,
    dependency,
    gitignore,
    ...(await firstComparison(project.dir, runCommand(project.packageManager))),
  };
}
