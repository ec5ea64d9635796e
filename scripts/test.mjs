// `pnpm test`: every package's tests through turbo (which builds first), then one closing
// line for the whole workspace: "tests: N passed, N failed". A failing package does not stop
// the others (turbo --continue), so the closing line counts every package's tests.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { everyCpuFiles } from './vitest-every-cpu.mjs';

const firstLine = (text = '') => text.split('\n')[0].slice(0, 300);
const root = new URL('..', import.meta.url).pathname;
// The json report of each package's run, and of its every-CPU files' own step (see below).
const results = (dir, suffix = '') => join(root, dir, `.vitest-result${suffix}.json`);
// Failures outside tests (hooks, unhandled errors): scripts/vitest-failures.mjs writes them.
const outside = (dir, suffix = '') => join(root, dir, `.vitest-failures${suffix}.json`);
const EVERY = '-every-cpu';
// When each test file of the measuring packages held which CPUs (scripts/vitest-pin.mjs).
const leases = (dir) => join(root, dir, '.vitest-cpu-leases.jsonl');
const hasTests = (dir) =>
  existsSync(join(root, dir, 'package.json')) &&
  JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).scripts?.test !== undefined;
// The examples are templates without tests of their own: examples/test-support holds theirs.
const packages = ['packages', 'examples'].flatMap((group) =>
  readdirSync(join(root, group), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && hasTests(join(group, entry.name)))
    .map((entry) => join(group, entry.name)),
);
for (const dir of packages) {
  for (const suffix of ['', EVERY]) {
    rmSync(results(dir, suffix), { force: true });
    rmSync(outside(dir, suffix), { force: true });
  }
  rmSync(leases(dir), { force: true });
}
const packageName = (dir) => JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).name;

// Two phases. First the libraries whose tests time nothing, side by side (each runs its own
// servers and clients on loopback; none asserts a duration or a rate): tick-parser,
// memcache-proto, load-client. Then the rest, whose tests measure: overload-guard (event-loop
// delay, shedding under load), compare, the Action and the examples (real comparisons). Their
// runs go side by side, but each test file holds a CPU of its own machine-wide while it runs and
// runs pinned to it (scripts/vitest-pin.mjs): two files at a time on a 2-CPU runner, from any of
// the four, so that no package's last long file leaves a CPU idle (one at a time, the tails of
// the four left some 115 CPU-seconds idle).
const SIDE_BY_SIDE = ['@hotpath/tick-parser', '@hotpath/memcache-proto', '@hotpath/load-client'];
const turboRun = (args) =>
  spawnSync('pnpm', ['exec', 'turbo', 'run', 'test', '--continue', ...args, ...process.argv.slice(2)], {
    cwd: root,
    stdio: 'inherit',
  });
const first = turboRun([
  `--concurrency=${SIDE_BY_SIDE.length}`,
  ...SIDE_BY_SIDE.map((name) => `--filter=${name}`),
]);
// CI runs the first phase beside its own checks outside the workspace (npm installs and short
// comparisons with wide margins), and names a file here that it writes once they are done: the
// second phase needs the machine to itself.
// biome-ignore lint/suspicious/noUndeclaredEnvVars: read here, outside turbo's tasks
const quietFile = process.env.HOTPATH_TEST_WAIT_FOR;
if (quietFile && !existsSync(quietFile)) {
  console.log(`\ntests: the first phase is done; waiting for ${quietFile} before the rest`);
  while (!existsSync(quietFile)) await new Promise((resolve) => setTimeout(resolve, 500));
}
// The files that need every CPU (placement, overload-guard's load test) first, alone, package by
// package: among the rest such a file waited with one CPU held until a long file freed the other
// (45 s for placement in one CI run). Then the rest, without them (scripts/vitest-every-cpu.mjs).
const everyCpu = packages
  .filter((dir) => !SIDE_BY_SIDE.includes(packageName(dir)))
  .map((dir) => ({ dir, files: everyCpuFiles(join(root, dir)) }))
  .filter(({ files }) => files.length > 0);
let everyCpuFailed = false;
if (everyCpu.length) {
  const built = spawnSync(
    'pnpm',
    ['exec', 'turbo', 'run', 'build', ...everyCpu.map(({ dir }) => `--filter=${packageName(dir)}`)],
    { cwd: root, stdio: 'inherit' },
  );
  everyCpuFailed = built.status !== 0;
  for (const { dir, files } of built.status === 0 ? everyCpu : []) {
    console.log(`\ntests: ${packageName(dir)}'s files that need every CPU, alone: ${files.join(', ')}`);
    const run = spawnSync('pnpm', ['exec', 'vitest', 'run', ...files], {
      cwd: join(root, dir),
      stdio: 'inherit',
      env: { ...process.env, HOTPATH_TEST_EVERY_CPU: 'only' },
    });
    if (run.status !== 0) everyCpuFailed = true;
  }
}
process.env.HOTPATH_TEST_EVERY_CPU = 'apart';
const turbo = turboRun(['--concurrency=4', ...SIDE_BY_SIDE.map((name) => `--filter=!${name}`)]);

let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
const failures = [];
/** Files of the measuring packages that ran tests without a CPU lease. */
let unleased = 0;
/** Every test file's wall time, for the slowest-files list at the end. */
const durations = [];
/** The CPU leases the measuring packages' files held: no two may overlap on a CPU. */
const allLeases = [];
for (const dir of packages) {
  const held = new Map();
  if (existsSync(leases(dir)))
    for (const line of readFileSync(leases(dir), 'utf8').split('\n').filter(Boolean)) {
      const lease = JSON.parse(line);
      held.set(lease.file, { ms: lease.to - lease.from, busy: lease.busy });
      allLeases.push({ ...lease, name: `${dir}/${lease.file.slice(lease.file.indexOf('test/'))}` });
    }
  const suffixes = everyCpu.some((p) => p.dir === dir) ? ['', EVERY] : [''];
  for (const suffix of suffixes) {
    if (!existsSync(results(dir, suffix))) {
      missing.push(`${dir}${suffix ? ' (its files that need every CPU)' : ''}`);
      continue;
    }
    const json = JSON.parse(readFileSync(results(dir, suffix), 'utf8'));
    passed += json.numPassedTests;
    failed += json.numFailedTests;
    skipped += json.numPendingTests + (json.numTodoTests ?? 0);
    for (const file of json.testResults ?? []) {
      const name = `${dir}/${file.name.slice(file.name.indexOf('test/'))}`;
      if (Number.isFinite(file.endTime - file.startTime))
        durations.push({ file: name, ms: file.endTime - file.startTime, ...held.get(file.name) });
      // a file of a package whose files hold CPUs that ran a test without one ran beside another
      // file unnoticed (its servers and load on any CPU): a failure, as an overlap is
      const ran = (file.assertionResults ?? []).some((t) => t.status === 'passed' || t.status === 'failed');
      if (held.size > 0 && ran && !held.has(file.name)) {
        failures.push(`${name} ran without holding a CPU (scripts/vitest-pin.mjs took no lease for it)`);
        unleased++;
      }
      for (const test of file.assertionResults ?? [])
        if (test.status === 'failed')
          failures.push(`${name} › ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
    }
    if (existsSync(outside(dir, suffix)))
      for (const failure of JSON.parse(readFileSync(outside(dir, suffix), 'utf8')))
        failures.push(`${dir}/${failure.file} › ${failure.where}: ${failure.error}`);
  }
}
if (missing.length)
  console.log(`no test results from: ${missing.join(', ')} (its build or its test run failed)`);
// Two files that held a CPU at once would have disturbed each other's measurements: a failure.
let overlaps = 0;
for (const [i, a] of allLeases.entries())
  for (const b of allLeases.slice(i + 1))
    if (a.from < b.to && b.from < a.to && a.cpus.some((cpu) => b.cpus.includes(cpu))) {
      overlaps++;
      failures.push(`${a.name} and ${b.name} held CPU ${a.cpus.find((c) => b.cpus.includes(c))} at once`);
    }
// The slowest files: where the suite's time goes (the budget is ten minutes on a 2-core machine),
// each as long as it held its CPU (not its wait for one), and how busy it kept that CPU (a file
// that mostly waits holds a CPU another file could use).
durations.sort((a, b) => b.ms - a.ms);
console.log('\nslowest test files (s held; the held CPUs busy):');
for (const { file, ms, busy } of durations.slice(0, 12))
  console.log(
    `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${busy === undefined ? '     ' : `${Math.round(busy * 100)} %`.padStart(5)}  ${file}`,
  );
// The failing tests' names last, so that the tail of a long CI log says which one failed.
for (const line of failures) console.log(`failed: ${line}`);
const seconds = Math.round(performance.now() / 1000);
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped (${seconds} s)`);
process.exit(
  first.status === 0 && !everyCpuFailed && turbo.status === 0 && overlaps === 0 && unleased === 0 ? 0 : 1,
);
