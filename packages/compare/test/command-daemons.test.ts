// Issue #67: commands run to completion (install, build, setupCommand, the config child, the
// profiler's install) left a daemon behind when it was orphaned in the command's last moments:
// `(setsid env -i bash -c 'exec -a probe sleep 30' &); true` exits 0 within a few ms, before any
// walk of the tree, the sleeper carries no marker (env -i) and is in no group of ours (setsid),
// and the shell — the subreaper — was gone, so the sleeper went to init. The subreaper now
// outlives the shell of a command run to completion, and the stop finds what it adopted.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { prepareCheckout } from '../src/measure/checkout.js';
import { runCommand } from '../src/measure/process-group.js';
import { SUBREAPER } from '../src/measure/process-tree.js';

const linux = existsSync('/proc/self/stat');
const dir = mkdtempSync(`${tmpdir()}/hotpath-daemons-`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Pids whose command line starts with `name` (the `exec -a` name). */
function named(name: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0')[0] === name) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

/** The daemon of the issue under a name of this test's own; any survivor is killed after the test. */
function escapingDaemon(): { name: string; command: string } {
  const name = `hotpath-probe-${randomUUID().slice(0, 8)}`;
  onTestFinished(() => {
    for (const pid of named(name)) process.kill(pid, 'SIGKILL');
  });
  return { name, command: `(setsid env -i bash -c 'exec -a ${name} sleep 30' &); true` };
}

describe.skipIf(!linux || !SUBREAPER)('a daemon that escapes a command run to completion', () => {
  it('runCommand resolves with the shell’s exit and leaves no sleeper behind', async () => {
    const { name, command } = escapingDaemon();
    const { exit } = await runCommand(command, { cwd: dir, env: process.env });
    expect(exit).toEqual({ code: 0, signal: null });
    expect(named(name)).toEqual([]);
  });

  it('as a build command (prepareCheckout), it leaves no sleeper behind', async () => {
    const { name, command } = escapingDaemon();
    await prepareCheckout('head', [{ label: 'build', command, cwd: dir }], process.env);
    expect(named(name)).toEqual([]);
  });

  it('the shell’s own status is what the command returns: a code, a signal, a missing command', async () => {
    expect((await runCommand('exit 7', { cwd: dir, env: process.env })).exit).toEqual({
      code: 7,
      signal: null,
    });
    expect((await runCommand('kill -TERM $$', { cwd: dir, env: process.env })).exit).toEqual({
      code: null,
      signal: 'SIGTERM',
    });
    const missing = await runCommand('no-such-command-hotpath', { cwd: dir, env: process.env });
    expect(missing.exit.code).toBe(127);
    // The status channel is closed in the command: it cannot report a status of its own.
    const forged = await runCommand('echo "exit 0" >&3; exit 3', { cwd: dir, env: process.env });
    expect(forged.exit).toEqual({ code: 3, signal: null });
  });

  it('a command that runs past its timeout is stopped, its daemon too', async () => {
    const { name } = escapingDaemon();
    const { exit } = await runCommand(`(setsid env -i bash -c 'exec -a ${name} sleep 30' &); sleep 30`, {
      cwd: dir,
      env: process.env,
      timeoutMs: 500,
    });
    expect(exit.signal).toBe('SIGKILL');
    expect(named(name)).toEqual([]);
  });
});
