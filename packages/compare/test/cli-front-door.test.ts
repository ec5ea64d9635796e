import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, FIXTURES, makeRepo, runCli } from './helpers/repo.js';

const cli = (args: string[], cwd = FIXTURES) => runCli(args, { cwd, timeout: 180_000 });

const SERVER = `node ${JSON.stringify(join(FIXTURES, 'routes-server.cjs'))}`;

describe('hotpath front door: usage, values, progress, output folder, own frames', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-front-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('`hotpath` alone prints the usage to stderr and exits 2', async () => {
    const r = await cli([]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Usage:');
    expect(r.stderr).toContain('hotpath init');
  });

  it.each([
    [['--threshold', '-5'], 'invalid --threshold: expected a percentage, e.g. 10 >= 0 and <= 1000, got "-5"'],
    [['-c', '-1'], 'invalid --connections: expected auto or a whole number >= 1 and <= 10000, got "-1"'],
    [['--connections', '-1'], 'got "-1"'],
    [['-d', '-2s'], 'invalid --duration: expected a duration'],
    [['-W', 'soon'], 'invalid --warmup: expected a duration'],
    [['-r', '0'], 'invalid --rounds: expected auto or a whole number >= 1'],
    [
      ['-R', '-10'],
      `invalid --rate: expected requests per second (a number > 0) or a share of base's measured capacity such as "70%" (> 0 and <= 1000 %), got "-10"`,
    ],
    [['-H', '=x'], 'invalid --header'],
    [['--hot-threshold', '-.5'], 'got "-.5"'],
  ])('compare %j exits 2 with one line naming the value', async (args, message) => {
    const r = await cli(['compare', '--start', 'node x.js', ...args], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('-H takes name=value as hotpath-load does; -W is the warm-up', async () => {
    const out = join(dir, 'headers');
    const r = await cli([
      'compare',
      '--base-start',
      SERVER,
      '--head-start',
      SERVER,
      '--url',
      '/static',
      '-H',
      'x-token=abc',
      '-W',
      '0.1',
      '-d',
      '0.5',
      '-r',
      '1',
      '-c',
      '1',
      '--profiler',
      'none',
      '--memory',
      'off',
      '--quiet',
      '--out',
      out,
      '--json',
    ]);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    // the report names the headers sent (their values stay out of it)
    expect(report.settings.scenarios[0].headers).toEqual(['x-token']);
    expect(report.settings.warmup).toBe(0.1);
  });

  it('piped, prints one line per round and scenario with its req/s and the ETA; --quiet prints none', async () => {
    const app = join(dir, 'progress');
    mkdirSync(app, { recursive: true });
    writeFileSync(
      join(app, 'hotpath.config.json'),
      JSON.stringify({
        baseStart: SERVER,
        headStart: SERVER,
        duration: '500ms',
        warmup: '100ms',
        rounds: 2,
        connections: 1,
        profiler: 'none',
        // the progress lines are the subject: no memory edges (their collections cost a fifth of the run)
        memory: 'off',
        scenarios: [
          { name: 'hash', url: '/hash' },
          { name: 'static', url: '/static' },
        ],
      }),
    );
    const r = await cli(['compare'], app);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stderr.split('\n').filter((l) => /^hotpath: round /.test(l));
    const shape = (round: number, side: string, scenario: string) =>
      new RegExp(`^hotpath: round ${round}/2 ${side} · "${scenario}" · [\\d,]+ req/s( · ETA \\d+ s)?$`);
    // Both servers of a round measured in slices, scenario by scenario; the side that goes
    // first alternates from round to round.
    const expected = [
      [1, ['base', 'head']],
      [2, ['head', 'base']],
    ].flatMap(([round, sides]) =>
      ['hash', 'static'].flatMap((scenario) =>
        (sides as string[]).map((side) => shape(Number(round), side, scenario)),
      ),
    );
    expect(lines).toHaveLength(8);
    for (const [i, line] of lines.entries()) expect(line).toMatch(expected[i] as RegExp);
    // once the first round is done, the ETA is known
    for (const line of lines.slice(4)) expect(line).toMatch(/ · ETA \d+ s$/);
    expect(r.stderr).not.toContain('\r');
    // --quiet prints no round of any length: one short round is enough to show it
    const quiet = await cli(['compare', '--quiet', '--rounds', '1', '--duration', '200ms'], app);
    expect(quiet.status).toBe(0);
    expect(quiet.stderr).not.toMatch(/^hotpath: round/m);
    expect(quiet.stderr).toMatch(/files in /);
  });

  it("each run owns --out: an earlier run's files go, the user's stay", async () => {
    const out = join(dir, 'owned');
    const base = [
      'compare',
      '--base-start',
      SERVER,
      '--head-start',
      SERVER,
      '-d',
      '0.4',
      '-W',
      '0',
      '-r',
      '1',
    ];
    const common = ['-c', '1', '--profiler', 'cpuprofile', '--memory', 'off', '--quiet', '--out', out];
    const app = join(dir, 'owned-app');
    mkdirSync(app, { recursive: true });
    writeFileSync(
      join(app, 'hotpath.config.json'),
      JSON.stringify({
        scenarios: [
          { name: 'hash', url: '/hash' },
          { name: 'static', url: '/static' },
        ],
      }),
    );
    const first = await cli([...base, ...common], app);
    expect(first.status, first.stderr).toBe(0);
    expect(readdirSync(out)).toContain('1-hash.head.folded');
    writeFileSync(join(out, 'my-notes.txt'), 'mine');
    const second = await cli([...base, ...common, '--url', '/static'], dir);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/hotpath: removed \d+ files of an earlier run from /);
    const names = readdirSync(out).sort();
    expect(names.filter((n) => n.startsWith('1-') || n.startsWith('2-'))).toEqual([]);
    expect(names).toContain('my-notes.txt');
    expect(names).toContain('head.folded');
    expect(names).toContain('report.json');
    const manifest = JSON.parse(readFileSync(join(out, '.hotpath-files.json'), 'utf8'));
    expect(manifest.files).not.toContain('my-notes.txt');
    expect(manifest.files).toContain('report.json');
  });

  it("leaves hotpath's probe and node:inspector out of the hot functions of a real low-load run", async () => {
    const out = join(dir, 'low-load');
    const r = await cli([
      'compare',
      '--base-start',
      SERVER,
      '--head-start',
      SERVER,
      '--url',
      '/static',
      '-R',
      '20',
      '-c',
      '1',
      '-d',
      '1.5',
      '-W',
      '0.2',
      '-r',
      '2',
      '--profiler',
      'cpuprofile',
      '--quiet',
      '--out',
      out,
      '--json',
    ]);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    const hot = report.scenarios[0].hotFunctions.rows as {
      name: string;
      file: string;
      caller?: { file: string };
    }[];
    expect(hot.length).toBeGreaterThan(0);
    for (const row of hot) {
      expect(row.file).not.toMatch(/probe\.cjs|hotpath:probe|^node:inspector/);
      expect(row.caller?.file ?? '').not.toMatch(/probe\.cjs|hotpath:probe|^node:inspector/);
    }
    // The frames were there: the folded stacks (all samples) still carry the probe's.
    expect(readFileSync(join(out, 'head.folded'), 'utf8')).toMatch(/hotpath:probe|node:inspector/);
  });
});

describe('hotpath init in an Express-like project (stdin not a terminal)', () => {
  let project: string;
  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'hotpath-init-'));
    writeFileSync(
      join(project, 'package.json'),
      `${JSON.stringify({ name: 'shop', scripts: { start: 'node server.js' }, dependencies: { express: '^4.19.0' } }, null, 4)}\n`,
    );
    writeFileSync(join(project, 'pnpm-lock.yaml'), "lockfileVersion: '9.0'\n");
    writeFileSync(
      join(project, 'server.js'),
      [
        "const express = require('express');",
        'const app = express();',
        "app.get('/users', (req, res) => res.json([]));",
        "app.get('/users/:id', (req, res) => res.json({}));",
        "app.post('/login', (req, res) => res.end());",
        'app.get("/health", (req, res) => res.end("ok"));',
        'app.listen(Number(process.env.APP_PORT || 3000));',
        '',
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  const init = (args: string[] = []) =>
    spawnSync(process.execPath, [CLI_BIN, 'init', '--no-install', ...args], {
      cwd: project,
      encoding: 'utf8',
      input: '',
      timeout: 60_000,
    });

  it('writes the config, both workflows and the devDependency, and prints the next command', () => {
    const r = init();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('hotpath init: package manager: pnpm (pnpm-lock.yaml)');
    expect(r.stderr).toContain('hotpath init: framework: express');
    expect(r.stderr).toContain("the server reads $APP_PORT, set from hotpath's $PORT");
    expect(r.stdout).toMatch(/^Next: pnpm hotpath compare/);
    const config = JSON.parse(readFileSync(join(project, 'hotpath.config.json'), 'utf8'));
    expect(config.start).toBe('APP_PORT=$PORT node server.js');
    expect(config.scenarios).toEqual([
      { name: '/users', url: '/users' },
      { name: '/health', url: '/health' },
    ]);
    expect(config.rounds).toBeUndefined();
    const measureYml = readFileSync(join(project, '.github/workflows/hotpath.yml'), 'utf8');
    expect(measureYml).toMatch(/^on:\n {2}pull_request:\n/m);
    expect(measureYml).toContain('mode: measure');
    expect(measureYml).toContain('persist-credentials: false');
    expect(measureYml).not.toContain('pull-requests: write');
    const reportYml = readFileSync(join(project, '.github/workflows/hotpath-report.yml'), 'utf8');
    expect(reportYml).toMatch(/workflow_run:\n {4}workflows: \[hotpath\]/);
    expect(reportYml).toContain('mode: report');
    const pkg = readFileSync(join(project, 'package.json'), 'utf8');
    expect(JSON.parse(pkg).devDependencies['@hotpath/compare']).toMatch(/^\^\d+\.\d+\.\d+/);
    expect(pkg).toMatch(/^ {4}"devDependencies"/m); // the project's 4-space indent is kept
  });

  it('the written config is one hotpath compare accepts', () => {
    const r = spawnSync(process.execPath, [CLI_BIN, 'schema'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const config = JSON.parse(readFileSync(join(project, 'hotpath.config.json'), 'utf8'));
    const schema = JSON.parse(r.stdout);
    for (const key of Object.keys(config)) expect(Object.keys(schema.properties)).toContain(key);
  });

  it('a second run overwrites nothing without --force', () => {
    writeFileSync(join(project, 'hotpath.config.json'), '{"start": "node mine.js"}\n');
    const r = init();
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('kept hotpath.config.json (it exists; --force overwrites it)');
    expect(readFileSync(join(project, 'hotpath.config.json'), 'utf8')).toBe('{"start": "node mine.js"}\n');
    const forced = init(['--force', '--url', '/health']);
    expect(forced.status).toBe(0);
    expect(JSON.parse(readFileSync(join(project, 'hotpath.config.json'), 'utf8')).scenarios).toEqual([
      { name: '/health', url: '/health' },
    ]);
  });

  it("--slo writes the SLO every scenario's capacity is searched at; a bad one exits 2 and writes nothing", () => {
    const forced = init(['--force', '--url', '/users', '--slo', 'p99 <= 0.05s']);
    expect(forced.status, forced.stderr).toBe(0);
    const config = JSON.parse(readFileSync(join(project, 'hotpath.config.json'), 'utf8'));
    expect(config.slo).toBe('p99<=50ms,errors<=1%');
    expect(config.scenarios).toEqual([{ name: '/users', url: '/users' }]);
    const before = readFileSync(join(project, 'hotpath.config.json'), 'utf8');
    const bad = init(['--force', '--slo', 'fast']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(
      'hotpath: invalid --slo "fast": expected an SLO such as p99<=50ms,errors<=1% (p50, p90, p99 in ms or s; errors in percent), or none\n',
    );
    expect(readFileSync(join(project, 'hotpath.config.json'), 'utf8')).toBe(before);
    // stdin not a terminal and no --slo: no SLO, as before
    expect(init(['--force']).status).toBe(0);
    expect(JSON.parse(readFileSync(join(project, 'hotpath.config.json'), 'utf8')).slo).toBeUndefined();
  });

  it('as `npm init -y` leaves a project: "main" is the start, process.env.PORT is found, a :param route is named', () => {
    const app = mkdtempSync(join(tmpdir(), 'hotpath-init-npm-'));
    try {
      writeFileSync(
        join(app, 'package.json'),
        `${JSON.stringify({ name: 'app', version: '1.0.0', main: 'index.js', scripts: { test: 'exit 1' }, dependencies: { express: '^5.1.0' } }, null, 2)}\n`,
      );
      writeFileSync(join(app, 'package-lock.json'), '{"lockfileVersion": 3}\n');
      writeFileSync(
        join(app, 'index.js'),
        [
          "const app = require('express')();",
          'const port = process.env.PORT || 3000;',
          "app.get('/', (req, res) => res.send('hello'));",
          "app.get('/users/:id', (req, res) => res.json({}));",
          "app.get('/token', (req, res) => res.json({}));",
          'app.listen(port);',
          '',
        ].join('\n'),
      );
      const r = spawnSync(process.execPath, [CLI_BIN, 'init', '--no-install'], {
        cwd: app,
        encoding: 'utf8',
        input: '',
        timeout: 60_000,
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain('hotpath init: package manager: npm (package-lock.json)');
      expect(r.stderr).toContain('hotpath init: start: node index.js (from package.json "main")');
      expect(r.stderr).toContain('hotpath init: port: the server reads $PORT\n');
      expect(r.stderr).toContain(
        'hotpath init: GET routes found: 3 (registered in 1 file, mounted routers followed)\n',
      );
      // The application's own route first, the root after it; the parameter's placeholder named.
      expect(r.stderr).toContain('hotpath init: routes written: /token, /\n');
      expect(r.stderr).toContain(
        'hotpath init: left out: /users/:id — a path parameter: add a scenario with a real value, url "/users/<id>"\n',
      );
      expect(r.stdout).toMatch(/^Next: npx hotpath compare/);
      const config = JSON.parse(readFileSync(join(app, 'hotpath.config.json'), 'utf8'));
      expect(config.start).toBe('node index.js');
      expect(config.scenarios.map((s: { url: string }) => s.url)).toEqual(['/token', '/']);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('in a fresh repository on main: next is --base HEAD~1, and .gitignore gets hotpath-report/ once', () => {
    // The first hour's repository: two commits on main, no remote. The merge-base with the default
    // branch is HEAD itself, so `hotpath compare` alone would compare HEAD with the working tree.
    const { dir: app } = makeRepo(
      mkdtempSync(join(tmpdir(), 'hotpath-init-git-')),
      {
        'package.json': `${JSON.stringify({ name: 'app', scripts: { start: 'node index.js' } }, null, 2)}\n`,
        'index.js': "require('node:http').createServer((q, s) => s.end('ok')).listen(process.env.PORT);\n",
        '.gitignore': 'node_modules',
      },
      { 'index.js': "require('node:http').createServer((q, s) => s.end('ok!')).listen(process.env.PORT);\n" },
    );
    try {
      const run = () =>
        spawnSync(process.execPath, [CLI_BIN, 'init', '--no-install'], {
          cwd: app,
          encoding: 'utf8',
          input: '',
          timeout: 60_000,
        });
      const r = run();
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(
        /^Next: npx hotpath compare --base HEAD~1 +# measures your working tree against the commit before HEAD\n/,
      );
      expect(r.stderr).toContain('hotpath init: added hotpath-report/ (where runs write) to .gitignore');
      expect(readFileSync(join(app, '.gitignore'), 'utf8')).toBe('node_modules\nhotpath-report/\n');
      const again = run();
      expect(again.stderr).not.toContain('.gitignore');
      expect(readFileSync(join(app, '.gitignore'), 'utf8')).toBe('node_modules\nhotpath-report/\n');
      // On a feature branch the merge-base is an older commit: the default comparison is right.
      execFileSync('git', ['checkout', '-q', '-b', 'feature', 'HEAD~1'], { cwd: app });
      execFileSync(
        'git',
        ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'f'],
        { cwd: app },
      );
      expect(run().stdout).toMatch(
        /^Next: npx hotpath compare +# measures your working tree against the default branch's merge-base\n/,
      );
    } finally {
      rmSync(dirname(app), { recursive: true, force: true });
    }
  });

  it('with no start command to be found asks for --start (exit 2, one line)', () => {
    const empty = mkdtempSync(join(tmpdir(), 'hotpath-init-empty-'));
    try {
      const r = spawnSync(process.execPath, [CLI_BIN, 'init', '--no-install'], {
        cwd: empty,
        encoding: 'utf8',
        input: '',
      });
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n').at(-1)).toMatch(
        /^hotpath: no start command found in .*: pass --start CMD$/,
      );
      expect(existsSync(join(empty, 'hotpath.config.json'))).toBe(false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('the "Reproduce locally" command', () => {
  it('run as written, repeats the run with the same settings', async () => {
    const { reproduceCommand } = await import('../src/render/reproduce.js');
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-reproduce-'));
    try {
      const first = await cli(
        [
          'compare',
          '--base-start',
          SERVER,
          '--head-start',
          `HASH_ITERATIONS=100 ${SERVER}`,
          '--url',
          '/hash?user=a',
          '-c',
          '1',
          '-d',
          '0.4',
          '-W',
          '0',
          '-r',
          '1',
          '--profiler',
          'none',
          '--threshold',
          '50',
          '--metrics',
          'requestsPerSecond,p99',
          '-q',
          '--json',
        ],
        dir,
      );
      expect(first.status, first.stderr).toBe(0);
      const report = JSON.parse(first.stdout);
      const again = reproduceCommand(report);
      expect(again.missing).toEqual([]);
      expect(again.command).toMatch(/^npx -p @hotpath\/compare hotpath compare /);
      // What a user pastes, with the locally built bin standing in for npx.
      const local = again.command.replace(
        'npx -p @hotpath/compare hotpath',
        `node ${JSON.stringify(CLI_BIN)}`,
      );
      const second = spawnSync('/bin/sh', ['-c', `${local} -q --json`], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 180_000,
      });
      expect(second.status, second.stderr).toBe(0);
      const repeated = JSON.parse(second.stdout);
      expect(repeated.settings).toEqual(report.settings);
      const withConfig = reproduceCommand(report, {
        config: 'ci/hotpath config.json',
        base: 'abc123',
        head: 'def456',
      });
      expect(withConfig.command).toBe(
        "npx -p @hotpath/compare hotpath compare --base abc123 --head def456 --config 'ci/hotpath config.json'",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
