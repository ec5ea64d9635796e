// `node scripts/examples-check.mjs`: the examples are templates a user copies out of this
// repository. For each examples/<name> with a `start` script: its package.json names registry
// packages only; copied to a temporary directory, `npm install` succeeds and `PORT=<free> npm
// start` serves a first good response; then the server is stopped. Packages of this workspace
// that an example depends on (not on the registry until released) are installed from tarballs
// packed here, as the examples' READMEs tell users to do. Also runs the install step of this
// repository's .github/workflows/hotpath.yml in a checkout of HEAD, where the Action runs it.
// Needs the packages built. Exits 1 when any check failed; bounded to 8 minutes.
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { get } from 'node:http';
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
const work = mkdtempSync(join(tmpdir(), 'hotpath-examples-check-'));
const servers = new Set();
const report = createReport();
const { check } = report;

/** How to tell that each example's server answers: its first request and the good answer. */
const probes = {
  'express-auth': { http: '/auth?username=demo&password=secret', status: 200 },
  'restify-etag': { http: '/seed/v1', status: 200, header: 'etag' },
  nodecached: { memcache: 'version\r\n', reply: /^VERSION \S+\r\n$/ },
  // no PostgreSQL or Redis here: the route that touches neither
  'orders-db': { http: '/health', status: 200 },
};

function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }, 3000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    try {
      process.kill(-child.pid, 'SIGTERM'); // npm and the server it started
    } catch {
      resolve();
    }
  });
}

function cleanup() {
  for (const child of servers) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
  rmSync(work, { recursive: true, force: true });
}
const deadline = setTimeout(() => {
  console.error('examples-check: FAILED: did not finish within 8 minutes');
  cleanup();
  process.exit(1);
}, 480_000);
deadline.unref();

const run = (file, args, options) => runCommand(file, args, { timeout: 300_000, ...options });

function httpGet(port, path) {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (error) => resolve({ error: error.message }));
  });
}

const workspacePackages = new Map(publicPackages(root).map((pkg) => [pkg.manifest.name, pkg]));
const tarballs = new Map();
async function tarballOf(name) {
  if (tarballs.has(name)) return tarballs.get(name);
  const pkg = workspacePackages.get(name);
  const dest = join(work, 'tarballs');
  mkdirSync(dest, { recursive: true });
  const out = await run('pnpm', ['pack', '--pack-destination', dest], { cwd: pkg.dir });
  const file = join(dest, `${name.replace(/^@/, '').replace('/', '-')}-${pkg.manifest.version}.tgz`);
  const tarball = out.code === 0 && existsSync(file) ? file : undefined;
  if (!tarball) check(false, `pnpm pack ${name}`, out.stderr + out.stdout);
  tarballs.set(name, tarball);
  // Its own dependencies of this workspace come from tarballs too.
  const manifest = pkg.manifest;
  for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
    if (workspacePackages.has(dep)) await tarballOf(dep);
  }
  return tarball;
}

console.log(`examples-check in ${work}`);
const examples = readdirSync(join(root, 'examples'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(root, 'examples', entry.name, 'package.json')))
  .map((entry) => entry.name)
  .filter((name) => {
    const manifest = JSON.parse(readFileSync(join(root, 'examples', name, 'package.json'), 'utf8'));
    return manifest.scripts?.start !== undefined;
  });
check(examples.length > 0, `examples with a start script: ${examples.join(', ')}`);

for (const name of examples) {
  console.log(`\n== examples/${name}`);
  const source = join(root, 'examples', name);
  const manifest = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'));
  const ranges = Object.entries({ ...manifest.dependencies, ...manifest.devDependencies });
  const local = ranges.filter(([, range]) => /^(workspace|link|file|portal):/.test(range));
  check(
    local.length === 0,
    `${name}: package.json names registry packages only`,
    local.map(([dep, range]) => `${dep}: ${range}`).join(', '),
  );
  check(
    existsSync(join(source, '.github', 'workflows', 'hotpath.yml')),
    `${name}: has .github/workflows/hotpath.yml`,
  );

  const copy = join(work, name);
  cpSync(source, copy, {
    recursive: true,
    filter: (path) => !path.includes('/node_modules') && !path.endsWith('.vitest-result.json'),
  });
  // Workspace packages are not on the registry before a release: install their tarballs, as the
  // README says, with overrides so that packages naming each other also take the tarballs.
  const ours = Object.keys(manifest.dependencies ?? {}).filter((dep) => workspacePackages.has(dep));
  if (ours.length) {
    for (const dep of ours) await tarballOf(dep);
    const copied = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8'));
    copied.overrides = {};
    for (const [dep, tarball] of tarballs) {
      if (!tarball) continue;
      if (ours.includes(dep)) {
        copied.dependencies[dep] = `file:${tarball}`;
        copied.overrides[dep] = `$${dep}`;
      } else copied.overrides[dep] = `file:${tarball}`;
    }
    writeFileSync(join(copy, 'package.json'), `${JSON.stringify(copied, null, 2)}\n`);
    console.log(`  note  ${ours.join(', ')} installed from tarballs packed here`);
  }
  const install = await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: copy });
  if (!check(install.code === 0, `${name}: npm install in a copy outside the repository`, install.stderr))
    continue;

  const probe = probes[name];
  if (!check(probe !== undefined, `${name}: scripts/examples-check.mjs knows how to probe it`)) continue;
  const port = await freePort();
  const child = spawn('npm', ['start'], {
    cwd: copy,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  servers.add(child);
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const up = await waitForPort(port, 30_000, () => child.exitCode === null);
  if (check(up, `${name}: PORT=${port} npm start listens`, output)) {
    if (probe.http) {
      const res = await httpGet(port, probe.http);
      check(
        res.status === probe.status && (!probe.header || res.headers[probe.header] !== undefined),
        `${name}: GET ${probe.http} answers ${probe.status}${probe.header ? ` with ${probe.header}` : ''}`,
        JSON.stringify(res),
      );
    } else {
      const reply = await memcacheExchange(port, probe.memcache, '\r\n');
      check(
        probe.reply.test(reply),
        `${name}: ${JSON.stringify(probe.memcache)} answers ${JSON.stringify(reply)}`,
        output,
      );
    }
  }
  await stop(child);
  servers.delete(child);
}

// This repository's own workflow runs `install` in `working-directory` of a checkout of the PR
// and of its base: do the same in a checkout of HEAD.
console.log('\n== .github/workflows/hotpath.yml install step');
const workflow = readFileSync(join(root, '.github', 'workflows', 'hotpath.yml'), 'utf8');
const directory = /^\s+working-directory:\s*(\S+)\s*$/m.exec(workflow)?.[1];
const installCommand = /^\s+install:\s*(.+?)\s*$/m.exec(workflow)?.[1];
if (check(directory && installCommand, 'hotpath.yml names working-directory and install')) {
  const checkout = join(work, 'checkout');
  mkdirSync(checkout);
  const archive = await run('sh', ['-c', `git -C "${root}" archive HEAD | tar -x -C "${checkout}"`]);
  if (check(archive.code === 0, 'checkout of HEAD (git archive)', archive.stderr)) {
    const out = await run('sh', ['-c', installCommand], { cwd: join(checkout, directory) });
    check(out.code === 0, `\`${installCommand}\` in ${directory} of HEAD`, out.stderr);
  }
}

cleanup();
clearTimeout(deadline);
if (report.failed.length) {
  console.log(
    `\nexamples-check: FAILED: ${report.failed.length} of ${report.ok + report.failed.length} checks:`,
  );
  for (const what of report.failed) console.log(`  - ${what}`);
  process.exit(1);
}
console.log(`\nexamples-check: all ${report.ok} checks ok (${examples.length} examples)`);
