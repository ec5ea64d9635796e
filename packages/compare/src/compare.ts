import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyse, type Report, type SideInfo, type SourceLinks } from './analyse/analyse.js';
import { HotpathCompareError, type Side } from './errors.js';
import { throwIfAborted } from './measure/abort.js';
import {
  addWorktree,
  defaultBase,
  gitRoot,
  installPlan,
  mapIntoCheckout,
  prepareCheckout,
  removeWorktree,
  resolveCommit,
} from './measure/checkout.js';
import { allowlistedEnvironment } from './measure/environment.js';
import { type Measurements, measure } from './measure/measure.js';
import type { RoundContext, ServerSpec } from './measure/round.js';
import { type WrittenFiles, writeReportFiles } from './render/files.js';
import type { CompareConfig, Settings } from './settings/schema.js';
import { resolveSettings } from './settings/schema.js';

/** Where dist/probe.cjs is, from the bundle (dist/), the library build (dist/…/) or the sources. */
export function probePath(): string {
  for (const candidate of ['./probe.cjs', '../probe.cjs', '../dist/probe.cjs', '../../dist/probe.cjs']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('dist/probe.cjs is missing: run the package build (pnpm --filter @hotpath/compare build)');
}

/** A step of a running comparison, for progress displays. */
export interface ProgressEvent {
  phase: 'prepare' | 'measure' | 'analyse';
  message: string;
}

/** Options of compare(): the config-file object plus what only a program can pass. */
export interface CompareOptions extends CompareConfig {
  /** Aborts the comparison: every process is stopped, every worktree and temp dir removed. */
  signal?: AbortSignal;
  /** Called with each step (checkouts, installs, rounds, scenarios). */
  onProgress?: (event: ProgressEvent) => void;
  /** Environment the commands start from (default process.env; tokens are always removed). */
  env?: NodeJS.ProcessEnv;
}

/** What a caller that already holds settings adds (the CLI, the Action). */
export interface CompareRuntime {
  /** Where source links point (the Action: the PR's head commit on GitHub). */
  links?: SourceLinks;
  /** Warnings to carry into the report. */
  warnings?: string[];
  /** Extra variables for the servers (e.g. HOTPATH_V8_PROFILER_PATH). */
  extraEnv?: Record<string, string>;
  /** Commits the caller already resolved (the Action: the PR's base and head). */
  refs?: Partial<Record<Side, { ref?: string; sha?: string }>>;
  /** Directory that relative settings (cwd, out) resolve against (default process.cwd()). */
  baseDir?: string;
  /**
   * Give the commands only an allowlist of the environment plus `passEnv` (the Action, where
   * the job may hold secrets). Otherwise they get the environment minus tokens and secrets.
   */
  allowlistEnv?: boolean;
}

export interface ComparisonOutcome {
  report: Report;
  measurements: Measurements;
  sides: Record<Side, SideInfo>;
  files: WrittenFiles;
}

export interface MeasuredSides {
  measurements: Measurements;
  sides: Record<Side, SideInfo>;
}

export type RunOptions = Pick<CompareOptions, 'signal' | 'onProgress' | 'env'> & CompareRuntime;

/**
 * Runs a whole comparison with validated settings: checkouts (git worktrees for refs, or two
 * start commands in one tree), install and build, interleaved rounds, analysis, report files.
 * Leaves no process, worktree or temp dir behind, on success, error or abort.
 */
export async function runComparison(
  settings: Settings,
  options: RunOptions = {},
): Promise<ComparisonOutcome> {
  const { measurements, sides } = await runMeasurements(settings, options);
  options.onProgress?.({ phase: 'analyse', message: 'statistics, hot functions, report files' });
  const report = analyse(measurements, { settings, sides, links: options.links, warnings: options.warnings });
  const outDir = resolve(options.baseDir ?? process.cwd(), settings.out);
  const files = writeReportFiles(outDir, report, measurements);
  return { report, measurements, sides, files };
}

/**
 * The measuring half of runComparison: checkouts, install and build, interleaved rounds; raw
 * measurements and what each side ran, no statistics (the Action's `measure` mode writes these
 * as results). Leaves no process, worktree or temp dir behind.
 */
export async function runMeasurements(settings: Settings, options: RunOptions = {}): Promise<MeasuredSides> {
  const { signal } = options;
  const env = options.allowlistEnv
    ? allowlistedEnvironment(options.env ?? process.env, settings.passEnv)
    : (options.env ?? process.env);
  const progress = (phase: ProgressEvent['phase']) => (message: string) =>
    options.onProgress?.({ phase, message });
  const baseDir = options.baseDir ?? process.cwd();
  const cwd = resolve(baseDir, settings.cwd);
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    throwIfAborted(signal);
    let specs: Record<Side, ServerSpec>;
    let sides: Record<Side, SideInfo>;
    if (settings.baseStart !== undefined || settings.headStart !== undefined) {
      if (!settings.baseStart || !settings.headStart)
        throw new HotpathCompareError(
          'HP_COMPARE_INVALID_SETTING',
          'baseStart and headStart go together: give both commands (or "start" with git refs)',
        );
      if (settings.base || settings.head)
        throw new HotpathCompareError(
          'HP_COMPARE_INVALID_SETTING',
          'base/head (git refs) and baseStart/headStart (two commands in one tree) exclude each other',
        );
      const root = await gitRoot(cwd).catch(() => cwd);
      specs = {
        base: { side: 'base', command: settings.baseStart, cwd, root },
        head: { side: 'head', command: settings.headStart, cwd, root },
      };
      sides = { base: { command: settings.baseStart, cwd }, head: { command: settings.headStart, cwd } };
    } else {
      if (!settings.start)
        throw new HotpathCompareError(
          'HP_COMPARE_INVALID_SETTING',
          'missing "start" (the command that starts your server), or "baseStart" and "headStart"',
        );
      const start = settings.start;
      const root = await gitRoot(cwd);
      const log = progress('prepare');
      const wanted: Record<Side, { ref?: string; sha?: string }> = {
        base: options.refs?.base ?? { ref: settings.base },
        head: options.refs?.head ?? { ref: settings.head },
      };
      if (!wanted.base.sha)
        wanted.base.sha = wanted.base.ref
          ? await resolveCommit(root, wanted.base.ref)
          : await defaultBase(root);
      if (!wanted.head.sha && wanted.head.ref) wanted.head.sha = await resolveCommit(root, wanted.head.ref);
      const temp = mkdtempSync(join(tmpdir(), 'hotpath-worktrees-'));
      cleanups.push(() => rmSync(temp, { recursive: true, force: true }));
      specs = {} as Record<Side, ServerSpec>;
      sides = {} as Record<Side, SideInfo>;
      for (const side of ['base', 'head'] as const) {
        throwIfAborted(signal);
        const sha = wanted[side].sha;
        let appDir = cwd;
        let tree = root;
        if (sha) {
          tree = join(temp, side);
          log(`${side}: git worktree ${sha.slice(0, 12)}`);
          await addWorktree(root, sha, tree);
          cleanups.unshift(() => removeWorktree(root, tree));
          appDir = mapIntoCheckout(root, cwd, tree);
        }
        const steps: { label: 'install' | 'build'; command: string; cwd: string }[] = [];
        const install = installPlan(settings.install, appDir, tree);
        if (install && sha) steps.push({ label: 'install', ...install });
        if (settings.build && sha) steps.push({ label: 'build', command: settings.build, cwd: appDir });
        await prepareCheckout(side, steps, env, log, signal, settings.passEnv);
        specs[side] = { side, command: start, cwd: appDir, root: tree, workingTree: !sha };
        sides[side] = {
          command: start,
          cwd: appDir,
          ref: wanted[side].ref ?? (sha ? undefined : 'working tree'),
          sha,
        };
      }
    }
    const context: RoundContext = {
      probePath: probePath(),
      env,
      extraEnv: options.extraEnv,
      log: progress('measure'),
      signal,
    };
    const measurements = await measure({ base: specs.base, head: specs.head, settings }, context);
    return { measurements, sides };
  } finally {
    for (const cleanup of cleanups) {
      try {
        await cleanup();
      } catch {
        // best effort: the next cleanup still runs
      }
    }
  }
}

/**
 * Compares base and head under load and returns the report (`report.regressed`,
 * `report.scenarios[i].regressed`, metrics with intervals, hot functions). Takes the same object
 * as hotpath.config.json. Never exits the process; throws HotpathCompareError on bad settings,
 * a server that fails, or an abort — and leaves no process, worktree or temp dir behind.
 */
export async function compare(options: CompareOptions): Promise<Report> {
  const { signal, onProgress, env, ...config } = options;
  const settings = resolveSettings({ config, configName: 'compare() options' });
  const { report } = await runComparison(settings, { signal, onProgress, env });
  return report;
}
