import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listenersOf, listeningSockets, liveness, processEntry } from '../src/measure/process-table.js';
import { freePort, waitUntilReady } from '../src/measure/readiness.js';

const linux = existsSync('/proc/self/stat');
const SERVER = `require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')`;

/** Starts `node -e SERVER` as the child of a shell, the way a start command runs. */
async function startServer(): Promise<{ shell: number; node: number; port: number }> {
  const port = await freePort();
  const shell = spawn('/bin/sh', ['-c', `node -e "${SERVER}"`], {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, PORT: String(port) },
  });
  const exited = new Promise((resolve) => shell.once('exit', resolve));
  expect((await waitUntilReady(port, exited, 10_000)).state).toBe('ready');
  const pid = shell.pid ?? -1;
  const listening = listenersOf(port);
  expect(listening).toHaveLength(1);
  return { shell: pid, node: listening[0] ?? -1, port };
}

describe.skipIf(!linux)('process liveness (Linux /proc)', () => {
  it('reads pid, parent, group and start time from /proc/<pid>/stat', () => {
    const self = processEntry(process.pid);
    expect(self?.pid).toBe(process.pid);
    expect(self?.ppid).toBe(process.ppid);
    expect(self?.state).toMatch(/^[RS]$/);
    expect(self?.startTime).toBeGreaterThan(0);
    expect(liveness(process.pid)).toBe('alive');
    expect(liveness(process.pid, (self?.startTime ?? 0) + 1)).toBe('gone');
  });

  it('finds the process that listens on a port, and no one once it has stopped', async () => {
    const { shell, node, port } = await startServer();
    expect(processEntry(node)?.ppid).toBe(shell);
    process.kill(-shell, 'SIGKILL');
    while (liveness(node) !== 'gone') await new Promise((resolve) => setTimeout(resolve, 5));
    expect(listenersOf(port)).toEqual([]);
  });

  // A SIGTERMed node server's main thread turns zombie (Z) while its other threads are still
  // ending and still hold the listening socket: a stop that trusted the main thread's state
  // reported a server stopped whose port still accepted (issue #25, 25 of 40 kills here).
  it('calls a process gone only once its listening socket is closed, over 20 SIGTERMs', async () => {
    let zombieWithThreads = 0;
    for (let i = 0; i < 20; i++) {
      const { shell, node, port } = await startServer();
      // The server's own socket (its inode): another process that later listens on the same
      // port, or a connect that meets itself, is not mistaken for it.
      const own = listeningSockets(port);
      expect(own.size).toBe(1);
      process.kill(-shell, 'SIGTERM');
      for (;;) {
        const state = liveness(node);
        if (state === 'exiting') zombieWithThreads++;
        if (state === 'gone') break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Look at once (two small files): with the main thread's state alone, the socket is still
      // listed here on the first kill or so.
      const left = [...listeningSockets(port)].filter((inode) => own.has(inode));
      expect(
        left,
        `kill ${i + 1}: gone, yet its socket ${[...own].join()} on port ${port} still listens`,
      ).toEqual([]);
    }
    // How often the main thread was a zombie with threads still running (not asserted: timing).
    console.log(`liveness: 'exiting' seen in ${zombieWithThreads} polls over 20 SIGTERMs`);
  });
});
