import { defineConfig } from 'vitest/config';
import { sideBySideWorkers, slowestFirst, splitProjects } from '../../scripts/vitest-projects.mjs';

// Files that start no server under load and time nothing (the workflow linter, inputs, the
// outputs, a recorded shard through the three doors). The end-to-end runs of the Action start
// real servers under real load: after these, two files at a time (scripts/vitest-projects.mjs).
const SIDE_BY_SIDE = [
  'action-yml',
  'artifact-upload',
  'front-doors.e2e',
  'inputs-front-door',
  'lint-workflows',
  'log',
  'release-artifacts',
  'throughput-output',
  'v8-profiler-install',
];

// The longest measured files, longest first (the slowest-files list of `pnpm test`): they start
// first, so that none is left to run alone at the end.
const SLOWEST = [
  'action.e2e',
  'action-drift.e2e',
  'action-modes.e2e',
  'action-drift-split.e2e',
  'action-bisect.e2e',
];

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // The json file feeds the workspace-wide "N passed, N failed" line (scripts/test.mjs).
    reporters: [
      'default',
      ['json', { outputFile: '.vitest-result.json' }],
      '../../scripts/vitest-failures.mjs',
    ],
    ...sideBySideWorkers,
    ...slowestFirst(SLOWEST),
    projects: splitProjects(SIDE_BY_SIDE),
  },
});
