import { readFileSync } from 'node:fs';

/** /proc/stat counts in USER_HZ, which Linux fixes at 100 per second for this file. */
const MICROS_PER_TICK = 10_000;

/**
 * CPU time the whole machine spent busy so far, µs (every core: user, nice, system, irq,
 * softirq and steal — the time a hypervisor gave to someone else counts as taken), from Linux's
 * /proc/stat; undefined elsewhere.
 */
export function machineBusyMicros(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0] ?? '';
    if (!line.startsWith('cpu ')) return undefined;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = [user, nice, system, irq, softirq, steal].reduce<number>((s, v) => s + (v ?? 0), 0);
    return Number.isFinite(busy) ? busy * MICROS_PER_TICK : undefined;
  } catch {
    return undefined;
  }
}

/** A mark at the start of a measured window, to tell later what else used the machine. */
export interface LoadMark {
  at: bigint;
  busy: number | undefined;
  self: NodeJS.CpuUsage;
}

export function markLoad(): LoadMark {
  return { at: process.hrtime.bigint(), busy: machineBusyMicros(), self: process.cpuUsage() };
}

/**
 * What other processes used during the window since `mark`, in cores: the machine's busy time
 * minus hotpath's own (the load generator) and the servers' (`serverMicros`, from the probes),
 * over the window's length. Undefined where /proc/stat is missing or the servers' time unknown.
 */
export function otherLoadSince(mark: LoadMark, end: LoadMark, serverMicros: number): number | undefined {
  if (mark.busy === undefined || end.busy === undefined || !Number.isFinite(serverMicros)) return undefined;
  const elapsed = Number(end.at - mark.at) / 1000;
  if (!(elapsed > 0)) return undefined;
  const self = end.self.user - mark.self.user + end.self.system - mark.self.system;
  const other = end.busy - mark.busy - self - serverMicros;
  return Math.max(0, other / elapsed);
}
