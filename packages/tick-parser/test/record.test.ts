import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { findOnPath } from '../src/record-plan.js';
import { defined } from './helpers/defined.js';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'hotpath-record-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An HTTP server with a hot function; it ends by itself after RUN_MS with EXIT_CODE. */
const SERVER = `const http = require('node:http');
function squareRoots(n) { let x = 0; for (let i = 0; i < n; i++) x += Math.sqrt(i); return x; }
function handle(req, res) { res.end(String(squareRoots(300000))); }
const server = http.createServer(handle);
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
if (process.env.RUN_MS) setTimeout(() => server.close(() => process.exit(Number(process.env.EXIT_CODE))), Number(process.env.RUN_MS)).unref();
`;

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

interface Recorded {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `hotpath-ticks record …` in `cwd`; `port` resolves once the server listens. */
function record(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [cli, 'record', ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stdout = '';
  let stderr = '';
  const port = new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /port (\d+)/.exec(stdout);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', () => reject(new Error(`exited before listening: ${stdout} ${stderr}`)));
  });
  port.catch(() => undefined);
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<Recorded>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, port, done };
}

function get(port: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', () => resolve());
    req.end();
  });
}

async function load(port: number, requests: number): Promise<void> {
  for (let i = 0; i < requests; i++) await get(port);
}

function expectOutputs(out: string, totalTicks: number): void {
  const files = readdirSync(out);
  expect(files.filter((f) => /^isolate-0x[0-9a-f]+-\d+-v8\.log$/.test(f))).toHaveLength(1);
  for (const f of ['profile.folded', 'flamegraph.html', 'profile.speedscope.json'])
    expect(files).toContain(f);
  const folded = readFileSync(join(out, 'profile.folded'), 'utf8').trim().split('\n');
  expect(folded.reduce((n, line) => n + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)).toBe(totalTicks);
  expect(folded.some((line) => line.includes('squareRoots'))).toBe(true);
  expect(readFileSync(join(out, 'flamegraph.html'), 'utf8')).toMatch(/^<!doctype html>[\s\S]*squareRoots/);
  const speedscope = JSON.parse(readFileSync(join(out, 'profile.speedscope.json'), 'utf8'));
  expect(speedscope.profiles[0].weights.reduce((a: number, b: number) => a + b, 0)).toBe(totalTicks);
}

describe('hotpath-ticks record', () => {
  it('profiles `node server.js` until SIGINT, passes the signal on and its exit status through', async () => {
    const cwd = mkdtempSync(join(dir, 'node-'));
    writeFileSync(join(cwd, 'server.js'), SERVER);
    const run = record(cwd, ['--out', 'prof', '--json', '--', 'node', 'server.js']);
    await load(await run.port, 60);
    run.child.kill('SIGINT'); // to the recorder only: it must pass the signal on
    const { code, stdout, stderr } = await run.done;
    expect(code).toBe(130); // the server ended by SIGINT: 128 + 2, as a shell reports it
    const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
    const hot = report.functions.find((f: { name: string }) => f.name === 'squareRoots');
    expect(hot.file).toBe(join(cwd, 'server.js'));
    expect(hot.self).toBeGreaterThan(0);
    expect(stderr).toMatch(
      /hotpath-ticks: \d+ ticks from isolate-0x[0-9a-f]+-\d+-v8\.log; written to prof\//,
    );
    expectOutputs(join(cwd, 'prof'), report.ticks.total);
    expect(readFileSync(join(cwd, 'prof', 'report.json'), 'utf8')).toBe(stdout.slice(stdout.indexOf('{')));
  });

  it.skipIf(!findOnPath('npm', process.env.PATH))(
    'profiles the node process of `npm start` (not npm itself), and passes SIGTERM to the whole command',
    async () => {
      const cwd = mkdtempSync(join(dir, 'npm-'));
      writeFileSync(join(cwd, 'server.js'), SERVER);
      writeFileSync(
        join(cwd, 'package.json'),
        JSON.stringify({
          name: 'app',
          version: '1.0.0',
          private: true,
          scripts: { start: 'node server.js' },
        }),
      );
      const run = record(cwd, ['--out', 'prof', '--top', '5', '--', 'npm', 'start']);
      await load(await run.port, 40);
      run.child.kill('SIGTERM');
      const { code, stdout } = await run.done;
      expect(code).not.toBe(0); // npm and the server ended by SIGTERM
      expect(stdout).toMatch(/^Statistical profiling result from isolate-0x[0-9a-f]+-\d+-v8\.log/m);
      expect(stdout).toMatch(/squareRoots .*server\.js:2:/);
      const total = Number(/\((\d+) ticks/.exec(stdout)?.[1]);
      expectOutputs(join(cwd, 'prof'), total); // one log: npm's own node ran unprofiled
      expect(readFileSync(join(cwd, 'prof', 'report.txt'), 'utf8')).toBe(
        stdout.slice(stdout.indexOf('Statistical profiling result')),
      );
    },
    60_000,
  );

  it.skipIf(!findOnPath('npm', process.env.PATH))(
    'passes the exit code of an `npm start` whose server stops by itself',
    async () => {
      const cwd = mkdtempSync(join(dir, 'npm-exit-'));
      writeFileSync(join(cwd, 'server.js'), SERVER);
      writeFileSync(
        join(cwd, 'package.json'),
        JSON.stringify({
          name: 'app',
          version: '1.0.0',
          private: true,
          scripts: { start: 'node server.js' },
        }),
      );
      const run = record(cwd, ['--', 'npm', 'start'], { RUN_MS: '1500', EXIT_CODE: '7' });
      await load(await run.port, 20);
      const { code, stderr } = await run.done;
      expect(code).toBe(7);
      const out = defined(
        /written to (\.hotpath-ticks\/[^/]+)\//.exec(stderr)?.[1],
        `the output folder in: ${stderr}`,
      );
      expect(existsSync(join(cwd, out, 'flamegraph.html'))).toBe(true);
    },
    60_000,
  );

  it('says HP_TICKS_NO_LOG when the command runs no node, and keeps its failing exit code', async () => {
    const cwd = mkdtempSync(join(dir, 'none-'));
    const ok = await record(cwd, ['--out', 'o', '--', 'sh', '-c', 'exit 0']).done;
    expect(ok.code).toBe(1);
    expect(ok.stderr.trim().split('\n')).toHaveLength(1);
    expect(ok.stderr).toMatch(
      /"sh -c exit 0" exited with 0 and wrote no V8 tick log into o \(Node does not accept --prof in NODE_OPTIONS/,
    );
    const failed = await record(cwd, ['--out', 'o', '--', 'sh', '-c', 'exit 5']).done;
    expect(failed.code).toBe(5);
    // A log of an earlier run in the same directory is not taken for this run's.
    writeFileSync(
      join(cwd, 'o', 'isolate-0x1-1-v8.log'),
      'v8-version,11,3,244,8,-node.38,0\ntick,0x1,1,0,0x0,0\n',
    );
    const again = await record(cwd, ['--out', 'o', '--', 'sh', '-c', 'exit 0']).done;
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/wrote no V8 tick log/);
  });

  it('refuses a command that cannot start, and bad usage, in one line', async () => {
    const cwd = mkdtempSync(join(dir, 'bad-'));
    const missing = await record(cwd, ['--', '/nonexistent/bin/server']).done;
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^hotpath-ticks: cannot start "\/nonexistent\/bin\/server" \(ENOENT\)/);
    for (const args of [
      [],
      ['node', 'app.js'],
      ['--top', '0', '--', 'node', 'x.js'],
      ['--bogus', '--', 'node'],
    ]) {
      const bad = await record(cwd, args).done;
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toMatch(/^hotpath-ticks: /);
    }
  });
});

describe('the node put on PATH for launchers', () => {
  it('adds --prof for scripts and leaves npm, npx, pnpm and yarn unprofiled', async () => {
    const { nodeShim } = await import('../src/record-plan.js');
    const shimDir = mkdtempSync(join(dir, 'shim-'));
    const fakeNode = join(shimDir, 'fake-node');
    writeFileSync(fakeNode, '#!/bin/sh\necho "$@"\n', { mode: 0o755 });
    writeFileSync(join(shimDir, 'node'), nodeShim(fakeNode, "/out/it's"), { mode: 0o755 });
    const run = (...args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(join(shimDir, 'node'), args, (e, out) => (e ? reject(e) : resolve(out.trim()))),
      );
    expect(await run('server.js', '--port', '1')).toBe(
      "--prof --logfile=/out/it's/v8.log server.js --port 1",
    );
    expect(await run('/usr/lib/node_modules/npm/bin/npm-cli.js', 'start')).toBe(
      '/usr/lib/node_modules/npm/bin/npm-cli.js start',
    );
    expect(await run('/usr/bin/npx', 'x')).toBe('/usr/bin/npx x');
    expect(await run('/opt/pnpm/bin/pnpm.cjs')).toBe('/opt/pnpm/bin/pnpm.cjs');
  });
});
