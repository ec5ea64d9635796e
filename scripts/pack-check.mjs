// `node scripts/pack-check.mjs [node binary ...]`: what a user installs from the registry works
// outside this workspace. Packs every public package (packages/*/package.json without
// "private": true) with `pnpm pack`, installs the tarballs with plain npm into an empty temporary
// project, then checks: each tarball's contents (LICENSE, README, CHANGELOG, the files
// package.json points at, no `workspace:` ranges), every CLI's `--version`, one real job per known
// CLI, and that every package loads from ESM and from CommonJS, with this node, with
// $HOTPATH_NODE22 / $HOTPATH_NODE24 when set and with each node binary given as an argument.
// Needs the packages built (`pnpm build`). Prints one line per check and exits 1 when any failed.
// Bounded: each command has a timeout, the whole run 6 minutes.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createReport,
  freePort,
  memcacheExchange,
  publicPackages,
  run as runCommand,
  waitForPort,
} from './lib/checks.mjs';

const root = new URL('..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'hotpath-pack-check-'));
const children = new Set();
const results = createReport();
const { fail, check } = results;

function cleanup() {
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
}
const deadline = setTimeout(() => {
  console.error('pack-check: FAILED: did not finish within 6 minutes');
  cleanup();
  process.exit(1);
}, 360_000);
deadline.unref();
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

/** Runs a command in the work folder (unless told otherwise), killed on cleanup. */
const run = (file, args, options = {}) => runCommand(file, args, { cwd: work, ...options, children });

// ---------------------------------------------------------------------------------------------
console.log(`pack-check in ${work}`);
const packDir = join(work, 'tarballs');
const project = join(work, 'project');
mkdirSync(packDir);
mkdirSync(project);

const packages = publicPackages(root);
if (packages.length === 0) {
  console.error('pack-check: FAILED: no public package under packages/');
  process.exit(1);
}

console.log('\n== pack');
for (const pkg of packages) {
  const { name, version } = pkg.manifest;
  const packed = await run('pnpm', ['pack', '--pack-destination', packDir], {
    cwd: pkg.dir,
    timeout: 120_000,
  });
  const tarball = join(packDir, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
  if (!check(packed.code === 0 && existsSync(tarball), `${name}: pnpm pack`, packed.stderr + packed.stdout)) {
    continue;
  }
  pkg.tarball = tarball;
  const listing = (await run('tar', ['tzf', tarball])).stdout.split('\n').filter(Boolean);
  const files = new Set(listing.map((line) => line.replace(/^package\//, '')));
  const packedManifest = JSON.parse((await run('tar', ['xzfO', tarball, 'package/package.json'])).stdout);
  for (const required of ['LICENSE', 'README.md', 'CHANGELOG.md']) {
    check(
      files.has(required),
      `${name}: tarball lists ${required}`,
      `tarball holds: ${[...files].join(' ')}`,
    );
  }
  const pointed = new Set();
  const collect = (value) => {
    if (typeof value === 'string') pointed.add(value.replace(/^\.\//, ''));
    else if (value && typeof value === 'object') Object.values(value).forEach(collect);
  };
  collect(packedManifest.main);
  collect(packedManifest.types);
  collect(packedManifest.exports);
  collect(packedManifest.bin);
  const missing = [...pointed].filter((file) => !file.includes('*') && !files.has(file));
  check(
    missing.length === 0,
    `${name}: every file that package.json points at is in the tarball`,
    `missing: ${missing.join(', ')} (built? run pnpm build)`,
  );
  check(
    [...files].some((file) => file.endsWith('.d.ts')),
    `${name}: tarball has type declarations`,
  );
  const ranges = Object.entries({ ...packedManifest.dependencies, ...packedManifest.optionalDependencies });
  const local = ranges.filter(([, range]) => /^(workspace|link|file):/.test(range));
  check(
    local.length === 0,
    `${name}: dependencies are registry ranges`,
    local.map(([dep, range]) => `${dep}: ${range}`).join(', '),
  );
  const engines = packedManifest.engines?.node;
  check(typeof engines === 'string' && engines.length > 0, `${name}: engines.node is stated (${engines})`);
}

const packed = packages.filter((pkg) => pkg.tarball);
if (packed.length !== packages.length) {
  console.log(`\npack-check: FAILED: ${results.failed.length} check(s) failed: ${results.failed.join('; ')}`);
  cleanup();
  process.exit(1);
}

console.log('\n== npm install of the tarballs into an empty project');
// The tarballs name each other with registry ranges (^0.1.0): the overrides make npm take the
// local tarballs for them too, so nothing of ours is fetched from the registry.
const dependencies = Object.fromEntries(packed.map((pkg) => [pkg.manifest.name, `file:${pkg.tarball}`]));
const overrides = Object.fromEntries(packed.map((pkg) => [pkg.manifest.name, `$${pkg.manifest.name}`]));
writeFileSync(
  join(project, 'package.json'),
  `${JSON.stringify({ name: 'hotpath-pack-check', version: '0.0.0', private: true, dependencies, overrides }, null, 2)}\n`,
);
const npmArgs = ['install', '--no-audit', '--no-fund', '--loglevel=error', '--no-package-lock'];
const installed = await run('npm', npmArgs, { cwd: project, timeout: 300_000 });
if (!check(installed.code === 0, 'npm install of every tarball', installed.stderr + installed.stdout)) {
  console.log(`\npack-check: FAILED: ${results.failed.join('; ')}`);
  cleanup();
  process.exit(1);
}

const bins = new Map(); // bin name -> package
for (const pkg of packed) {
  const manifest = JSON.parse(
    readFileSync(join(project, 'node_modules', pkg.manifest.name, 'package.json'), 'utf8'),
  );
  const bin =
    typeof manifest.bin === 'string' ? { [manifest.name.split('/').pop()]: manifest.bin } : manifest.bin;
  for (const name of Object.keys(bin ?? {})) bins.set(name, manifest);
}
const binPath = (name) => join(project, 'node_modules', '.bin', name);

console.log('\n== every CLI answers --version with its package version');
for (const [bin, manifest] of bins) {
  const out = await run(binPath(bin), ['--version'], { timeout: 15_000 });
  const words = out.stdout.split(/[\s()]+/);
  check(
    out.code === 0 &&
      (words.includes(manifest.version) ||
        words.includes(`v${manifest.version}`) ||
        // hotpath-memcached answers as memcached does: `memcached 1.6.18+hotpath-memcached.0.1.0`
        words.some((w) => w.endsWith(`+${bin}.${manifest.version}`))),
    `${bin} --version prints ${manifest.version}`,
    `exit ${out.code}; stdout: ${out.stdout.trim() || '(empty)'}; stderr: ${out.stderr.trim()}`,
  );
}

console.log('\n== one real job per CLI');
const known = new Set(['hotpath-load', 'hotpath-memcached', 'hotpath-ticks', 'hotpath']);
for (const bin of bins.keys()) {
  if (!known.has(bin)) fail(`${bin}: no smoke job is defined for this CLI in scripts/pack-check.mjs`);
}

if (bins.has('hotpath-load')) {
  let served = 0;
  const server = createServer((_req, res) => {
    served++;
    res.end('ok');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const out = await run(binPath('hotpath-load'), [url, '-a', '500', '-c', '4', '--json'], {
    timeout: 30_000,
  });
  server.close();
  let result;
  try {
    result = JSON.parse(out.stdout);
  } catch {}
  check(
    out.code === 0 && result?.requests?.total === 500 && result.errors === 0 && served >= 500,
    `hotpath-load -a 500 -c 4 against a local node:http server: 500 requests, 0 errors (server saw ${served})`,
    `exit ${out.code}; ${out.stderr}${out.stdout.slice(0, 500)}`,
  );
}

if (bins.has('hotpath-memcached')) {
  const port = await freePort();
  const child = spawn(binPath('hotpath-memcached'), ['-p', String(port), '-l', '127.0.0.1'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const up = await waitForPort(port, 10_000);
  if (check(up, `hotpath-memcached listens on a free port (${port})`, stderr)) {
    const stored = await memcacheExchange(port, 'set pack-check 0 0 5\r\nhello\r\n', '\r\n');
    const got = await memcacheExchange(port, 'get pack-check\r\n', 'END\r\n');
    check(
      stored === 'STORED\r\n' && got === 'VALUE pack-check 0 5\r\nhello\r\nEND\r\n',
      'hotpath-memcached: set then get over a raw socket',
      `set -> ${JSON.stringify(stored)}, get -> ${JSON.stringify(got)}`,
    );
  }
  child.kill('SIGTERM');
  children.delete(child);
}

if (bins.has('hotpath-ticks')) {
  const script = join(work, 'busy.js');
  writeFileSync(
    script,
    'function packCheckBusyLoop() { let s = 0; for (let i = 0; i < 2e6; i++) s += Math.sqrt(i); return s; }\n' +
      'const end = Date.now() + 400; let x = 0; while (Date.now() < end) x += packCheckBusyLoop();\n',
  );
  const log = join(work, 'busy-v8.log');
  const prof = await run(process.execPath, [
    '--prof',
    `--logfile=${log}`,
    '--no-logfile-per-isolate',
    script,
  ]);
  if (
    check(prof.code === 0 && existsSync(log), 'node --prof of a tiny script writes a tick log', prof.stderr)
  ) {
    const out = await run(binPath('hotpath-ticks'), [log, '--json'], { timeout: 60_000 });
    let report;
    try {
      report = JSON.parse(out.stdout);
    } catch {}
    const top = report?.functions?.find((fn) => fn.name === 'packCheckBusyLoop');
    check(
      out.code === 0 && report?.ticks?.total > 0 && top !== undefined && top.self > 0,
      `hotpath-ticks on the recorded log names packCheckBusyLoop (${top?.self ?? 0} of ${report?.ticks?.total ?? 0} ticks)`,
      `exit ${out.code}; ${out.stderr}${out.stdout.slice(0, 500)}`,
    );
  }
}

if (bins.has('hotpath')) {
  const app = join(work, 'compare-app');
  mkdirSync(app);
  const server = (body) =>
    `require('node:http').createServer((req, res) => res.end('${body}')).listen(process.env.PORT, '127.0.0.1');\n`;
  writeFileSync(join(app, 'a.js'), server('a'));
  writeFileSync(join(app, 'b.js'), server('b'));
  const out = await run(
    binPath('hotpath'),
    [
      'compare',
      '--base-start',
      'node a.js',
      '--head-start',
      'node b.js',
      '-d',
      '1s',
      '-W',
      '0',
      '--rounds',
      '1',
      '--out',
      'report',
    ],
    { cwd: app, timeout: 120_000 },
  );
  let report;
  try {
    report = JSON.parse(readFileSync(join(app, 'report', 'report.json'), 'utf8'));
  } catch {}
  const rounds = report?.scenarios?.[0]?.rounds ?? [];
  check(
    out.code === 0 && rounds.length === 2 && rounds.every((round) => round.requestsPerSecond > 0),
    'hotpath compare on two tiny servers (1 round, 1 s each) writes a report with load on both sides',
    `exit ${out.code}; ${out.stderr}${out.stdout.slice(-800)}`,
  );
} else {
  console.log('  note  no installed package provides the `hotpath` bin yet: hotpath compare not checked');
}

console.log('\n== every package loads from ESM and from CommonJS');
const nodes = [['node', process.execPath]];
for (const [label, variable] of [
  ['node 22', 'HOTPATH_NODE22'],
  ['node 24', 'HOTPATH_NODE24'],
]) {
  if (process.env[variable]) nodes.push([label, process.env[variable]]);
}
// More node binaries from the command line (.ci/run passes the lower bounds of `engines`).
for (const node of process.argv.slice(2)) nodes.push(['node', node]);
for (const pkg of packed) {
  const { name } = pkg.manifest;
  const base = name.replace(/^@/, '').replace('/', '-');
  writeFileSync(
    join(project, `${base}.mjs`),
    `import * as m from '${name}';\nconsole.log(JSON.stringify(Object.keys(m).sort()));\n`,
  );
  writeFileSync(
    join(project, `${base}.cjs`),
    `const m = require('${name}');\nconsole.log(JSON.stringify(Object.keys(m).filter((k) => k !== '__esModule' && k !== 'module.exports').sort()));\n`,
  );
  for (const [label, node] of nodes) {
    const version = (await run(node, ['--version'])).stdout.trim();
    const esm = await run(node, [`${base}.mjs`], { cwd: project });
    const cjs = await run(node, [`${base}.cjs`], { cwd: project });
    const esmKeys = esm.code === 0 ? JSON.parse(esm.stdout) : [];
    const ok = esm.code === 0 && cjs.code === 0 && esmKeys.length > 0 && esm.stdout === cjs.stdout;
    check(
      ok,
      `${name}: import and require() give the same ${esmKeys.length} exports on ${label} ${version}`,
      `import: exit ${esm.code} ${esm.stderr}\nrequire: exit ${cjs.code} ${cjs.stderr}${cjs.stdout !== esm.stdout ? `\nimport keys ${esm.stdout}require keys ${cjs.stdout}` : ''}`,
    );
  }
}

cleanup();
clearTimeout(deadline);
if (results.failed.length) {
  console.log(
    `\npack-check: FAILED: ${results.failed.length} of ${results.ok + results.failed.length} checks:`,
  );
  for (const what of results.failed) console.log(`  - ${what}`);
  process.exit(1);
}
console.log(`\npack-check: all ${results.ok} checks ok (${packed.length} packages, ${bins.size} CLIs)`);
