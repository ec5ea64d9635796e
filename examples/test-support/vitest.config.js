import { defineConfig } from 'vitest/config';
import { slowestFirst } from '../../scripts/vitest-projects.mjs';

export default defineConfig({
  test: {
    include: ['test/**/*.test.js'],
    testTimeout: 180_000,
    // Each test measures a real comparison, with margins of 2× and more (a ratio of throughputs,
    // a share of samples, KiBs retained): two files at a time on a 2-CPU runner, as compare's and
    // the Action's measured files run (scripts/vitest-projects.mjs), each on a CPU of its own
    // (scripts/vitest-pin.mjs). The stories are a file each, so that the longest (restify's
    // overload, two capacity searches at some 130 req/s) is not followed by another in its file.
    maxWorkers: 2,
    setupFiles: ['../../scripts/vitest-pin.mjs'],
    // longest first: restify's overload beside the other four
    ...slowestFirst(['restify-etag-overload', 'express-auth-audit', 'express-auth', 'nodecached']),
    minWorkers: 1,
    reporters: [
      'default',
      ['json', { outputFile: '.vitest-result.json' }],
      '../../scripts/vitest-failures.mjs',
    ],
  },
});
