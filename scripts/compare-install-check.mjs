// `@hotpath/compare` as a user installs it: pack it and the packages it depends on, install the
// tarballs with plain npm into an empty project outside the workspace, then
//   1. `npx hotpath --version` prints the package version;
//   2. `npx hotpath compare --config hotpath.config.json` with two scenarios — one whose head is
//      slower, one unchanged — flags only the slower one;
//   3. a node:test file imports `compare`, runs two scenarios and asserts on
//      report.scenarios[i].regressed, and an aborted run leaves no child process alive.
// Bounded (a few seconds of load), loopback only. Exits non-zero with a clear line on failure.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'hotpath-install-check-'));
const packs = join(work, 'tarballs');
const app = join(work, 'app');
mkdirSync(packs);
mkdirSync(app);

const fail = (message) => {
  console.error(`compare-install-check: ${message}`);
  process.exitCode = 1;
  throw new Error(message);
};
const step = (text) => console.log(`compare-install-check: ${text}`);

try {
  const names = ['memcache-proto', 'tick-parser', 'load-client', 'overload-guard', 'compare'];
  for (const name of names) {
    execFileSync('pnpm', ['pack', '--pack-destination', packs], {
      cwd: join(root, 'packages', name),
      stdio: 'ignore',
    });
  }
  const tarballs = readdirSync(packs).map((f) => join(packs, f));
  step(`packed ${tarballs.map((t) => t.split('/').pop()).join(', ')}`);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'check-app', private: true, type: 'module' }),
  );
  const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs], {
    cwd: app,
    encoding: 'utf8',
  });
  if (install.status !== 0) fail(`npm install of the tarballs failed:\n${install.stderr}`);

  const version = JSON.parse(readFileSync(join(root, 'packages/compare/package.json'), 'utf8')).version;
  const shown = execFileSync('npx', ['--no-install', 'hotpath', '--version'], {
    cwd: app,
    encoding: 'utf8',
  }).trim();
  if (shown !== `hotpath ${version}`)
    fail(`npx hotpath --version printed ${JSON.stringify(shown)}, expected "hotpath ${version}"`);
  step(`npx hotpath --version: ${shown}`);

  // Two routes; head's /hash does three times the PBKDF2 work, /static is the same.
  writeFileSync(
    join(app, 'server.cjs'),
    `const crypto = require('node:crypto');
const iterations = Number(process.env.HASH_ITERATIONS || 2000);
require('node:http').createServer((req, res) => {
  if (req.url.startsWith('/hash')) res.end(crypto.pbkdf2Sync('pw', 'salt', iterations, 32, 'sha256').toString('hex'));
  else res.end('static');
}).listen(Number(process.env.PORT), '127.0.0.1');
`,
  );
  const config = {
    baseStart: 'node server.cjs',
    headStart: 'HASH_ITERATIONS=20000 node server.cjs',
    duration: '700ms',
    warmup: '200ms',
    rounds: 4,
    connections: 2,
    // Head's /hash costs 10× the CPU (req/s −85 %, CPU per request +500 % or more); /static's
    // round-to-round noise on a busy CI machine reached ±70 % on req/s and more on its
    // sub-millisecond p99, so the verdict uses req/s and CPU per request with a 70 % threshold.
    threshold: 70,
    metrics: ['requestsPerSecond', 'cpuPerRequest'],
    scenarios: [
      { name: 'hash', url: '/hash' },
      { name: 'static', url: '/static', connections: 1 },
    ],
  };
  writeFileSync(join(app, 'hotpath.config.json'), JSON.stringify(config, null, 2));
  const cli = spawnSync(
    'npx',
    ['--no-install', 'hotpath', 'compare', '--config', 'hotpath.config.json', '--json'],
    {
      cwd: app,
      encoding: 'utf8',
      timeout: 180_000,
    },
  );
  if (cli.status !== 0) fail(`npx hotpath compare exited ${cli.status}:\n${cli.stderr}`);
  const report = JSON.parse(cli.stdout);
  const flags = report.scenarios.map((s) => `${s.name}=${s.regressed}`).join(' ');
  if (flags !== 'hash=true static=false') fail(`expected hash=true static=false, got ${flags}`);
  step(`npx hotpath compare --config: ${flags} (${report.summary})`);

  writeFileSync(
    join(app, 'perf.test.mjs'),
    `import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compare, render } from '@hotpath/compare';

const config = JSON.parse(readFileSync('hotpath.config.json', 'utf8'));
const servers = () =>
  readdirSync('/proc').filter((p) => {
    try {
      return /^\\d+$/.test(p) && readFileSync('/proc/' + p + '/cmdline', 'utf8').includes('server.cjs');
    } catch {
      return false;
    }
  });

test('compare() flags the slower scenario only', { timeout: 180_000 }, async () => {
  const events = [];
  const report = await compare({ ...config, out: 'api-report', onProgress: (e) => events.push(e) });
  assert.equal(report.scenarios[0].name, 'hash');
  const { summary } = render(report);
  assert.equal(report.scenarios[0].regressed, true, summary);
  assert.equal(report.scenarios[1].regressed, false, summary);
  assert.match(render(report).markdown, /^### /);
  assert.ok(events.some((e) => e.phase === 'measure'));
});

// Anything of the process left: a thread that is not a zombie (a zombie main thread whose other
// threads still run still holds the server's port).
const leftOf = (pid) => {
  let tasks;
  try {
    tasks = readdirSync('/proc/' + pid + '/task');
  } catch {
    return false;
  }
  return tasks.some((t) => {
    try {
      const stat = readFileSync('/proc/' + pid + '/task/' + t + '/stat', 'utf8');
      return !'ZX'.includes(stat.slice(stat.lastIndexOf(')') + 2)[0]);
    } catch {
      return false;
    }
  });
};

test('an aborted compare() rejects and leaves no server alive', { timeout: 60_000 }, async () => {
  const controller = new AbortController();
  const run = compare({ ...config, duration: '30s', out: 'aborted-report', signal: controller.signal });
  const deadline = Date.now() + 20_000;
  let seen = servers();
  while (seen.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    seen = servers();
  }
  assert.ok(seen.length > 0, 'a server should be running');
  controller.abort(new Error('enough'));
  await assert.rejects(run, (err) => err.code === 'HP_COMPARE_ABORTED');
  assert.deepEqual(seen.filter(leftOf), []);
  assert.deepEqual(servers(), []);
});
`,
  );
  const tests = spawnSync(process.execPath, ['--test', 'perf.test.mjs'], {
    cwd: app,
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (tests.status !== 0) fail(`node --test perf.test.mjs failed:\n${tests.stdout}\n${tests.stderr}`);
  step(`node --test in the installed project: ${(/# pass (\d+)/.exec(tests.stdout) ?? [])[1]} passed`);
} catch (err) {
  if (!process.exitCode) {
    console.error(`compare-install-check: ${err.message}`);
    process.exitCode = 1;
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
