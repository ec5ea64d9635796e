import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HotpathCompareError } from '../errors.js';
import type { Shard, ShardId, Side, SideInfo } from '../model.js';
import { withGrpcMessages } from '../settings/grpc.js';
import type { Settings } from '../settings/schema.js';
import type { StopQuestion } from '../verdict/sequential.js';
import { throwIfAborted } from './abort.js';
import {
  addWorktree,
  defaultBase,
  gitRoot,
  installPlan,
  mapIntoCheckout,
  prepareCheckout,
  removeWorktree,
  resolveCommit,
} from './checkout.js';
import { allowlistedEnvironment, passEnvWarnings } from './environment.js';
import { chooseLoadLevels } from './load-level.js';
import { thisMachine } from './machine.js';
import { formatCpuList, placeProcesses } from './placement.js';
import { probePath } from './probe-path.js';
import type { ProgressEvent } from './progress.js';
import type { RoundContext, ServerSpec } from './round.js';
import { measureRounds } from './rounds.js';

export type { ProgressEvent } from './progress.js';

/** What a caller adds to the settings of a measurement (the CLI, the Action, compare()). */
export interface MeasureRuntime {
  /** Aborts the measurement: every process is stopped, every worktree and temp dir removed. */
  signal?: AbortSignal;
  /** Called with each step (checkouts, installs, rounds, scenarios). */
  onProgress?: (event: ProgressEvent) => void;
  /** Environment the commands start from (default process.env; tokens are always removed). */
  env?: NodeJS.ProcessEnv;
  /** Extra variables for the servers (e.g. HOTPATH_V8_PROFILER_PATH). */
  extraEnv?: Record<string, string>;
  /** Commits the caller already resolved (the Action: the PR's base and head). */
  refs?: Partial<Record<Side, { ref?: string; sha?: string }>>;
  /** Directory that relative settings (cwd) resolve against (default process.cwd()). */
  baseDir?: string;
  /**
   * Give the commands only an allowlist of the environment plus `passEnv` (the Action, where
   * the job may hold secrets). Otherwise they get the environment minus tokens and secrets.
   */
  allowlistEnv?: boolean;
  /** Which shard of a matrix this is (default 1/1). */
  shard?: ShardId;
  /** Warnings the shard carries (e.g. the profiler could not be installed). */
  warnings?: string[];
  /**
   * With `rounds: auto`, what ends the rounds: `verdict` (default) stops once the outcome is
   * clear; `budget` measures until `maxTime` or `maxRounds`, without looking, for a measurement
   * whose precision matters more than a quick answer (a drift point); a function is a question of
   * the caller's own asked at each look in place of the outcome (a bisect step's side).
   */
  autoRounds?: 'verdict' | 'budget' | StopQuestion;
}

/**
 * The measure stage: checkouts (git worktrees for refs, or two start commands in one tree),
 * install and build, interleaved rounds B H B H … Returns the Shard: raw rounds, what each side
 * ran, the settings and the machine that measured; no statistics. Leaves no process, worktree or
 * temp dir behind, on success, error or abort.
 */
export async function measure(given: Settings, runtime: MeasureRuntime = {}): Promise<Shard> {
  const cwd = resolve(runtime.baseDir ?? process.cwd(), given.cwd);
  const settings = withGrpcMessages(given, cwd);
  const env = runtime.allowlistEnv
    ? allowlistedEnvironment(runtime.env ?? process.env, settings.passEnv)
    : (runtime.env ?? process.env);
  const envWarnings = passEnvWarnings(settings.passEnv ?? [], runtime.env ?? process.env);
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    throwIfAborted(runtime.signal);
    const { specs, sides } =
      settings.baseStart !== undefined || settings.headStart !== undefined
        ? await twoCommands(settings, cwd)
        : await twoCheckouts(settings, cwd, { runtime, env, cleanups });
    const log = (message: string) => runtime.onProgress?.({ phase: 'note', message });
    for (const warning of envWarnings) log(`warning: ${warning}`);
    // Placed for the rounds only: installs and builds before them keep every CPU.
    const placed = placeProcesses(settings.placement);
    cleanups.unshift(() => placed.restore());
    log(
      placed.placement
        ? `CPU placement: servers on ${formatCpuList(placed.placement.server)}, load generator on ${formatCpuList(placed.placement.load)}`
        : `CPU placement: none (${placed.reason})`,
    );
    const context: RoundContext = {
      probePath: probePath(),
      env,
      extraEnv: runtime.extraEnv,
      log,
      onProgress: runtime.onProgress,
      signal: runtime.signal,
      serverPrefix: placed.serverPrefix,
      placed,
    };
    const {
      settings: levelled,
      levels,
      rates,
    } = await chooseLoadLevels(specs.base, settings, context, specs.head);
    const measurements = await measureRounds(
      { base: specs.base, head: specs.head, settings: levelled, until: runtime.autoRounds ?? 'verdict' },
      context,
    );
    return {
      shard: runtime.shard ?? { index: 1, total: 1 },
      sides,
      settings: levelled,
      ...(levels.length > 0 ? { loadLevels: levels } : {}),
      ...(rates.length > 0 ? { rateLevels: rates } : {}),
      ...(placed.placement ? { placement: placed.placement } : {}),
      measurements,
      machine: thisMachine(runtime.env ?? process.env),
      warnings: [...(runtime.warnings ?? []), ...envWarnings],
    };
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

/** The two sides' servers and what they ran. */
interface Sides {
  specs: Record<Side, ServerSpec>;
  sides: Record<Side, SideInfo>;
}

/** baseStart and headStart: two commands in one tree, no checkout. */
async function twoCommands(settings: Settings, cwd: string): Promise<Sides> {
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
  return {
    specs: {
      base: { side: 'base', command: settings.baseStart, cwd, root },
      head: { side: 'head', command: settings.headStart, cwd, root },
    },
    sides: { base: { command: settings.baseStart, cwd }, head: { command: settings.headStart, cwd } },
  };
}

/** `start` on two git refs: each side a worktree (head may be the working tree), installed and built. */
async function twoCheckouts(
  settings: Settings,
  cwd: string,
  context: { runtime: MeasureRuntime; env: NodeJS.ProcessEnv; cleanups: (() => Promise<void> | void)[] },
): Promise<Sides> {
  const { runtime, env, cleanups } = context;
  if (!settings.start)
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      'missing "start" (the command that starts your server), or "baseStart" and "headStart"',
    );
  const start = settings.start;
  const root = await gitRoot(cwd);
  const log = (message: string) => runtime.onProgress?.({ phase: 'prepare', message });
  const wanted: Record<Side, { ref?: string; sha?: string }> = {
    base: runtime.refs?.base ?? { ref: settings.base },
    head: runtime.refs?.head ?? { ref: settings.head },
  };
  if (!wanted.base.sha)
    wanted.base.sha = wanted.base.ref ? await resolveCommit(root, wanted.base.ref) : await defaultBase(root);
  if (!wanted.head.sha && wanted.head.ref) wanted.head.sha = await resolveCommit(root, wanted.head.ref);
  const temp = mkdtempSync(join(tmpdir(), 'hotpath-worktrees-'));
  cleanups.push(() => rmSync(temp, { recursive: true, force: true }));
  const specs = {} as Record<Side, ServerSpec>;
  const sides = {} as Record<Side, SideInfo>;
  for (const side of ['base', 'head'] as const) {
    throwIfAborted(runtime.signal);
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
    await prepareCheckout(side, steps, env, log, runtime.signal, settings.passEnv);
    specs[side] = { side, command: start, cwd: appDir, root: tree, workingTree: !sha };
    sides[side] = {
      command: start,
      cwd: appDir,
      ref: wanted[side].ref ?? (sha ? undefined : 'working tree'),
      sha,
    };
  }
  return { specs, sides };
}
