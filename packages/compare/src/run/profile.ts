// The run layer's `hotpath profile`: one side's server under load, profiled, written.
import { resolve } from 'node:path';
import { probePath } from '../measure/probe-path.js';
import type { ProgressEvent } from '../measure/progress.js';
import { measureOne } from '../measure/rounds.js';
import { profileReport } from '../report/profile.js';
import type { ProfileReport } from '../run-artifacts.js';
import { withGrpcMessages } from '../settings/grpc.js';
import type { Settings } from '../settings/schema.js';
import { writeClaimed } from './out-dir.js';
import { writeProfileReport } from './report-files.js';

export interface ProfileRunOptions {
  /** The server's command (default: the settings' start, or headStart). */
  start: string;
  baseDir?: string;
  /** Where the files go (default: the settings' `out`, from `baseDir`). */
  out?: string;
  env?: NodeJS.ProcessEnv;
  onProgress?: (event: ProgressEvent) => void;
  signal?: AbortSignal;
}

/** Profiles one server: rounds of load with the probe, the merged profile, profile.json and graphs. */
export async function runProfile(
  settings: Settings,
  options: ProfileRunOptions,
): Promise<{ profile: ProfileReport; dir: string; removed: string[] }> {
  const baseDir = options.baseDir ?? process.cwd();
  const onProgress = options.onProgress ?? (() => {});
  const cwd = resolve(baseDir, settings.cwd);
  const rounds = await measureOne(
    { side: 'head', command: options.start, cwd },
    withGrpcMessages(settings, cwd),
    {
      probePath: probePath(),
      env: options.env ?? process.env,
      log: (message) => onProgress({ phase: 'note', message }),
      onProgress,
      signal: options.signal,
    },
  );
  const profile = profileReport(rounds, settings);
  const { written: dir, removed } = writeClaimed(
    resolve(options.out ?? resolve(baseDir, settings.out)),
    (out) => writeProfileReport(out, profile),
  );
  return { profile, dir, removed };
}
