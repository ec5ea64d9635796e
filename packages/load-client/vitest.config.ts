import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A worker per CPU (vitest leaves one free: one worker on a 2-CPU runner). These files time
    // nothing, and this package is the longest of `pnpm test`'s first phase: with one worker it
    // ran alone for its last 40 s with a CPU idle (scripts/test.mjs).
    maxWorkers: availableParallelism(),
    minWorkers: 1,
    // The json file feeds the workspace-wide "N passed, N failed" line (scripts/test.mjs).
    reporters: [
      'default',
      ['json', { outputFile: '.vitest-result.json' }],
      '../../scripts/vitest-failures.mjs',
    ],
  },
});
