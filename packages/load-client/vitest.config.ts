import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// The files whose assertions count what a schedule sent in a time or how long a run took (the
// open model's rate × duration, a drain's end, a stall seen from the intended send time, TLS
// reconnects in a window): they run after the rest, one at a time in one process, so no other
// test file of this package takes CPU from their client or their server. Beside another file the
// open model's "rate × duration" once read 42 requests of 50 (connect-first, in a CI rehearsal).
// The rest (parsers, the CLIs' flags and messages, hostile peers, merges) run a file per CPU:
// alone, one after another, this package took some 100 s and was the last of `pnpm test`'s first
// phase.
const TIMED = ['connect-first', 'drain', 'http2', 'run-http', 'tls', 'workers'].map(
  (name) => `test/${name}.test.ts`,
);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: availableParallelism(),
    minWorkers: 1,
    // The json file feeds the workspace-wide "N passed, N failed" line (scripts/test.mjs).
    reporters: [
      'default',
      ['json', { outputFile: '.vitest-result.json' }],
      '../../scripts/vitest-failures.mjs',
    ],
    projects: [
      {
        extends: true,
        test: {
          name: 'side by side',
          include: ['test/**/*.test.ts'],
          exclude: TIMED,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'one at a time',
          include: TIMED,
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
