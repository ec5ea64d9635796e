import { readdirSync, readFileSync } from 'node:fs';
import { stillAlive } from '../../src/measure/process-table.js';

/**
 * Servers that hotpath started and that are running now: processes whose command line holds
 * `command` and whose environment holds `variable` (e.g. HOTPATH_PROBE_DIR=). Only running ones
 * can be found this way (a zombie's cmdline and environ are empty): call it while they run, keep
 * the pids, and after the stop ask `leftAlive(pids)`.
 */
export function serversRunning(command: string, variable: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return (
          readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(command) &&
          readFileSync(`/proc/${p}/environ`, 'utf8').includes(variable)
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Of `pids`, those of which anything is left (a zombie main thread with live threads counts). */
export const leftAlive = (pids: Iterable<number>): number[] => stillAlive([...new Set(pids)]);
