import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { leftAlive } from '../../compare/test/helpers/processes.js';
import { makeRepo, runAction } from './helpers/action-run.js';
import { defined } from './helpers/defined.js';
import { type FakeGitHub, startFakeGitHub } from './helpers/fake-github.js';

const ONE_ROUND = { duration: '0.5', warmup: '0', rounds: '1', connections: '1', 'ready-timeout': '5' };
const SERVER = `require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');`;

/**
 * A config from the pull request that tries what a hostile one would: it writes the environment
 * it sees next to itself, prints workflow commands on stdout and stderr, and appends to the
 * GITHUB_ENV file if it is given one.
 */
const HOSTILE_CONFIG = `import { appendFileSync, writeFileSync } from 'node:fs';
writeFileSync(new URL('./config-saw.json', import.meta.url), JSON.stringify({ env: process.env, pid: process.pid, ppid: process.ppid }));
console.log('::warning::config-owned-warning');
console.error('::error title=x::config-owned-error');
console.log('::set-env name=HOTPATH_OWNED::1');
if (process.env.GITHUB_ENV) appendFileSync(process.env.GITHUB_ENV, 'HOTPATH_OWNED=1\\n');
export default async () => ({ start: 'node server.js', scenarios: [{ name: 'from-js-config', url: '/' }] });
`;

describe('config files in the Action', () => {
  let root: string;
  let github: FakeGitHub;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-config-'));
    github = await startFakeGitHub();
  });

  afterAll(async () => {
    await github.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('measure: evaluates a JavaScript config in a child with the allowlisted environment, its output inert in the log', async () => {
    const repo = makeRepo(
      join(root, 'measure'),
      { 'server.js': SERVER, 'hotpath.config.mjs': HOSTILE_CONFIG },
      {},
    );
    const githubEnv = join(root, 'github-env');
    writeFileSync(githubEnv, '');
    const results = join(root, 'measure-results');
    let actionPid = 0;
    const run = await runAction({
      repo,
      apiUrl: github.url,
      onSpawn: (child) => {
        actionPid = child.pid ?? 0;
      },
      env: { GITHUB_ENV: githubEnv, NPM_TOKEN: 'npm-secret' },
      inputs: { ...ONE_ROUND, mode: 'measure', config: 'hotpath.config.mjs', results },
    });
    expect(run.stdout.match(/::error::.*/)?.[0], run.stdout).toBeUndefined();
    expect(run.code).toBe(0);
    // The config ran, and its object made the settings: the shard measured its scenario.
    const shard = readFileSync(
      join(defined(run.outputs.results, 'the results output'), 'hotpath-results.json'),
      'utf8',
    );
    expect(shard).toContain('from-js-config');

    const saw = JSON.parse(readFileSync(join(repo.dir, 'config-saw.json'), 'utf8')) as {
      env: Record<string, string>;
      pid: number;
      ppid: number;
    };
    const names = Object.keys(saw.env);
    expect(names.filter((n) => n.startsWith('INPUT_'))).toEqual([]);
    expect(names.filter((n) => n.startsWith('ACTIONS_'))).toEqual([]);
    expect(names.filter((n) => n.startsWith('GITHUB_'))).toEqual([]);
    expect(names).not.toContain('NPM_TOKEN');
    expect(names).not.toContain('RUNNER_TEMP');
    expect(JSON.stringify(saw.env)).not.toContain('ghs_secret_token_for_tests');
    expect(saw.env.PATH).toBeTruthy();
    // Its own process, not the Action's.
    expect(actionPid).toBeGreaterThan(0);
    expect(saw.pid).not.toBe(actionPid);
    expect(readFileSync(githubEnv, 'utf8')).toBe('');

    // What it printed is in the log, and no line of it is a workflow command.
    expect(run.stdout).toContain('config-owned-warning');
    expect(run.stdout).toContain('config-owned-error');
    const printed = run.stdout.split('\n').filter((l) => /config-owned|HOTPATH_OWNED/.test(l));
    expect(printed).toHaveLength(3);
    for (const line of printed) expect(line).not.toMatch(/^::/);
    // … and it was printed while workflow commands were stopped.
    const stopAt = run.stdout.search(/^::stop-commands::hotpath-/m);
    expect(stopAt).toBeGreaterThanOrEqual(0);
    expect(run.stdout.indexOf('config-owned-warning')).toBeGreaterThan(stopAt);

    // The measure job was given a token it does not need: the Action says so.
    expect(run.stdout).toMatch(
      /::warning::hotpath: mode measure calls no GitHub API, but github-token is set/,
    );
    expect(github.requests).toEqual([]);
  });

  it("measure: a config file's settings hold where the step sets no input, under GitHub's declared defaults", async () => {
    // runAction sets INPUT_<NAME> for every input the step leaves out at action.yml's default, as
    // GitHub does: a setting input declaring a default there (duration 5) would override the file
    const config = {
      start: 'node server.js',
      url: '/',
      duration: 0.5,
      warmup: 0,
      rounds: 2,
      connections: 1,
      threshold: 40,
      readyTimeout: 5,
    };
    const repo = makeRepo(
      join(root, 'settings'),
      { 'server.js': SERVER, 'hotpath.config.json': JSON.stringify(config) },
      {},
    );
    const run = await runAction({
      repo,
      apiUrl: github.url,
      noToken: true,
      inputs: { mode: 'measure', config: 'hotpath.config.json', results: join(root, 'settings-results') },
    });
    expect(run.stdout.match(/::error::.*/)?.[0], run.stdout).toBeUndefined();
    expect(run.code).toBe(0);
    const shard = JSON.parse(
      readFileSync(join(defined(run.outputs.results, 'the results output'), 'hotpath-results.json'), 'utf8'),
    ) as { settings: Record<string, unknown> };
    expect(shard.settings).toMatchObject({ duration: 0.5, warmup: 0, rounds: 2, threshold: 40 });
    expect(JSON.stringify(shard.settings)).toContain('"connections":1');
    expect(run.stdout).toMatch(/measuring 0\.5 s/);
  });

  it('measure: a JavaScript config that fails names the file and shows its last lines', async () => {
    const repo = makeRepo(
      join(root, 'broken'),
      {
        'server.js': SERVER,
        'hotpath.config.mjs': `console.error('reading settings from the database'); throw new Error('no database');`,
      },
      {},
    );
    const run = await runAction({
      repo,
      apiUrl: github.url,
      noToken: true,
      inputs: {
        ...ONE_ROUND,
        mode: 'measure',
        config: 'hotpath.config.mjs',
        results: join(root, 'broken-results'),
      },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /::error::HP_COMPARE_CONFIG: cannot load .*hotpath\.config\.mjs: evaluating it exited with code 1/,
    );
    expect(run.stdout).toContain('no database');
  });

  it('report: refuses a JavaScript config without running it', async () => {
    const repo = makeRepo(join(root, 'report'), { 'hotpath.config.mjs': HOSTILE_CONFIG }, {});
    const run = await runAction({
      repo,
      apiUrl: github.url,
      inputs: { mode: 'report', config: 'hotpath.config.mjs', results: join(root, 'none') },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /::error::HP_ACTION_CONFIG_NOT_JSON: config "hotpath\.config\.mjs" is JavaScript, and mode report reads JSON only/,
    );
    expect(existsSync(join(repo.dir, 'config-saw.json'))).toBe(false);
    expect(run.stdout).not.toContain('config-owned');
  });
});

describe('a cancelled job while the profiler installs', () => {
  let root: string;
  let github: FakeGitHub;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-install-'));
    github = await startFakeGitHub();
  });

  afterAll(async () => {
    await github.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('stops the install and every process below it (npm → script → build tool → compiler)', async () => {
    // An `npm` first on PATH that installs slowly the way a native addon builds: a script runner
    // below npm, a build tool below it, compilers below that, one in a session of its own.
    const bin = join(root, 'bin');
    mkdirSync(bin);
    const pids = join(root, 'install.pids');
    const script = (name: string, body: string) => {
      writeFileSync(join(bin, name), `#!/bin/sh\necho "${name} $$" >> '${pids}'\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    script('npm', `'${join(bin, 'install-script')}' &\nwait`);
    script('install-script', `'${join(bin, 'make')}' &\nwait`);
    script(
      'make',
      `sleep 300 &\necho "cc $!" >> '${pids}'\nsetsid sleep 301 &\necho "cc-own-session $!" >> '${pids}'\nwait`,
    );
    const repo = makeRepo(join(root, 'repo'), { 'server.js': SERVER }, {});
    const seen = (): number[] =>
      existsSync(pids)
        ? readFileSync(pids, 'utf8')
            .trim()
            .split('\n')
            .map((line) => Number(line.split(' ')[1]))
        : [];
    let killedWith: number[] = [];
    // Whatever the assertions say, nothing of this test outlives it (by pid, ours only).
    onTestFinished(() => {
      for (const pid of leftAlive(seen())) process.kill(pid, 'SIGKILL');
    });
    const run = await runAction({
      repo,
      apiUrl: github.url,
      noToken: true,
      env: { PATH: `${bin}:${process.env.PATH}`, HOTPATH_V8_PROFILER_INSTALL: 'true' },
      inputs: { ...ONE_ROUND, mode: 'measure', profiler: 'cpuprofile', results: join(root, 'results') },
      onSpawn: (child) => {
        const poll = setInterval(() => {
          // npm, the script, the build tool and both compilers are running: cancel the job.
          if (seen().length >= 5) {
            clearInterval(poll);
            killedWith = seen();
            child.kill('SIGTERM');
          }
        }, 100);
        child.once('exit', () => clearInterval(poll));
      },
    });
    expect(killedWith).toHaveLength(5);
    expect(run.stdout).toMatch(
      /::error::HP_COMPARE_ABORTED: installing v8-profiler-next was aborted \(SIGTERM/,
    );
    // The Action exited only after the whole install tree had ended.
    expect(leftAlive(killedWith)).toEqual([]);
  });
});
