import { createReadStream, createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { mergeProfiles, type Profile, parseCpuProfile, parseTickLog } from '@hotpath/tick-parser';

export type { Profile };

/** Reads the `.cpuprofile` files the probes wrote and merges them (cluster: one per process). */
export function readCpuProfiles(paths: readonly string[]): { profile?: Profile; warnings: string[] } {
  const profiles: Profile[] = [];
  const warnings: string[] = [];
  for (const path of paths) {
    try {
      profiles.push(parseCpuProfile(readFileSync(path, 'utf8')));
    } catch (err) {
      warnings.push(`could not read ${path}: ${(err as Error).message}`);
    }
  }
  if (profiles.length === 0) return { warnings };
  return { profile: merge(profiles), warnings };
}

/** One profile of several (cluster processes of one window). */
function merge(profiles: readonly Profile[]): Profile | undefined {
  if (profiles.length === 0) return undefined;
  return profiles.length === 1 ? profiles[0] : mergeProfiles(profiles);
}

/**
 * Keeps only the measured window of a `--prof` log: the probe compiles a marker function
 * (`hotpath_window_start_<pid>_<window>_` / `..._stop_..._`) at each end of the window, which V8 logs
 * as code-creation lines; ticks before the start marker and after the stop marker are dropped.
 * Returns whether both markers were found.
 */
export async function cutProfLogToWindow(
  input: string,
  output: string,
  pid: number,
  window = 1,
): Promise<boolean> {
  const startMarker = `hotpath_window_start_${pid}_${window}_`;
  const stopMarker = `hotpath_window_stop_${pid}_${window}_`;
  const lines = createInterface({ input: createReadStream(input), crlfDelay: Number.POSITIVE_INFINITY });
  const out = createWriteStream(output);
  let state: 'before' | 'inside' | 'after' = 'before';
  let sawStart = false;
  let sawStop = false;
  for await (const line of lines) {
    if (line.startsWith('tick,')) {
      if (state !== 'inside') continue;
    } else if (line.startsWith('code-creation,')) {
      if (state === 'before' && line.includes(startMarker)) {
        state = 'inside';
        sawStart = true;
      } else if (state === 'inside' && line.includes(stopMarker)) {
        state = 'after';
        sawStop = true;
      }
    }
    if (!out.write(`${line}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
  return sawStart && sawStop;
}

/** The V8 logs of one `--prof` run, by pid (`isolate-0x…-<pid>-v8.log`). */
export function findProfLogs(dir: string): Map<number, string> {
  const logs = new Map<number, string>();
  for (const name of readdirSync(dir)) {
    const match = /^isolate-0x[0-9a-f]+-(\d+)-(?:\d+-)?v8\.log$/.exec(name);
    if (match) logs.set(Number(match[1]), join(dir, name));
  }
  return logs;
}

/** Parses the windowed `--prof` logs of the given server pids with tick-parser. */
export async function readProfLogs(
  dir: string,
  pids: readonly number[],
  window = 1,
): Promise<{ profile?: Profile; warnings: string[] }> {
  const warnings: string[] = [];
  const logs = findProfLogs(dir);
  const profiles: Profile[] = [];
  for (const pid of pids) {
    const log = logs.get(pid);
    if (!log) {
      warnings.push(`no --prof log for server process ${pid}`);
      continue;
    }
    const windowed = `${log}.window-${window}.log`;
    const complete = await cutProfLogToWindow(log, windowed, pid, window);
    if (!complete) warnings.push(`--prof log of ${pid}: window markers missing, kept the whole log`);
    try {
      profiles.push(await parseTickLog(complete ? windowed : log));
    } catch (err) {
      warnings.push(`could not parse ${log}: ${(err as Error).message}`);
    }
  }
  return { profile: merge(profiles), warnings };
}
