import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Project } from './detect.js';
import { configFile, installCommand, measureWorkflow, reportWorkflow, runCommand } from './templates.js';

export { detectProject, type Project, startCommand } from './detect.js';

export interface InitChoices {
  /** The start command (default: what detectProject found). */
  start: string;
  /** The routes to measure, each a path starting with "/". */
  routes: string[];
  /** Overwrite files that exist. */
  force: boolean;
  /** Add @hotpath/compare with the package manager (false: write it into package.json only). */
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
 * exists is kept unless `force`.
 */
export async function initProject(project: Project, choices: InitChoices): Promise<InitResult> {
  const files: [string, string][] = [
    ['hotpath.config.json', configFile(choices.start, choices.routes)],
    ['.github/workflows/hotpath.yml', measureWorkflow(project.packageManager)],
    ['.github/workflows/hotpath-report.yml', reportWorkflow()],
  ];
  const written: string[] = [];
  const kept: string[] = [];
  for (const [name, text] of files) {
    const path = join(project.dir, name);
    if (existsSync(path) && !choices.force) {
      kept.push(name);
      continue;
    }
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    written.push(name);
  }
  let dependency: InitResult['dependency'] = 'present';
  const pkgPath = join(project.dir, 'package.json');
  const current = project.packageJson?.text;
  const updated =
    current === undefined
      ? `${JSON.stringify({ private: true, devDependencies: { [PACKAGE]: choices.versionRange } }, null, 2)}\n`
      : withDevDependency(current, choices.versionRange);
  if (updated !== undefined) {
    if (choices.install) {
      const [command, args] = installCommand(project.packageManager, `${PACKAGE}@${choices.versionRange}`);
      if (current === undefined) writeFileSync(pkgPath, updated);
      try {
        await promisify(execFile)(command, args, { cwd: project.dir, timeout: 600_000 });
        dependency = 'installed';
      } catch (err) {
        const message =
          (err as { stderr?: string }).stderr?.trim().split('\n').at(-1) ?? (err as Error).message;
        dependency = { failed: message, command: [command, ...args].join(' ') };
      }
    } else {
      writeFileSync(pkgPath, updated);
      dependency = 'written';
    }
  }
  return { written, kept, dependency, next: `${runCommand(project.packageManager)} compare` };
}
