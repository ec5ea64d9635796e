// A setup file of the test files of the packages whose tests measure (compare, the Action, the
// examples, overload-guard): each file holds a CPU of its own while it runs, machine-wide
// (scripts/cpu-lease.mjs), and pins the vitest worker that runs it — and so every process it
// starts (servers, load generators, hotpath itself) — to that CPU. So these packages run side by
// side (scripts/test.mjs) and still no two files share a CPU: on a 2-CPU runner, two files at a
// time, whichever package they belong to. Unpinned, hotpath's placement put two files' servers
// on CPU 0 and both load generators on CPU 1, so each file's servers ran at half speed whenever
// the other's were loaded (one capacity search read 3 552 req/s and the next round 7 137). A file
// that needs every CPU (placement itself, a harness pinning its own processes) sets
// `// @hotpath-test every-cpu` in its first lines: it waits for every CPU and runs alone (in
// `pnpm test`, in a step of its own before the rest: scripts/vitest-every-cpu.mjs).
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { leaseCpus, releaseCpus } from './cpu-lease.mjs';
import { allowedCpus } from './cpus.mjs';
import { needsEveryCpu } from './vitest-every-cpu.mjs';

// A file may wait for the longest file beside it (some 2 minutes) before it starts.
const WAIT_MS = 20 * 60_000;

/** @type {{ file?: string, cpus: number[], asked: number, from: number, ticks?: { busy: number, all: number } } | undefined} */
let held;

/**
 * The leased CPUs' time so far (/proc/stat, in clock ticks): busy (every state but idle and
 * iowait) and all. Over a lease, busy / all is how much of its CPUs the file used: a file that
 * holds a CPU it mostly waits on shows low.
 * @param {number[]} cpus
 */
function cpuTicks(cpus) {
  let text;
  try {
    text = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  let busy = 0;
  let all = 0;
  for (const cpu of cpus) {
    const line = new RegExp(`^cpu${cpu} (.+)$`, 'm').exec(text)?.[1];
    if (!line) return undefined;
    const fields = line.trim().split(/\s+/).map(Number);
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
    busy += total - (fields[3] ?? 0) - (fields[4] ?? 0);
    all += total;
  }
  return { busy, all };
}

beforeAll(async (suite) => {
  if (process.platform !== 'linux') return;
  const cpus = allowedCpus();
  if (cpus.length < 2) return;
  const file = suite.file?.filepath ?? suite.filepath;
  const every = Boolean(file && needsEveryCpu(file));
  const asked = Date.now();
  const leased = await leaseCpus(cpus, { every });
  spawnSync('taskset', ['-a', '-p', '-c', leased.join(','), String(process.pid)], { stdio: 'ignore' });
  held = { file, pid: process.pid, cpus: leased, asked, from: Date.now(), ticks: cpuTicks(leased) };
}, WAIT_MS);

afterAll(() => {
  const to = Date.now();
  const ticks = held && cpuTicks(held.cpus);
  const busy =
    held?.ticks && ticks && ticks.all > held.ticks.all
      ? Math.round((1000 * (ticks.busy - held.ticks.busy)) / (ticks.all - held.ticks.all)) / 1000
      : undefined;
  releaseCpus();
  // when the file held which CPUs: `pnpm test`'s slowest-files list (scripts/test.mjs) reads a
  // file's time as the time it held them, and checks that no two files held one at once
  if (held?.file)
    appendFileSync(
      join(process.cwd(), '.vitest-cpu-leases.jsonl'),
      `${JSON.stringify({ ...held, ticks: undefined, to, busy })}\n`,
    );
  held = undefined;
});
