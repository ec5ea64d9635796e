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
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { leaseCpus, releaseCpus } from './cpu-lease.mjs';
import { allowedCpus } from './cpus.mjs';
import { needsEveryCpu } from './vitest-every-cpu.mjs';

// A file may wait for the longest file beside it (some 2 minutes) before it starts.
const WAIT_MS = 20 * 60_000;

/** @type {{ file?: string, cpus: number[], asked: number, from: number } | undefined} */
let held;

beforeAll(async (suite) => {
  if (process.platform !== 'linux') return;
  const cpus = allowedCpus();
  if (cpus.length < 2) return;
  const file = suite.file?.filepath ?? suite.filepath;
  const every = Boolean(file && needsEveryCpu(file));
  const asked = Date.now();
  const leased = await leaseCpus(cpus, { every });
  held = { file, pid: process.pid, cpus: leased, asked, from: Date.now() };
  spawnSync('taskset', ['-a', '-p', '-c', leased.join(','), String(process.pid)], { stdio: 'ignore' });
}, WAIT_MS);

afterAll(() => {
  const to = Date.now();
  releaseCpus();
  // when the file held which CPUs: `pnpm test`'s slowest-files list (scripts/test.mjs) reads a
  // file's time as the time it held them, and checks that no two files held one at once
  if (held?.file)
    appendFileSync(join(process.cwd(), '.vitest-cpu-leases.jsonl'), `${JSON.stringify({ ...held, to })}\n`);
  held = undefined;
});
