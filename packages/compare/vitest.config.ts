import { defineConfig } from 'vitest/config';
import { resultFiles } from '../../scripts/vitest-every-cpu.mjs';
import { sideBySideWorkers, slowestFirst, splitProjects } from '../../scripts/vitest-projects.mjs';

// Files that start no server under load and time nothing: pure functions, the CLI's help and
// refusals, files on disk, git, a child under a small heap. Every other file (real servers under
// real load, or a reading of time or CPU) runs after them, two at a time (scripts/vitest-projects.mjs).
const SIDE_BY_SIDE = [
  'bisect-html',
  'bisect-search',
  'capacity',
  'capacity-chart',
  'cli-help',
  'config-child',
  'downstream-resp',
  'downstream-summary',
  'drift-change-points',
  'drift-history',
  'drift-issue',
  'drift-point',
  'drift-step-outputs',
  'drift-store',
  'errors',
  'exports',
  'init-data',
  'init-links',
  'init-routes',
  'init-templates',
  'init-workflow-lint',
  'load-level',
  'locations',
  'markdown-safety',
  'merge-complexity',
  'open',
  'output-links',
  'pass-env',
  'printable',
  'probe-bundle',
  'progress',
  'report',
  'report-out',
  'reproduce-safety',
  'results-limits',
  'results-links',
  'results-reader.properties',
  'room-sizes',
  'sequential',
  'stack-draw',
  'settings',
  'settings-types',
  'statistics',
  'survivors',
  'terminal-escapes',
  'verdict',
];

// The longest measured files, longest first (the slowest-files list of `pnpm test`): they start
// first, so that none is left to run alone at the end.
const SLOWEST = [
  'capacity-slo',
  'cli',
  'bisect',
  'rate',
  'cli-front-door',
  'drift-cli',
  'placement',
  'memory',
  'engine',
  'auto-rounds',
];

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // The json file feeds the workspace-wide "N passed, N failed" line (scripts/test.mjs).
    reporters: ['default', ['json', { outputFile: resultFiles.json }], '../../scripts/vitest-failures.mjs'],
    ...sideBySideWorkers,
    ...slowestFirst(SLOWEST),
    projects: splitProjects(SIDE_BY_SIDE),
  },
});
