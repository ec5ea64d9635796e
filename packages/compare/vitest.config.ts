import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // The end-to-end tests start real servers under real load: one file at a time, so they
    // do not disturb each other's measurements.
    fileParallelism: false,
    // The json file feeds the workspace-wide "N passed, N failed" line (scripts/test.mjs).
    reporters: [
      'default',
      ['json', { outputFile: '.vitest-result.json' }],
      '../../scripts/vitest-failures.mjs',
    ],
  },
});
