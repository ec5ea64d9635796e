// Issue #46: a daemon that clears its environment (no HOTPATH_PROCESS_GROUP marker) and leaves
// the session at once — started by a helper that exits before the first walk of the tree —
// survived the cleanup. The command's shell is now a child subreaper (Linux), so the orphan is
// re-parented into the tree instead of to init, and the stop finds it.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { probePath } from '../src/measure/probe-path.js';
import { spawnInGroup, stopFailed, stopGroup } from '../src/measure/process-group.js';
import { liveness, processEntry } from '../src/measure/process-table.js';
import { freePort, waitUntilReady } from '../src/measure/readiness.js';
import { runRound } from '../src/measure/round.js';
import { resolveSettings } from '../src/settings/schema.js';
import { levelled } from './helpers/levelled.js';

const linux = existsSync('/proc/self/stat');
const alive = (pid: number) => liveness(pid) !== 'gone';

/** The daemon: writes its pid, then runs until killed (SIGTERM ignored: only SIGKILL ends it). */
const DAEMON = `require('node:fs').writeFileSync(require('node:path').join(__dirname, 'daemon.pid'), String(process.pid));
process.on('SIGTERM', () => {});
setInterval(() => {}, 1000);
`;
/** Starts the daemon in its own session with an empty environment, and exits at once. */
const HELPER = `const { spawn } = require('node:child_process');
spawn(process.execPath, [require('node:path').join(__dirname, 'daemon.cjs')], { detached: true, env: {}, stdio: 'ignore' }).unref();
`;
const LISTEN = `require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');`;
/** The server: forks the daemon through the helper (a double fork) as its first act, then listens. */
const SERVER_DOUBLE_FORK = `require('node:child_process').spawn(process.execPath, [require('node:path').join(__dirname, 'helper.cjs')], { env: {}, stdio: 'ignore' });
${LISTEN}`;
/** The server: starts the daemon itself (setsid, empty environment) as its first act, then listens. */
const SERVER_DIRECT = `${HELPER}${LISTEN}`;

describe.skipIf(!linux)('a daemon that clears its environment and calls setsid at once (issue #46)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-escape-'));
    writeFileSync(join(dir, 'daemon.cjs'), DAEMON);
    writeFileSync(join(dir, 'helper.cjs'), HELPER);
    writeFileSync(join(dir, 'double-fork.cjs'), SERVER_DOUBLE_FORK);
    writeFileSync(join(dir, 'direct.cjs'), SERVER_DIRECT);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The daemon's pid once it has written it; a failing test still ends it, by that pid. */
  async function daemonPid(): Promise<number> {
    const file = join(dir, 'daemon.pid');
    // The file exists, empty, between the daemon's open and its write: read until it holds a pid
    // (an empty read once took pid 0, and /proc/0/environ, in a CI rehearsal).
    const written = () => (existsSync(file) ? Number(readFileSync(file, 'utf8')) : 0);
    let pid = written();
    for (let i = 0; i < 400 && !(pid > 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      pid = written();
    }
    expect(pid, `the daemon's pid in ${file}`).toBeGreaterThan(0);
    rmSync(file);
    onTestFinished(() => {
      if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    });
    return pid;
  }

  it.each([
    ['through a helper that exits at once (double fork)', 'double-fork.cjs'],
    ['as the server’s own child', 'direct.cjs'],
  ])('stopGroup ends it when the server starts it %s', async (_, script) => {
    const port = await freePort();
    const proc = spawnInGroup(`node ${script}`, { cwd: dir, env: { ...process.env, PORT: String(port) } });
    onTestFinished(() => {
      if (proc.exit() === null) process.kill(-proc.pid, 'SIGKILL');
    });
    expect((await waitUntilReady(port, proc.exited, 10_000)).state).toBe('ready');
    const daemon = await daemonPid();
    // It left the group and the session and carries no marker …
    const entry = processEntry(daemon);
    expect(entry?.pgid).not.toBe(proc.pid);
    expect(readFileSync(`/proc/${daemon}/environ`, 'latin1')).not.toContain('HOTPATH_PROCESS_GROUP');
    // … and still it is in the tree: its helper's orphan went to the command's subreaper.
    expect(entry?.ppid === proc.pid || processEntry(entry?.ppid ?? -1)?.ppid === proc.pid).toBe(true);
    const stop = await stopGroup(proc, 500, { port });
    expect(stopFailed(stop), JSON.stringify(stop)).toBe(false);
    expect(alive(daemon)).toBe(false);
  });

  it('a round of a server that double-forks such a daemon at start leaves no daemon behind', async () => {
    const settings = levelled(
      resolveSettings({
        overrides: {
          start: 'x',
          duration: '0.5',
          warmup: '0',
          connections: '2',
          rounds: '1',
          readyTimeout: '10',
          profiler: 'none',
        },
      }),
    );
    const result = await runRound({ side: 'head', command: 'node double-fork.cjs', cwd: dir }, 1, settings, {
      probePath: probePath(),
      env: process.env,
    });
    expect(result.scenarios[0]?.load.requests.total).toBeGreaterThan(0);
    const daemon = await daemonPid();
    expect(daemon).toBeGreaterThan(0);
    expect(alive(daemon)).toBe(false);
  });

  it('a command whose shell is a subreaper still runs it with its own environment and exit code', async () => {
    const proc = spawnInGroup('printf "%s" "$PERL_BADLANG"; exit 7', {
      cwd: dir,
      env: { PATH: process.env.PATH },
    });
    expect(await proc.exited).toEqual({ code: 7, signal: null });
    expect(proc.output.last()).toEqual([]);
    const kept = spawnInGroup('printf "%s" "$PERL_BADLANG"', {
      cwd: dir,
      env: { PATH: process.env.PATH, PERL_BADLANG: 'mine' },
    });
    expect(await kept.exited).toEqual({ code: 0, signal: null });
    expect(kept.output.last()).toEqual(['mine']);
  });
});
