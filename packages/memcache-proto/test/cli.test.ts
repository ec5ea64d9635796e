import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCliArgs, parseSize } from '../src/cli-options.js';
import { exchange, freePort } from './helpers.js';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('hotpath-memcached CLI', () => {
  it('parses memcached flags', () => {
    const action = parseCliArgs([
      '-p',
      '0',
      '-m',
      '16',
      '-c',
      '10',
      '-I',
      '2m',
      '-U',
      '0',
      '-vv',
      '-o',
      'idle_timeout=5',
    ]);
    expect(action).toEqual({
      kind: 'serve',
      warnings: [],
      options: {
        port: 0,
        memoryMb: 16,
        maxConnections: 10,
        itemSizeMax: 2 * 1024 * 1024,
        idleTimeoutSeconds: 5,
        verbosity: 2,
      },
      process: { daemon: false, pidFile: undefined, user: undefined },
    });
    expect(parseSize('-I', '512k')).toBe(524288);
    const open = parseCliArgs(['-l', '0.0.0.0']);
    expect(open.kind === 'serve' && open.warnings[0]).toMatch(/all interfaces/);
  });

  it.each([
    [['-p', 'abc'], /-p: "abc" is not an integer from 0 to 65535/],
    [['-U', '11211'], /-U: "11211" is not 0/],
    [['-I', '5x'], /-I: "5x" is not a size/],
    [['--nope'], /^hotpath-memcached: unknown option --nope \(see --help\)$/m],
  ])('exits 2 (bad usage) with one readable line for %j', async (args, message) => {
    const { code, stderr } = await run(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).not.toMatch(/\s+at /);
  });

  it('prints usage for --help', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/Usage: hotpath-memcached/);
    expect(stdout).toMatch(/-Y, --auth-file/);
  });

  it('warns on stderr when told to listen on all interfaces', async () => {
    const child = spawn(process.execPath, [cli, '-p', '0', '-l', '0.0.0.0', '-v'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (d) => {
        stderr += d;
        if (stderr.includes('listening')) resolve();
      }),
    );
    expect(stderr).toMatch(/warning: listening on all interfaces \(0\.0\.0\.0\)/);
    child.kill('SIGTERM');
  });

  it('serves on the given port and shuts down cleanly on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [cli, '-p', String(port), '-v'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (d) => String(d).includes('listening') && resolve()),
    );
    expect(await exchange(port, 'set a 0 0 1\r\nx\r\nget a\r\n')).toBe(
      'STORED\r\nVALUE a 0 1\r\nx\r\nEND\r\nMN\r\n',
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
