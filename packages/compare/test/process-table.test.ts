import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  STOP_PORT_WAIT_MS,
  spawnInGroup,
  stopFailed,
  stopGroup,
  survivorsError,
} from '../src/measure/process-group.js';
import {
  listenersOf,
  listeningSockets,
  liveness,
  ownSockets,
  processEntry,
} from '../src/measure/process-table.js';
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
  // reported a server stopped whose port still accepted (issue #25, 25 of 40 kills here). And
  // once every thread has ended, the kernel may still list the socket until the next look, 10–20
  // ms later (17 of 2 600 kills here): so stopGroup waits for the port, bounded by
  // STOP_PORT_WAIT_MS, and this test asserts that bound — and that `gone` leaves the socket
  // listed at most rarely (the main-thread rule left it listed in most kills).
  it('calls a process gone once no thread holds its socket, which then closes within STOP_PORT_WAIT_MS, over 20 SIGTERMs', async () => {
    let zombieWithThreads = 0;
    const listedAtGone: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { shell, node, port } = await startServer();
      // The server's own socket (its inode): another process that later listens on the same
      // port, or a connect that meets itself, is not mistaken for it.
      const own = listeningSockets(port);
      expect(own.size).toBe(1);
      const ownLeft = () => [...listeningSockets(port)].filter((inode) => own.has(inode));
      process.kill(-shell, 'SIGTERM');
      for (;;) {
        const state = liveness(node);
        if (state === 'exiting') zombieWithThreads++;
        if (state === 'gone') break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Look at once (two small files), then for the bound the stop waits.
      const goneAt = performance.now();
      if (ownLeft().length === 0) continue;
      const holders = listenersOf(port);
      let left = ownLeft();
      while (left.length > 0 && performance.now() - goneAt < STOP_PORT_WAIT_MS) {
        await new Promise((resolve) => setTimeout(resolve, 2));
        left = ownLeft();
      }
      const after = (performance.now() - goneAt).toFixed(1);
      listedAtGone.push(`kill ${i + 1}: held by [${holders.join()}], closed after ${after} ms`);
      expect(
        left,
        `kill ${i + 1}: gone, yet its socket ${[...own].join()} on port ${port} still listens`,
      ).toEqual([]);
    }
    // How often the main thread was a zombie with threads still running (not asserted: timing).
    console.log(
      `liveness: 'exiting' seen in ${zombieWithThreads} polls over 20 SIGTERMs; socket listed at 'gone': ${listedAtGone.length ? listedAtGone.join('; ') : 'never'}`,
    );
    expect(listedAtGone.length, listedAtGone.join('; ')).toBeLessThanOrEqual(5);
  });
});

describe.skipIf(!linux)('stopGroup waits for the port (Linux /proc)', () => {
  it('resolves with the port closed when the server stopped, and names a socket that stays open and who holds it', async () => {
    // A tree whose server stops: the port is closed when stopGroup resolves.
    const port = await freePort();
    const proc = spawnInGroup(`node -e "${SERVER}"`, {
      cwd: process.cwd(),
      env: { ...process.env, PORT: String(port) },
    });
    expect((await waitUntilReady(port, proc.exited, 10_000)).state).toBe('ready');
    const stopped = await stopGroup(proc, undefined, { port });
    expect(stopFailed(stopped)).toBe(false);
    expect(listeningSockets(port).size).toBe(0);

    // A listener outside the tree (a stranger the tree handed its port to, or an escaped
    // daemon): the tree's processes end, the port stays open, and the stop says so.
    const other = await startServer();
    const group = spawnInGroup('sleep 30', { cwd: process.cwd(), env: process.env });
    const started = Date.now();
    const left = await stopGroup(group, undefined, { port: other.port });
    try {
      expect(Date.now() - started).toBeGreaterThanOrEqual(STOP_PORT_WAIT_MS);
      expect(left.survivors).toEqual([]);
      expect(left.openSockets).toEqual([...listeningSockets(other.port)]);
      expect(left.holders).toEqual([other.node]);
      expect(stopFailed(left)).toBe(true);
      const error = survivorsError(left, 'base round 1');
      expect(error.code).toBe('HP_COMPARE_STOP_FAILED');
      expect(error.message).toBe(
        `base round 1: port ${other.port} was still listening (${left.openSockets.join(', ')}, held by process ${other.node}) ${STOP_PORT_WAIT_MS} ms after its processes ended`,
      );
    } finally {
      process.kill(-other.shell, 'SIGKILL');
    }
  });

  it('never waits for a socket hotpath itself listens on: it took the port, not the tree', async () => {
    // A drift bench run: the probe control (in hotpath's process) got the port the round had
    // just been given, the server died with EADDRINUSE, and the stop waited for the control's
    // socket, failed with HP_COMPARE_STOP_FAILED and so was not started again on a new port.
    const mine = createServer();
    await new Promise<void>((resolve) => mine.listen(0, '127.0.0.1', resolve));
    const address = mine.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const listening = [...listeningSockets(port)];
      expect(listening).toHaveLength(1);
      expect(ownSockets().has(listening[0] ?? '')).toBe(true);
      const group = spawnInGroup('sleep 30', { cwd: process.cwd(), env: process.env });
      const stopped = await stopGroup(group, undefined, { port });
      expect(stopped).toEqual({ survivors: [], openSockets: [], holders: [] });
      expect(stopFailed(stopped)).toBe(false);
    } finally {
      await new Promise((resolve) => mine.close(resolve));
    }
  });
});
