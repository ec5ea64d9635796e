import { configDefaults, defineConfig } from 'vitest/config';
import { everyCpuApart, resultFiles } from '../../scripts/vitest-every-cpu.mjs';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // the load test runs in a step of its own in `pnpm test` (scripts/vitest-every-cpu.mjs)
    exclude: [...configDefaults.exclude, ...everyCpuApart()],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // the load tests saturate a core on purpose; other files must not share the machine with them
    fileParallelism: false,
    // and each file holds a CPU machine-wide while it runs (the load test every CPU): the other
    // packages' measured files run beside this package's (scripts/vitest-pin.mjs)
    setupFiles: ['../../scripts/vitest-pin.mjs'],
    // The json file feeds the workspace-wide "N passed, N failed" line (scripts/test.mjs).
    reporters: ['default', ['json', { outputFile: resultFiles.json }], '../../scripts/vitest-failures.mjs'],
  },
});
