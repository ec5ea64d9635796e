// CPU placement: on a machine with spare cores, the servers run on one set of CPUs and the load
// generator (hotpath's own process, which also runs the statistics between rounds) on another,
// so neither steals the other's core mid-window and the scheduler cannot move a server onto the
// load generator's core. A server's threads (libuv's pool, workers, a cluster) still spread over
// every CPU of its set. Linux with util-linux's taskset only; elsewhere nothing is placed.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { MonitorSummary, Placement, RoundResult, Side } from '../model.js';

/** Parses a Linux CPU list ("0-3,6,8-9"); undefined when it is not one. */
export function parseCpuList(text: string): number[] | undefined {
  const cpus: number[] = [];
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return undefined;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from || to - from > 4096) return undefined;
    for (let c = from; c <= to; c++) cpus.push(c);
  }
  return cpus.length > 0 ? cpus : undefined;
}

/** A CPU list as taskset and people read it: "0-2,5". */
export function formatCpuList(cpus: readonly number[]): string {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The CPUs this process may run on (Linux), or undefined. */
export function allowedCpus(): number[] | undefined {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const line = /^Cpus_allowed_list:\s*(.+)$/m.exec(status);
    return line?.[1] ? parseCpuList(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The split: the load generator on the last allowed CPU, the servers on all the others. Pure. */
export function planPlacement(cpus: readonly number[] | undefined): Placement | undefined {
  if (!cpus || cpus.length < 2) return undefined;
  const sorted = [...cpus].sort((a, b) => a - b);
  return { server: sorted.slice(0, -1), load: sorted.slice(-1) };
}

/** util-linux's taskset answers. */
export function hasTaskset(): boolean {
  return spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;
}

/** Sets the CPUs of every thread of `pid`; false when taskset refused. */
function setAffinity(pid: number, cpus: readonly number[]): boolean {
  return (
    spawnSync('taskset', ['-a', '-p', '-c', formatCpuList(cpus), String(pid)], { stdio: 'ignore' }).status ===
    0
  );
}

/**
 * The share of a server's CPU time above which its parallel work — libuv's pool (async crypto,
 * zlib, fs), worker threads, a cluster's processes — is what it is made of, and one CPU would
 * serialise it. Measured in a round's windows, placed on one CPU: an Express server hashing with
 * async pbkdf2 did 90 % of its CPU off its event loop; the same server with pbkdf2Sync 5 %; a
 * server allocating 2 000 objects a request 11–12 % (V8's GC helper threads, which, like its
 * compiler's, now count as the runtime's and not the server's: see probe-threads.ts).
 */
export const PARALLEL_SHARE = 0.3;

/** One side's measured windows, each the monitors of every probed process of that side. */
export interface SideWindows {
  side: Side;
  windows: readonly (readonly MonitorSummary[])[];
}

/** A round's windows (one per scenario). */
export const roundWindows = (round: RoundResult): SideWindows => ({
  side: round.side,
  windows: round.scenarios.map((s) => s.monitors),
});

/**
 * The share of the CPU time of `windows` (every probed process) done beyond each window's busiest
 * event loop and beyond the runtime's own threads (V8's compiler and GC helpers, the profiler's
 * thread: where the probe could read them); undefined without per-thread CPU time.
 */
export function parallelShare(windows: SideWindows['windows']): number | undefined {
  let total = 0;
  let loops = 0;
  let runtime = 0;
  for (const monitors of windows) {
    let busiest = 0;
    for (const m of monitors) {
      if (!Number.isFinite(m.mainThreadCpuMicros) || !Number.isFinite(m.cpuMicros)) return undefined;
      total += m.cpuMicros;
      runtime += m.runtimeCpuMicros ?? 0;
      busiest = Math.max(busiest, m.mainThreadCpuMicros);
    }
    loops += busiest;
  }
  return total > 0 ? Math.max(0, total - loops - runtime) / total : undefined;
}

/**
 * Whether the servers, placed on a single CPU, should get every CPU: when a side's parallel work
 * was PARALLEL_SHARE or more of its CPU in `sides`' windows (the larger side's share is given).
 * With two or more CPUs for the servers, the work already runs in parallel and nothing changes.
 * Pure.
 */
export function widening(
  placement: Placement | undefined,
  sides: readonly SideWindows[],
): { side: Side; share: number } | undefined {
  if (!placement || placement.widened || placement.server.length !== 1) return undefined;
  let most: { side: Side; share: number } | undefined;
  for (const { side, windows } of sides) {
    const share = parallelShare(windows);
    if (share !== undefined && share >= PARALLEL_SHARE && (!most || share > most.share))
      most = { side, share };
  }
  return most;
}

/**
 * Gives the servers every CPU for `why` (see widening) and returns the progress note that says
 * so; `at` names where the share was read: round 1 (measured again) or the load-level search
 * (run again).
 */
export function widenServers(
  placed: Pick<PlacedRun, 'placement' | 'serverPrefix' | 'widen'>,
  why: { side: Side; share: number },
  at?: 'load-level',
): string {
  const from = formatCpuList(placed.placement?.server ?? []);
  placed.widen(at ? { ...why, at } : why);
  const where = at ? 'the load-level search' : 'round 1';
  const again = at ? 'the search runs again' : 'round 1 is measured again';
  return `CPU placement: ${why.side}'s threads and processes beyond its event loop did ${Math.round(why.share * 100)} % of its CPU in ${where}, which one CPU (${from}) would serialise; the servers now run on every CPU (${formatCpuList(placed.placement?.server ?? [])}) and ${again}`;
}

/** What a comparison runs with: the plan (or why there is none) and how to undo the pinning. */
export interface PlacedRun {
  placement?: Placement;
  /** Why nothing was placed (placement off, one CPU, no taskset). */
  reason?: string;
  /** The `taskset -c` prefix of a server's launch (empty when nothing is placed). */
  serverPrefix: readonly string[];
  /**
   * Gives the servers every CPU this process had (the load generator stays on its own), records
   * why in `placement.widened`, and returns the new launch prefix.
   */
  widen(why: { side: Side; share: number; at?: 'load-level' }): readonly string[];
  /** Puts this process back on the CPUs it had. */
  restore(): void;
}

/** Places this process (the load generator) on its CPU and returns how servers are launched. */
export function placeProcesses(mode: 'auto' | 'off'): PlacedRun {
  const none = (reason: string): PlacedRun => ({
    reason,
    serverPrefix: [],
    widen: () => [],
    restore: () => {},
  });
  if (mode === 'off') return none('placement: off');
  const cpus = allowedCpus();
  const plan = planPlacement(cpus);
  if (!plan) return none(cpus ? `${cpus.length} CPU: nothing to place` : 'not Linux: nothing placed');
  if (!hasTaskset()) return none('taskset (util-linux) not found: nothing placed');
  if (!setAffinity(process.pid, plan.load)) return none('taskset could not set this process’s CPUs');
  const all = cpus as number[];
  const placed: PlacedRun = {
    placement: plan,
    serverPrefix: ['taskset', '-c', formatCpuList(plan.server)],
    widen: (why) => {
      placed.placement = {
        ...plan,
        server: [...all].sort((a, b) => a - b),
        widened: { ...why, from: plan.server },
      };
      placed.serverPrefix = ['taskset', '-c', formatCpuList(all)];
      return placed.serverPrefix;
    },
    restore: () => {
      setAffinity(process.pid, all);
    },
  };
  return placed;
}
