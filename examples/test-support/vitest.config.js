import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.js'],
    testTimeout: 180_000,
    // Each test measures a real comparison, with margins of 2× and more (a ratio of throughputs,
    // a share of samples, KiBs retained): two files at a time on a 2-CPU runner, as compare's and
    // the Action's measured files run (scripts/vitest-projects.mjs).
    maxWorkers: 2,
    minWorkers: 1,
    reporters: [
      'default',
      ['json', { outputFile: '.vitest-result.json' }],
      '../../scripts/vitest-failures.mjs',
    ],
  },
});
