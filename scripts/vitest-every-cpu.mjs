// The test files that need every CPU (`// @hotpath-test every-cpu` in their first lines: placement
// itself, a harness that pins its own processes) run in a step of their own, before the other
// measured files (scripts/test.mjs). Run among them, such a file waits with one CPU held until a
// long file frees the other: in one CI run compare's placement test held CPU 0 for 45 s before it
// could start, and overload-guard's load test 9 s. `HOTPATH_TEST_EVERY_CPU` tells a package's
// vitest which part of that it is: `only` (the marked files, named on the command line; results
// in files of their own) or `apart` (every file but the marked ones). Unset, a package runs all
// its files, as `pnpm --filter <package> test` does; a package with marked files wires
// `everyCpuApart()` into its exclude and `resultFiles` into its reporters.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The mark, in a test file's first 2 000 characters. */
export const EVERY_CPU = '@hotpath-test every-cpu';

const step = process.env.HOTPATH_TEST_EVERY_CPU;

/** Whether a test file carries the mark. */
export function needsEveryCpu(file) {
  return readFileSync(file, 'utf8').slice(0, 2000).includes(EVERY_CPU);
}

/** The marked test files of the package at `dir`, as `test/<name>`. */
export function everyCpuFiles(dir = process.cwd()) {
  const tests = join(dir, 'test');
  if (!existsSync(tests)) return [];
  return readdirSync(tests)
    .filter((name) => /\.test\.[cm]?[jt]s$/.test(name) && needsEveryCpu(join(tests, name)))
    .map((name) => `test/${name}`);
}

/** For a vitest config's `exclude`: the marked files when they ran in their own step. */
export function everyCpuApart(dir = process.cwd()) {
  return step === 'apart' ? everyCpuFiles(dir) : [];
}

/** The results files' suffix: the marked files' own step writes beside the rest's. */
const suffix = step === 'only' ? '-every-cpu' : '';

/** The json report and the failures file (scripts/vitest-failures.mjs) of this run. */
export const resultFiles = {
  json: `.vitest-result${suffix}.json`,
  failures: `.vitest-failures${suffix}.json`,
};
