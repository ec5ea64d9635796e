// `pnpm test`: every package's tests through turbo (which builds first), then one closing
// line for the whole workspace: "tests: N passed, N failed". A failing package does not stop
// the others (turbo --continue), so the closing line counts every package's tests.
//
// `--phase libs` runs only the first phase below and `--phase rest` only the second; the closing
// line of `--phase rest` also counts the results the libs phase left. .ci/run runs the libs phase
// beside its install lanes (with --built: the packages are built, so pnpm runs the test
// scripts without turbo, which would restore build outputs other checks are reading), then
// `pnpm test --phase rest`.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const firstLine = (text = '') => text.split('\n')[0].slice(0, 300);
const root = new URL('..', import.meta.url).pathname;
const results = (dir) => join(root, dir, '.vitest-result.json');
// Failures outside tests (hooks, unhandled errors): scripts/vitest-failures.mjs writes them.
const outside = (dir) => join(root, dir, '.vitest-failures.json');
const hasTests = (dir) =>
  existsSync(join(root, dir, 'package.json')) &&
  JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).scripts?.test !== undefined;
const args = process.argv.slice(2);
const phaseAt = args.indexOf('--phase');
const phase = phaseAt === -1 ? 'all' : args[phaseAt + 1];
if (!['all', 'libs', 'rest'].includes(phase)) {
  console.error(
    `scripts/test.mjs: invalid --phase: expected libs or rest, got ${JSON.stringify(phase ?? '')}`,
  );
  process.exit(2);
}
const built = args.includes('--built');
const passThrough = args.filter(
  (a, i) => a !== '--built' && (phaseAt === -1 || (i !== phaseAt && i !== phaseAt + 1)),
);
const packageName = (dir) => JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).name;
// The examples are templates without tests of their own: examples/test-support holds theirs.
const packages = ['packages', 'examples'].flatMap((group) =>
  readdirSync(join(root, group), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && hasTests(join(group, entry.name)))
    .map((entry) => join(group, entry.name)),
);

// Two phases. First the libraries whose tests time nothing, side by side (each runs its own
// servers and clients on loopback; none asserts a duration or a rate): tick-parser,
// memcache-proto, load-client. Then, one package at a time, the rest: overload-guard (its tests
// read event-loop delay, which a busy neighbour moves), compare, the Action and the examples
// (real comparisons whose verdicts need the machine to themselves).
const SIDE_BY_SIDE = ['@hotpath/tick-parser', '@hotpath/memcache-proto', '@hotpath/load-client'];
const inPhase = (dir) => phase === 'all' || (phase === 'libs') === SIDE_BY_SIDE.includes(packageName(dir));
for (const dir of packages.filter(inPhase)) {
  rmSync(results(dir), { force: true });
  rmSync(outside(dir), { force: true });
}
const run = (command, args) => spawnSync(command, args, { cwd: root, stdio: 'inherit' });
const turboRun = (args) =>
  run('pnpm', ['exec', 'turbo', 'run', 'test', '--continue', ...args, ...passThrough]);
const notRun = { status: 0 };
const first =
  phase === 'rest'
    ? notRun
    : built
      ? run('pnpm', [
          ...SIDE_BY_SIDE.map((name) => `--filter=${name}`),
          '--parallel',
          '--no-bail',
          'run',
          'test',
          ...passThrough,
        ])
      : turboRun([`--concurrency=${SIDE_BY_SIDE.length}`, ...SIDE_BY_SIDE.map((name) => `--filter=${name}`)]);
const turbo =
  phase === 'libs'
    ? notRun
    : turboRun(['--concurrency=1', ...SIDE_BY_SIDE.map((name) => `--filter=!${name}`)]);

let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
const failures = [];
for (const dir of phase === 'libs' ? packages.filter(inPhase) : packages) {
  if (!existsSync(results(dir))) {
    missing.push(dir);
    continue;
  }
  const json = JSON.parse(readFileSync(results(dir), 'utf8'));
  passed += json.numPassedTests;
  failed += json.numFailedTests;
  skipped += json.numPendingTests + (json.numTodoTests ?? 0);
  for (const file of json.testResults ?? [])
    for (const test of file.assertionResults ?? [])
      if (test.status === 'failed')
        failures.push(
          `${dir}/${file.name.slice(file.name.indexOf('test/'))} › ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`,
        );
  if (existsSync(outside(dir)))
    for (const failure of JSON.parse(readFileSync(outside(dir), 'utf8')))
      failures.push(`${dir}/${failure.file} › ${failure.where}: ${failure.error}`);
}
if (missing.length)
  console.log(`no test results from: ${missing.join(', ')} (its build or its test run failed)`);
// The failing tests' names last, so that the tail of a long CI log says which one failed.
for (const line of failures) console.log(`failed: ${line}`);
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(first.status === 0 && turbo.status === 0 && failed === 0 && missing.length === 0 ? 0 : 1);
