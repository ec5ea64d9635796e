import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'hotpath-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const log = (hotTicks: number) =>
  [
    'v8-version,11,3,244,8,-node.38,0',
    'code-creation,JS,10,100,0x100000,256,handler /srv/app.js:1:1,0x900000,~',
    'code-creation,JS,10,100,0x200000,256,hash /srv/auth.js:10:3,0x900100,*',
    'code-creation,JS,10,100,0x300000,256,render /srv/view.js:5:1,0x900200,^',
    ...Array(hotTicks).fill('tick,0x200010,1,0,0x0,0,0x100010'),
    ...Array(10 - hotTicks).fill('tick,0x300010,1,0,0x0,0,0x100010'),
    '',
  ].join('\n');

const headLog = join(dir, 'head.log');
const baseLog = join(dir, 'base.log');
const cpuprofile = join(dir, 'app.cpuprofile');

beforeAll(() => {
  writeFileSync(headLog, log(8));
  writeFileSync(baseLog, log(3));
  writeFileSync(
    cpuprofile,
    JSON.stringify({
      startTime: 0,
      endTime: 1,
      nodes: [
        {
          id: 1,
          callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 },
          children: [2],
        },
        { id: 2, callFrame: { functionName: 'loop', url: 'file:///a.js', lineNumber: 4, columnNumber: 0 } },
      ],
      samples: [2, 2, 2],
    }),
  );
});

describe('hotpath-ticks', () => {
  it('prints the --prof-process style report by default', async () => {
    const r = await run(headLog, '--no-symbols');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Statistical profiling result from head\.log, \(10 ticks, 0 unaccounted/);
    expect(r.stdout).toContain('      8   80.0%   80.0%  hash /srv/auth.js:10:3');
    expect(r.stdout).toContain(' [Bottom up (heavy) profile]:');
  });

  it('--json has ticks and functions with self summed over tiers', async () => {
    const r = await run(headLog, '--json', '--top', '2', '--no-symbols');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.ticks).toMatchObject({ total: 10, unaccounted: 0, js: 10, cpp: 0, gc: 0, shared: 0 });
    expect(report.functions).toHaveLength(2);
    expect(report.functions[0]).toMatchObject({
      name: 'hash',
      file: '/srv/auth.js',
      line: 10,
      column: 3,
      kind: 'js',
      self: 8,
      total: 8,
      tiers: ['turbofan'],
    });
  });

  it('--folded and --speedscope', async () => {
    const folded = await run(headLog, '--folded', '--no-symbols');
    expect(folded.stdout).toBe(
      'handler /srv/app.js:1:1;hash /srv/auth.js:10:3 8\nhandler /srv/app.js:1:1;render /srv/view.js:5:1 2\n',
    );
    const speedscope = JSON.parse((await run(headLog, '--speedscope', '--no-symbols')).stdout);
    expect(speedscope.profiles[0].weights).toEqual([8, 2]);
  });

  it('detects a .cpuprofile from its content and writes flame graphs', async () => {
    const svg = join(dir, 'out.svg');
    const html = join(dir, 'out.html');
    const r = await run(cpuprofile, '--flamegraph', svg);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('loop file:///a.js:5:1');
    expect(readFileSync(svg, 'utf8')).toMatch(/^<svg[\s\S]*loop[\s\S]*<\/svg>$/);
    expect((await run(cpuprofile, '--flamegraph', html)).code).toBe(0);
    expect(readFileSync(html, 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('--diff compares head with base by self share, also as JSON and a differential flame graph', async () => {
    const text = await run(headLog, '--diff', baseLog, '--no-symbols');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('base.log (10 ticks) → head.log (10 ticks)');
    expect(text.stdout).toMatch(/ 30\.0% {4}80\.0% {4}\+50\.0% {2}changed {3}hash \/srv\/auth\.js:10/);
    const json = JSON.parse((await run(headLog, '--diff', baseLog, '--json', '--no-symbols')).stdout);
    expect(json.functions.map((f: { name: string }) => f.name)).toEqual(['hash', 'render']);
    const out = join(dir, 'diff.svg');
    expect((await run(headLog, '--diff', baseLog, '--flamegraph', out, '--no-symbols')).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('hsl(0,85%');
  });

  it('--diff matches a real --cpu-prof profile (file:// URLs) with a real --prof log (paths)', async () => {
    const where = mkdtempSync(join(dir, 'formats-'));
    const script = join(where, 'spin.js');
    writeFileSync(
      script,
      'function spin(ms) { let x = 0; const end = Date.now() + ms; while (Date.now() < end) x += Math.sqrt(x + 1); return x; }\nspin(400);\n',
    );
    const node = (args: string[]) =>
      new Promise<void>((resolve, reject) =>
        execFile(process.execPath, args, { cwd: where, timeout: 30_000 }, (e) => (e ? reject(e) : resolve())),
      );
    await node(['--cpu-prof', '--cpu-prof-name', 'spin.cpuprofile', script]);
    await node(['--prof', '--logfile=spin.log', '--no-logfile-per-isolate', script]);
    const cpuprofileJson = JSON.parse(readFileSync(join(where, 'spin.cpuprofile'), 'utf8'));
    const urls = cpuprofileJson.nodes.map((n: { callFrame: { url: string } }) => n.callFrame.url);
    expect(urls).toContain(`file://${script}`);
    const r = await run(
      join(where, 'spin.log'),
      '--diff',
      join(where, 'spin.cpuprofile'),
      '--json',
      '--no-symbols',
    );
    expect(r.code).toBe(0);
    const spin = JSON.parse(r.stdout).functions.filter((f: { name: string }) => f.name === 'spin');
    expect(spin).toHaveLength(1);
    expect(spin[0].status).toBe('changed');
    expect(spin[0].baseSelf).toBeGreaterThan(0);
    expect(spin[0].headSelf).toBeGreaterThan(0);
  });

  it('prints help', async () => {
    const r = await run('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: hotpath-ticks <file>/);
  });

  it.each([
    [['--top', '0', 'x.log'], /--top "0" is not valid: expected a whole number >= 1/],
    [
      ['--flamegraph', 'out.png', 'x.log'],
      /--flamegraph "out\.png" is not valid: expected .*\.svg or \.html/,
    ],
    [['--bogus', 'x.log'], /^hotpath-ticks: unknown option --bogus \(see --help\)$/m],
    [['--json', '--folded', 'x.log'], /--json and --folded cannot be combined/],
    [[], /expected exactly one input file, got none/],
  ])('rejects %j with one readable line and exit 2', async (args, message) => {
    const r = await run(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('prints the package version with --version', async () => {
    const r = await run('--version');
    expect(r.code).toBe(0);
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(r.stdout).toBe(`hotpath-ticks ${version}\n`);
  });

  it('says in one line that a file is neither format, exit 2', async () => {
    const other = join(dir, 'notes.txt');
    writeFileSync(other, 'hello, this is not a profile\n');
    const r = await run(other);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `hotpath-ticks: ${other} is neither a V8 tick log nor a .cpuprofile (it starts with "hello, this is not a profile?"); expected the output of node --prof or node --cpu-prof\n`,
    );
  });

  it('exits 1 with one line when the file cannot be read', async () => {
    const r = await run(join(dir, 'missing.log'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^hotpath-ticks: cannot read .*missing\.log \(ENOENT\)/);
  });
});
