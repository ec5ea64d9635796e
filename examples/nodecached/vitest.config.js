import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.js'],
    testTimeout: 180_000,
    reporters: ['default', ['json', { outputFile: '.vitest-result.json' }]],
  },
});
