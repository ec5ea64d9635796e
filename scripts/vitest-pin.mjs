// A setup file of the measured test files (scripts/vitest-projects.mjs): pins the vitest worker
// that runs the file, and so every process it starts (servers, load generators, hotpath itself),
// to one CPU of its own — worker 1 on the first allowed CPU, worker 2 on the second. Two measured
// files run at once on a 2-CPU runner; unpinned, hotpath's placement put both files' servers on
// CPU 0 and both load generators on CPU 1, so each file's servers ran at half speed whenever the
// other's were loaded (one capacity search read 3 552 req/s and the next round 7 137). Pinned,
// a file shares its CPU with no other file's processes. A file that needs every CPU (placement
// itself) sets `// @hotpath-test every-cpu` in its first lines and is left unpinned.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { beforeAll } from 'vitest';
import { allowedCpus } from './cpus.mjs';

beforeAll((suite) => {
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: set by vitest in each worker
  const slot = Number(process.env.VITEST_POOL_ID);
  if (process.platform !== 'linux' || !(slot >= 1)) return;
  const file = suite.file?.filepath ?? suite.filepath;
  if (file && readFileSync(file, 'utf8').slice(0, 2000).includes('@hotpath-test every-cpu')) return;
  const cpus = allowedCpus();
  if (cpus.length < 2) return;
  const cpu = cpus[(slot - 1) % cpus.length];
  spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' });
});
