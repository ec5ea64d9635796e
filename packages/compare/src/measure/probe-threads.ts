// The CPU time of the runtime's own threads in a server process, read by the probe (Linux only):
// V8's and Node's threads that exist before any of the server's code runs (V8's platform workers,
// which compile optimised code and help the garbage collector; Node's task scheduler and signal
// threads) and the threads hotpath's own profilers start (V8's CPU profiler thread). CPU time on
// them is not the server's parallel work: short windows right after a warm-up spend 30–45 % of a
// plain single-threaded server's CPU there, compiling. Threads the server starts later (libuv's
// pool, worker threads) are what parallel work is made of, and are not counted here.
import { readdirSync, readFileSync } from 'node:fs';

const TASKS = '/proc/self/task';

/** The ids of this process's threads; empty where /proc is not there. */
export function listThreads(): number[] {
  try {
    return readdirSync(TASKS).map(Number).filter(Number.isSafeInteger);
  } catch {
    return [];
  }
}

/** Threads that exist when the probe loads, before the server's code: the runtime's own. */
export function startupThreads(): number[] {
  return listThreads().filter((tid) => tid !== process.pid);
}

/** CPU µs of each of `tids` (schedstat: nanoseconds on the CPU); threads gone or unreadable are left out. */
export function threadsCpu(tids: readonly number[]): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const tid of tids) {
    try {
      const ns = Number(readFileSync(`${TASKS}/${tid}/schedstat`, 'latin1').split(' ')[0]);
      if (Number.isFinite(ns)) cpu.set(tid, ns / 1000);
    } catch {
      // the thread ended, or no schedstat
    }
  }
  return cpu;
}

/** CPU µs the threads spent between two readings (threads in both only). */
export function cpuBetween(start: Map<number, number>, end: Map<number, number>): number {
  let micros = 0;
  for (const [tid, at] of end) {
    const from = start.get(tid);
    if (from !== undefined && at >= from) micros += at - from;
  }
  return micros;
}
