import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { probePath } from '../src/measure/probe-path.js';
import { STOP_BOUND_MS } from '../src/measure/process-group.js';
import { listenersOf, liveness } from '../src/measure/process-table.js';
import { canConnect } from '../src/measure/readiness.js';
import { runRound } from '../src/measure/round.js';
import type { RoundResult } from '../src/model.js';
import { resolveSettings } from '../src/settings/schema.js';
import { defined } from './helpers/defined.js';
import { levelled } from './helpers/levelled.js';

const FIXTURES = new URL('./fixtures/', import.meta.url).pathname;
const firstScenario = (result: RoundResult) => defined(result.scenarios[0], "the round's first scenario");

const settings = (over: Record<string, string> = {}) =>
  levelled(
    resolveSettings({
      overrides: {
        start: 'x',
        duration: '1',
        warmup: '0.3',
        connections: '4',
        rounds: '1',
        readyTimeout: '10',
        ...over,
      },
    }),
  );

/** Something of `pid` is left: running, or a zombie main thread whose other threads still run. */
const alive = (pid: number) => liveness(pid) !== 'gone';

describe('runRound (one server start, every scenario in turn)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-engine-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const context = () => ({ probePath: probePath(), env: process.env });

  it('profiles the server behind `npm start`-style wrappers: the probe activates only in the listener', async () => {
    // sh → node (wrapper that spawns) → node server: only the server process listens.
    writeFileSync(
      join(dir, 'wrapper.cjs'),
      `const { spawn } = require('node:child_process');
const child = spawn(process.execPath, [${JSON.stringify(join(FIXTURES, 'hash-server.cjs'))}], { stdio: 'inherit' });
process.on('SIGTERM', () => child.kill('SIGTERM'));`,
    );
    const result: RoundResult = await runRound(
      { side: 'head', command: `node wrapper.cjs`, cwd: dir },
      1,
      settings({ url: '/auth' }),
      context(),
    );
    expect(firstScenario(result).load.requests.total).toBeGreaterThan(0);
    expect(result.pids).toHaveLength(1);
    expect(firstScenario(result).profilers[0]).toMatch(/^(node:inspector|v8-profiler-next)$/);
    expect(firstScenario(result).profile?.totalTicks).toBeGreaterThan(0);
    expect(firstScenario(result).profile?.functions.some((f) => /pbkdf2/.test(f.name))).toBe(true);
    expect(firstScenario(result).monitors).toHaveLength(1);
    expect(defined(firstScenario(result).monitors[0], 'a monitor summary').heapEnd).toBeGreaterThan(0);
    for (const pid of result.pids) expect(alive(pid)).toBe(false);
  });

  it('gives each cluster worker its own profile and merges them', async () => {
    const result = await runRound(
      { side: 'base', command: `node ${JSON.stringify(join(FIXTURES, 'cluster-server.cjs'))}`, cwd: dir },
      1,
      settings(),
      context(),
    );
    // Two workers, plus the primary: with round-robin scheduling it listens and accepts too.
    expect(new Set(result.pids).size).toBe(3);
    expect(firstScenario(result).monitors).toHaveLength(3);
    expect(firstScenario(result).profile?.functions.length).toBeGreaterThan(0);
    for (const pid of result.pids) expect(alive(pid)).toBe(false);
  });

  it('uses v8-profiler-next when it loads in the server’s Node', async () => {
    const candidates = [
      join(FIXTURES, '../../../../node_modules/.pnpm/node_modules/v8-profiler-next'),
      join(FIXTURES, '../../../tick-parser/node_modules/v8-profiler-next'),
    ];
    const path = candidates.find((p) => existsSync(p));
    if (!path) return; // not installed on this machine: the fallback is covered above
    const result = await runRound(
      { side: 'head', command: `node ${JSON.stringify(join(FIXTURES, 'hash-server.cjs'))}`, cwd: dir },
      1,
      settings({ url: '/auth' }),
      { ...context(), extraEnv: { HOTPATH_V8_PROFILER_PATH: path } },
    );
    expect(firstScenario(result).profilers).toEqual(['v8-profiler-next']);
    expect(firstScenario(result).profile?.totalTicks).toBeGreaterThan(0);
  });

  it('starts the server again on a new port when its port was taken (EADDRINUSE)', async () => {
    // The first start loses its port for real: a listener of its own holds $PORT when the HTTP
    // server binds it. Later starts (the marker file exists) run the hash server normally.
    const marker = join(dir, 'port-taken-once');
    writeFileSync(
      join(dir, 'port-taken.cjs'),
      `const fs = require('node:fs');
const net = require('node:net');
if (!fs.existsSync(${JSON.stringify(marker)})) {
  fs.writeFileSync(${JSON.stringify(marker)}, '');
  net.createServer().listen(Number(process.env.PORT), '127.0.0.1', () => {
    require('node:http').createServer().listen(Number(process.env.PORT), '127.0.0.1');
  });
} else require(${JSON.stringify(join(FIXTURES, 'hash-server.cjs'))});`,
    );
    const lines: string[] = [];
    const result = await runRound(
      { side: 'base', command: 'node port-taken.cjs', cwd: dir },
      1,
      settings({ url: '/auth' }),
      {
        ...context(),
        log: (line: string) => lines.push(line),
        onProgress: (e: { message: string }) => lines.push(e.message),
      },
    );
    expect(existsSync(marker)).toBe(true);
    expect(lines.filter((l) => l.includes('EADDRINUSE'))).toEqual([
      "base round 1: the server's port was taken by another process (EADDRINUSE); starting it again on a new port",
    ]);
    expect(lines.filter((l) => l.includes('starting "node port-taken.cjs" on port'))).toHaveLength(2);
    expect(firstScenario(result).load.requests.total).toBeGreaterThan(0);
    expect(firstScenario(result).profile?.functions.some((f) => /pbkdf2/.test(f.name))).toBe(true);
  });

  it('fails naming the side when the server answers only errors', async () => {
    writeFileSync(
      join(dir, 'broken.cjs'),
      `require('node:http').createServer((q, s) => { s.statusCode = 500; s.end('db down'); }).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening, database unreachable'));`,
    );
    await expect(
      runRound({ side: 'head', command: 'node broken.cjs', cwd: dir }, 1, settings(), context()),
    ).rejects.toThrow(
      /head server .* answered no request .* with a 2xx status \(status codes \{500: \d+\}[\s\S]*database unreachable/,
    );
  });

  it('reaps the whole process tree, also children that ignore SIGTERM', async () => {
    writeFileSync(
      join(dir, 'stubborn.cjs'),
      `const { spawn } = require('node:child_process');
const c = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); require('fs').writeFileSync('child.pid', String(process.pid)); setInterval(() => {}, 1000)"], { stdio: 'ignore' });
process.on('SIGTERM', () => {});
require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');`,
    );
    const result = await runRound(
      { side: 'base', command: 'node stubborn.cjs', cwd: dir },
      1,
      settings(),
      context(),
    );
    const childPid = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
    expect(alive(childPid)).toBe(false);
    for (const pid of result.pids) expect(alive(pid)).toBe(false);
  });

  it('measures every scenario in turn in one server start, each with its own window and profile', async () => {
    const s = levelled(
      resolveSettings({
        config: {
          start: 'x',
          duration: 1,
          warmup: 0.2,
          connections: 2,
          rounds: 1,
          scenarios: [
            { name: 'hash', url: '/hash' },
            { name: 'static', url: '/static' },
          ],
        },
      }),
    );
    const lines: string[] = [];
    const result = await runRound(
      { side: 'head', command: `node ${JSON.stringify(join(FIXTURES, 'routes-server.cjs'))}`, cwd: dir },
      1,
      s,
      {
        ...context(),
        log: (line: string) => lines.push(line),
        onProgress: (e: { message: string }) => lines.push(e.message),
      },
    );
    expect(lines.filter((l) => l.includes('starting'))).toHaveLength(1);
    expect(result.scenarios.map((x) => x.scenario)).toEqual(['hash', 'static']);
    const hash = defined(result.scenarios[0], 'the hash scenario');
    const plain = defined(result.scenarios[1], 'the static scenario');
    const pbkdf2Share = (x: typeof hash) => {
      const p = defined(x.profile, `the profile of ${x.scenario}`);
      const ticks = p.functions.filter((f) => /pbkdf2|^run$/.test(f.name)).reduce((n, f) => n + f.self, 0);
      // of the samples in which the main thread worked: on a busy machine (idle) grows with the
      // time the server waits for a core, which says nothing about what its work is
      const idle = p.functions.filter((f) => f.name === '(idle)').reduce((n, f) => n + f.self, 0);
      return ticks / (p.totalTicks - idle);
    };
    expect(pbkdf2Share(hash)).toBeGreaterThan(0.3);
    expect(pbkdf2Share(plain)).toBeLessThan(0.05);
    expect(plain.load.requests.total).toBeGreaterThan(hash.load.requests.total);
    expect(hash.monitors).toHaveLength(1);
    expect(plain.monitors).toHaveLength(1);
  });

  it('stops the server and rejects with HP_COMPARE_ABORTED when its signal fires mid-window', async () => {
    const controller = new AbortController();
    const lines: string[] = [];
    let abortedAt = 0;
    const started = runRound(
      { side: 'base', command: `node ${JSON.stringify(join(FIXTURES, 'routes-server.cjs'))}`, cwd: dir },
      1,
      settings({ duration: '30', warmup: '0', url: '/static' }),
      {
        ...context(),
        signal: controller.signal,
        onProgress: ({ message: line }: { message: string }) => {
          lines.push(line);
          if (line.includes('measuring'))
            setTimeout(() => {
              abortedAt = Date.now();
              controller.abort(new Error('test'));
            }, 300);
        },
      },
    );
    await expect(started).rejects.toMatchObject({ code: 'HP_COMPARE_ABORTED' });
    // The stop sequence is bounded (SIGTERM, grace, SIGKILL, wait): the round settles within it.
    expect(Date.now() - abortedAt).toBeLessThan(STOP_BOUND_MS);
    const port = Number(/on port (\d+)/.exec(lines[0] ?? '')?.[1]);
    expect(port).toBeGreaterThan(0);
    // Settled means every process has ended, its last thread included: nothing listens on the port.
    const holders = listenersOf(port);
    expect(
      holders,
      `port ${port} still held after the rejection by ${holders.map((pid) => `${pid} (${liveness(pid)})`).join(', ')}`,
    ).toEqual([]);
    expect(await canConnect(port)).toBe(false);
  });

  it('stops what the server daemonised (setsid, out of its group and tree) and what setupCommand left running', async () => {
    writeFileSync(
      join(dir, 'daemonising.cjs'),
      `const { spawn } = require('node:child_process');
const fs = require('node:fs');
// A helper in its own session (setsid), re-parented away from the server: not in its group or tree.
const helper = spawn(process.execPath, ['-e', "require('fs').writeFileSync('helper.pid', String(process.pid)); setInterval(() => {}, 1000)"], { detached: true, stdio: 'ignore' });
helper.unref();
require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');`,
    );
    const result = await runRound(
      { side: 'base', command: 'node daemonising.cjs', cwd: dir },
      1,
      settings({
        setupCommand: `setsid node -e "require('fs').writeFileSync('setup.pid', String(process.pid)); setInterval(() => {}, 1000)" > /dev/null 2>&1 & while [ ! -s setup.pid ]; do sleep 0.05; done`,
      }),
      context(),
    );
    expect(firstScenario(result).load.requests.total).toBeGreaterThan(0);
    for (const file of ['helper.pid', 'setup.pid']) {
      const pid = Number(readFileSync(join(dir, file), 'utf8'));
      expect(pid).toBeGreaterThan(0);
      expect(alive(pid), file).toBe(false);
    }
  });

  it.skipIf(!existsSync('/proc/self/stat'))(
    'stops a daemon that cleared its environment and left the session once its parent is gone (setsid env -i)',
    async () => {
      // The start command's helper starts `setsid env -i sleep` (no marker, own session), lives a
      // while, and exits: the daemon is re-parented away from the server before the round ends,
      // so only the walk of the tree while it ran can have seen it.
      writeFileSync(
        join(dir, 'env-clearing.cjs'),
        `const fs = require('node:fs');
const daemon = Number(fs.readFileSync('daemon.pid', 'utf8'));
const stat = fs.readFileSync('/proc/' + daemon + '/stat', 'utf8');
const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
fs.writeFileSync('daemon.seen', JSON.stringify({ ppid, server: process.pid, environ: fs.readFileSync('/proc/' + daemon + '/environ', 'latin1') }));
require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');`,
      );
      const result = await runRound(
        {
          side: 'head',
          command: `sh -c 'setsid env -i sleep 300 & echo $! > daemon.pid; sleep 2'; exec node env-clearing.cjs`,
          cwd: dir,
        },
        1,
        settings({ profiler: 'none' }),
        context(),
      );
      expect(result.scenarios[0]?.load.requests.total).toBeGreaterThan(0);
      const daemon = Number(readFileSync(join(dir, 'daemon.pid'), 'utf8'));
      // A failing run leaves the daemon: end it, by its pid, whatever the assertions say.
      onTestFinished(() => {
        if (daemon > 0 && alive(daemon)) process.kill(daemon, 'SIGKILL');
      });
      const seen = JSON.parse(readFileSync(join(dir, 'daemon.seen'), 'utf8')) as {
        ppid: number;
        server: number;
        environ: string;
      };
      // While the server ran, the daemon carried no marker and its parent (the inner sh) had
      // exited: it was re-parented to the command's shell, a child subreaper (Linux with perl),
      // which then exec'd the server — or, without a subreaper, to init, outside the tree, where
      // only the walk of the tree can have seen it …
      expect(seen.environ).not.toContain('HOTPATH_PROCESS_GROUP');
      // … and still it was stopped with the round.
      expect(daemon).toBeGreaterThan(0);
      expect(alive(daemon)).toBe(false);
    },
  );
});
