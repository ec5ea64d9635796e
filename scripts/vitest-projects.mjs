// Two vitest projects for a package whose tests are partly real servers under real load: the
// files listed as `parallel` (they start no server under load and time nothing) run side by
// side first; every other file runs after them. vitest's pool is shared by the projects, so
// `fileParallelism: false` below does not hold the measured files to one at a time: they run
// two at a time on a 2-CPU runner (a worker per CPU). Every file of both holds a CPU of its own
// while it runs, machine-wide, pinned to it with every process it starts (scripts/vitest-pin.mjs):
// so the packages' test runs go side by side (scripts/test.mjs) and no file's servers share a
// CPU with another file's. Truly one at a time would double their 370 s in compare.
// The listed files get a worker per CPU (vitest's default leaves one CPU free, which on a 2-CPU
// runner is one worker: no gain).
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { BaseSequencer } from 'vitest/node';
import { everyCpuApart } from './vitest-every-cpu.mjs';

/** Spread into the root `test` config: the worker count the listed files run with. */
export const sideBySideWorkers = { maxWorkers: availableParallelism(), minWorkers: 1 };

/** @param {string[]} parallel test file names without `test/` and `.test.ts` */
export function splitProjects(parallel) {
  const files = parallel.map((name) => `test/${name}.test.ts`);
  return [
    {
      extends: true,
      test: {
        name: 'side by side',
        include: files,
        setupFiles: [new URL('./vitest-pin.mjs', import.meta.url).pathname],
        sequence: { groupOrder: 0 },
      },
    },
    {
      extends: true,
      test: {
        name: 'one at a time',
        include: ['test/**/*.test.ts'],
        exclude: [...files, ...everyCpuApart()],
        fileParallelism: false,
        setupFiles: [new URL('./vitest-pin.mjs', import.meta.url).pathname],
        sequence: { groupOrder: 1 },
      },
    },
  ];
}

/**
 * Spread into the root `test` config: the measured files named in `slowest` (without `test/`
 * and `.test.*`) start first, in that order, then the rest as vitest orders them. On a fresh
 * clone vitest has no durations and starts the larger files first, which left the longest file
 * (capacity-slo, 120 s, a small file) to start last, beside nothing: a tail of one worker.
 * @param {string[]} slowest
 */
export function slowestFirst(slowest) {
  const rank = (spec) => {
    const name = basename(spec.moduleId).replace(/\.test\.[cm]?[jt]s$/, '');
    const at = slowest.indexOf(name);
    return at < 0 ? slowest.length : at;
  };
  return {
    sequence: {
      sequencer: class extends BaseSequencer {
        async sort(files) {
          const sorted = await super.sort(files);
          // Array#sort is stable: the unnamed keep vitest's order among themselves
          return sorted.sort((a, b) => rank(a) - rank(b));
        }
      },
    },
  };
}
