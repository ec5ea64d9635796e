// The runtime of every mode that runs the repository's code (measure, all, drift-measure, drift):
// the profiler's install, the allowlisted environment for the servers, workflow commands stopped
// while their output reaches the log. Written once for the pull-request and the drift modes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MeasureRuntime, Settings } from '@hotpath/compare';
import { logSafe, withCommandsStopped } from './log.js';
import { installV8Profiler } from './v8-profiler.js';

const log = (line: string) => process.stdout.write(`${line}\n`);

/** What a measuring run gets from the Action: everything but the commits compared. */
export type CodeRuntime = Required<
  Pick<MeasureRuntime, 'baseDir' | 'allowlistEnv' | 'extraEnv' | 'signal' | 'warnings' | 'onProgress'>
>;

/**
 * Runs `run` with the runtime the repository's servers get. `heading` is the log line said before
 * workflow commands stop (hotpath's own text).
 */
export async function withCodeRuntime<T>(
  workspace: string,
  settings: Settings,
  heading: string,
  signal: AbortSignal,
  run: (runtime: CodeRuntime) => Promise<T>,
): Promise<T> {
  // Not below RUNNER_TEMP: the profiler's path is handed to the servers, and RUNNER_TEMP holds
  // the runner's command files (the allowlist does not pass it either).
  const work = mkdtempSync(join(tmpdir(), 'hotpath-'));
  try {
    const extraEnv: Record<string, string> = {};
    const warnings: string[] = [];
    if (settings.profiler === 'cpuprofile') {
      const path = await installV8Profiler(join(work, 'v8-profiler'), process.env, warnings, signal);
      if (path) extraEnv.HOTPATH_V8_PROFILER_PATH = path;
    }
    log(heading);
    return await withCommandsStopped(log, () =>
      run({
        baseDir: workspace,
        allowlistEnv: true,
        extraEnv,
        signal,
        warnings,
        // One line per step and measured window; the per-second ticks are for live displays.
        onProgress: (e) => {
          if (e.phase !== 'tick') log(logSafe(e.message));
        },
      }),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
