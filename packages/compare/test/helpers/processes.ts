import { readdirSync, readFileSync } from 'node:fs';
import { stillAlive } from '../../src/measure/process-table.js';

/**
 * Servers that hotpath started and that are running now: descendants of `ancestor` (the hotpath
 * process the test started) whose command line holds `command` and whose environment holds
 * `variable` (e.g. HOTPATH_PROBE_DIR=). Only running ones
 * can be found this way (a zombie's cmdline and environ are empty): call it while they run, keep
 * the pids, and after the stop ask `leftAlive(pids)`.
 */
export function serversRunning(command: string, variable: string, ancestor: number): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return (
          readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(command) &&
          readFileSync(`/proc/${p}/environ`, 'utf8').includes(variable) &&
          descendsFrom(Number(p), ancestor)
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * Whether `ancestor` is `pid`'s parent, grandparent, … — so a test finds only the servers its
 * own run started, never those of another test running beside it on the machine.
 */
function descendsFrom(pid: number, ancestor: number): boolean {
  let current = pid;
  for (let depth = 0; depth < 64 && current > 1; depth++) {
    const stat = readFileSync(`/proc/${current}/stat`, 'latin1');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (parent === ancestor) return true;
    current = parent;
  }
  return false;
}

/** Of `pids`, those of which anything is left (a zombie main thread with live threads counts). */
export const leftAlive = (pids: Iterable<number>): number[] => stillAlive([...new Set(pids)]);
