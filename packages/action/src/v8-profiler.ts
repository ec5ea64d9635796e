import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { HotpathCompareError } from '@hotpath/compare';
import { allowlistedEnvironment, runCommand } from '@hotpath/compare/internal';

/** The exact v8-profiler-next the Action installs at run time (a native addon, built for the job's Node). */
export const V8_PROFILER_VERSION = '1.10.0';

/**
 * Installs v8-profiler-next for the Node on PATH (the one the workflow set up) into a private
 * prefix, since the bundle cannot carry a native addon. Returns its path, or undefined (then
 * the probe falls back to node:inspector and the report says so).
 */
export async function installV8Profiler(
  dir: string,
  env: NodeJS.ProcessEnv,
  warnings: string[],
  signal: AbortSignal,
): Promise<string | undefined> {
  if (env.HOTPATH_V8_PROFILER_INSTALL === 'false') return undefined;
  mkdirSync(dir, { recursive: true });
  const { exit, output } = await runCommand(
    `npm install --no-save --no-package-lock --no-audit --no-fund --prefix . v8-profiler-next@${V8_PROFILER_VERSION}`,
    { cwd: dir, env: allowlistedEnvironment(env), timeoutMs: 240_000, signal },
  );
  // A cancelled job: runCommand has stopped npm and everything it started.
  if (signal.aborted)
    throw new HotpathCompareError(
      'HP_COMPARE_ABORTED',
      `installing v8-profiler-next was aborted (${String(signal.reason?.message ?? signal.reason)})`,
    );
  if (exit.code !== 0) {
    warnings.push(
      `v8-profiler-next ${V8_PROFILER_VERSION} could not be installed for this Node (${output.last(1)[0] ?? `exit ${exit.code}`}); profiled with node:inspector instead`,
    );
    return undefined;
  }
  return join(dir, 'node_modules', 'v8-profiler-next');
}
