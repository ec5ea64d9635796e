import { mergeDownstream } from '../downstream-summary.js';
import type { MonitorSummary, Profile, RoundResult, ScenarioRound, Side } from '../model.js';
import { readHeapProfiles } from './allocation-profiles.js';
import { relativeLocation, withProbeFramesMarked, withRelativeLocations } from './locations.js';
import { type LoadMark, otherLoadSince } from './machine-load.js';
import { readMonitorFile } from './monitor-summary.js';
import type { ProbeReport } from './probe-control.js';
import { readCpuProfiles, readProfLogs } from './profiles.js';
import type { RoundRun } from './round-server.js';
import type { MeasuredWindow } from './round-windows.js';

// What a round's server left behind once it stopped (see round.ts): per scenario the probe's
// reports and monitor data, the CPU profile, and how busy the rest of the machine was.

/** The processes seen across a round's windows. */
interface SeenProcesses {
  pids: Set<number>;
  /** The Node.js version of the first server process that reported one. */
  serverNode?: string;
}

/**
 * Turns the round's measured windows into its scenario results, in window order; what could not
 * be read becomes a warning.
 */
export async function readScenarioRounds(
  run: RoundRun,
  windows: readonly MeasuredWindow[],
  warnings: string[],
): Promise<{ scenarios: ScenarioRound[]; pids: number[]; serverNode?: string }> {
  const scenarios: ScenarioRound[] = [];
  const seen: SeenProcesses = { pids: new Set() };
  for (const [index, window] of windows.entries()) {
    const { scenario, load, reports, marks, capacity, slices, settleRequests } = window;
    const monitors = readProbeReports(run.spec.side, reports, seen, warnings).map((m) =>
      m.downstream
        ? {
            ...m,
            downstream: mergeDownstream([m.downstream], (file) => relativeLocation(file, run.spec.root)),
          }
        : m,
    );
    const profile = await readProfile(run, reports, index, warnings);
    const otherLoad = readMachineLoad(marks, monitors);
    const allocations = readAllocations(run, reports, 'heapprofile', warnings);
    const survivors = readSurvivors(run, window, warnings);
    scenarios.push({
      scenario: scenario.name,
      load,
      profile:
        profile &&
        withRelativeLocations(withProbeFramesMarked(profile, run.context.probePath), run.spec.root),
      ...(allocations ? { allocations } : {}),
      ...(survivors ? { survivors } : {}),
      monitors,
      profilers: [...new Set(reports.map((r) => r.profiler))],
      ...(otherLoad !== undefined ? { otherLoad } : {}),
      ...(capacity ? { capacity } : {}),
      ...(slices ? { sliceSeconds: Math.round((run.settings.duration / slices) * 1e6) / 1e6 } : {}),
      ...(settleRequests ? { settleRequests } : {}),
    });
  }
  return { scenarios, pids: [...seen.pids], serverNode: seen.serverNode };
}

/** The monitor data of each process; its pid, Node.js version, errors and notes on the way. */
function readProbeReports(
  side: Side,
  reports: readonly ProbeReport[],
  seen: SeenProcesses,
  warnings: string[],
): MonitorSummary[] {
  const monitors: MonitorSummary[] = [];
  for (const report of reports) {
    seen.pids.add(report.pid);
    seen.serverNode ??= report.node || undefined;
    if (report.error) warnings.push(`${side} process ${report.pid}: ${report.error}`);
    if (report.note) warnings.push(`${side} process ${report.pid}: ${report.note}`);
    if (report.files.monitor) {
      try {
        monitors.push(readMonitorFile(report.files.monitor));
      } catch (err) {
        warnings.push(`${side}: unreadable monitor data: ${(err as Error).message}`);
      }
    }
  }
  return monitors;
}

/** The window's CPU profile: the probe's .cpuprofile files, or the --prof logs cut to window `index`. */
async function readProfile(
  run: RoundRun,
  reports: readonly ProbeReport[],
  index: number,
  warnings: string[],
): Promise<Profile | undefined> {
  if (run.settings.profiler === 'cpuprofile') {
    const read = readCpuProfiles(reports.flatMap((r) => (r.files.cpuprofile ? [r.files.cpuprofile] : [])));
    warnings.push(...read.warnings);
    return read.profile;
  }
  if (run.settings.profiler === 'prof') {
    const read = await readProfLogs(
      run.server.dir,
      reports.map((r) => r.pid),
      index + 1,
    );
    warnings.push(...read.warnings);
    return read.profile;
  }
  return undefined;
}

/**
 * The window's allocation profile (`heapprofile`) or the survivors profile after it (`survivors`):
 * every process's file, merged; none if one is missing.
 */
function readAllocations(
  run: RoundRun,
  reports: readonly ProbeReport[],
  kind: 'heapprofile' | 'survivors',
  warnings: string[],
): ScenarioRound['allocations'] {
  const paths = reports.flatMap((r) => {
    const file = r.files[kind];
    return file ? [file] : [];
  });
  if (paths.length === 0 || paths.length < reports.length) return undefined;
  const read = readHeapProfiles(paths, { root: run.spec.root, probePath: run.context.probePath });
  warnings.push(...read.warnings);
  return read.allocations;
}

/**
 * What the load after the window left alive, per request of it (see survivorsPass): none without
 * that load or without a survivors file per process.
 */
function readSurvivors(
  run: RoundRun,
  window: MeasuredWindow,
  warnings: string[],
): ScenarioRound['survivors'] {
  // held as `warmupRequests`, the field's name from when the warm-up ran the profile
  const warmupRequests = window.survivorsRequests ?? 0;
  if (warmupRequests <= 0) return undefined;
  const profile = readAllocations(run, window.reports, 'survivors', warnings);
  return profile ? { warmupRequests, profile } : undefined;
}

/** CPU time of the rest of the machine during the window (undefined without monitor data). */
function readMachineLoad(
  marks: [LoadMark, LoadMark],
  monitors: readonly MonitorSummary[],
): number | undefined {
  if (monitors.length === 0) return undefined;
  return otherLoadSince(
    marks[0],
    marks[1],
    monitors.reduce((sum, m) => sum + m.cpuMicros, 0),
  );
}

/**
 * Rounds whose windows were measured in slices beside each other (see round-slices.ts), read
 * together: the machine's other load leaves out every server of the round, not only the side's
 * own. (Each probe reads its event loop over its side's own slices: see monitor-summary.ts.)
 */
export function withSlicedWindows(
  results: RoundResult[],
  windows: readonly MeasuredWindow[][],
): RoundResult[] {
  return results.map((result, side) => ({
    ...result,
    scenarios: result.scenarios.map((scenario, index) => {
      const window = windows[side]?.[index];
      if (!window?.slices) return scenario;
      const allMonitors = results.flatMap((r) => r.scenarios[index]?.monitors ?? []);
      const otherLoad = readMachineLoad(window.marks, allMonitors);
      return {
        ...scenario,
        ...(otherLoad !== undefined ? { otherLoad } : {}),
      };
    }),
  }));
}
