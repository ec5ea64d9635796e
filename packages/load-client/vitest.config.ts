import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The json file feeds the workspace-wide "N passed, N failed" line (scripts/test.mjs).
    reporters: [
      'default',
      ['json', { outputFile: '.vitest-result.json' }],
      '../../scripts/vitest-failures.mjs',
    ],
  },
});
