import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseCliArgs } from '../src/cli-options.js';
import { CLI, exchange, freePort, present, startCli, startRealMemcached } from './helpers.js';

// One test per memcached 1.6 flag: accepted with memcached's meaning (checked on a running
// server where it shows), or refused at start with one line that says why.
const HAVE_MEMCACHED = existsSync('/usr/bin/memcached');
const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'hp-mc-flags-'));
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Sends bytes over a unix socket and collects the reply until `until` appears or the peer closes. */
function unixExchange(path: string, request: string, until: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(path, () => socket.write(request));
    let text = '';
    socket.on('data', (d) => {
      text += d;
      if (text.includes(until)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
}

/** `stats settings` of a server as a map. */
async function settings(port: number): Promise<Map<string, string>> {
  const reply = await exchange(port, 'stats settings\r\n');
  return new Map([...reply.matchAll(/^STAT (\S+) (.*)\r$/gm)].map((m) => [present(m[1]), present(m[2])]));
}

/** Sends bytes over TCP and resolves with the first `bytes` bytes of the reply. */
function rawReply(port: number, request: Buffer, bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let data = Buffer.alloc(0);
    socket.on('data', (d) => {
      data = Buffer.concat([data, d]);
      if (data.length >= bytes) {
        socket.destroy();
        resolve(data.subarray(0, bytes));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed after ${data.length} bytes`)));
  });
}

async function waitExit(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('memcached flags: refused with a reason', () => {
  it.each([
    [['-r'], /-r: Node cannot raise the core file limit/],
    [['-k'], /-k: Node cannot lock its memory/],
    [['-D', ':'], /-D: per-prefix statistics/],
    [['-S'], /-S: there is no SASL library here; -Y <authfile>/],
    [['-e', '/dev/shm/x'], /-e: a restartable cache in a memory file is not implemented/],
    [['-Z'], /-Z: TLS is not implemented/],
    [['-N', '2'], /-N: NAPI id thread steering/],
    [['-o', 'hashpower=20'], /-o: "hashpower=20" is not a supported extended option/],
    [['-U', '11211'], /-U: "11211" is not 0 \(UDP is not supported/],
    [['-B', 'http'], /-B: "http" is not one of ascii, binary, auto/],
    [['-a', '700'], /-a: "700" is not used without -s/],
  ])('%j exits 2 with one line', async (args, message) => {
    const { code, stderr, stdout } = await run(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('memcached flags: accepted', () => {
  it('-V answers one line in memcached -V shape', async () => {
    const { code, stdout } = await run(['-V']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^memcached 1\.6\.18\+hotpath-memcached\.\d+\.\d+\.\d+\S*\n$/);
  });

  it('-i prints the license', async () => {
    const { code, stdout } = await run(['-i']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/MIT License/);
  });

  it('-p 0 prints the port it got, without -v', async () => {
    const { port, stderr } = await startCli(['-p', '0'], children);
    expect(port).toBeGreaterThan(0);
    expect(stderr).toBe(`hotpath-memcached listening on 127.0.0.1:${port}\n`);
    expect(await exchange(port, 'version\r\n')).toBe('VERSION 1.6.18\r\nMN\r\n');
  });

  it('-d runs in the background: the command exits 0 once it listens, -P names the pid', async () => {
    const port = await freePort();
    const pidFile = join(dir, 'daemon.pid');
    const { code, stderr } = await run(['-d', '-p', String(port), '-P', pidFile]);
    expect(code).toBe(0);
    expect(stderr).toMatch(
      new RegExp(`listening on 127\\.0\\.0\\.1:${port} \\(pid \\d+, in the background\\)`),
    );
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    try {
      expect(alive(pid)).toBe(true);
      expect(await exchange(port, 'set d 0 0 1\r\nx\r\nget d\r\n')).toBe(
        'STORED\r\nVALUE d 0 1\r\nx\r\nEND\r\nMN\r\n',
      );
    } finally {
      process.kill(pid, 'SIGTERM');
    }
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pid)).toBe(false);
    expect(existsSync(pidFile)).toBe(false); // removed on exit
  });

  it('-d reports a failure to listen and exits 1', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const { code, stderr } = await run(['-d', '-p', String(port)]);
      expect(code).toBe(1);
      expect(stderr).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}`));
    } finally {
      blocker.close();
    }
  });

  it('-P writes the pid file in the foreground too and removes it on SIGTERM', async () => {
    const pidFile = join(dir, 'fg.pid');
    const { child } = await startCli(['-p', '0', '-P', pidFile], children);
    expect(readFileSync(pidFile, 'utf8')).toBe(`${child.pid}\n`);
    child.kill('SIGTERM');
    expect(await waitExit(child)).toBe(0);
    expect(existsSync(pidFile)).toBe(false);
  });

  it('-s serves a unix socket (a stale one is replaced) with the -a mask, and no TCP', async () => {
    const path = join(dir, 'mc.sock');
    // a stale socket file, as a killed server leaves it
    const killed = spawn(
      process.execPath,
      ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    children.push(killed);
    await new Promise((r) => killed.stdout.once('data', r));
    killed.kill('SIGKILL');
    await waitExit(killed);
    expect(statSync(path).isSocket()).toBe(true);
    writeFileSync(join(dir, 'not-a-socket'), 'x');
    const { stderr } = await startCli(['-s', path, '-a', '770'], children);
    expect(stderr).toBe(`hotpath-memcached listening on unix socket ${path}\n`);
    expect(statSync(path).mode & 0o777).toBe(0o770);
    expect(await unixExchange(path, 'set u 0 0 1\r\nx\r\nget u\r\n', 'END\r\n')).toBe(
      'STORED\r\nVALUE u 0 1\r\nx\r\nEND\r\n',
    );
    const refused = await run(['-s', join(dir, 'not-a-socket')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not-a-socket exists and is not a socket/);
  });

  it('-u switches to the user when run as root', async () => {
    const root = process.getuid?.() === 0;
    const user = root ? 'nobody' : 'anyone';
    const { child, port } = await startCli(['-p', '0', '-u', user], children);
    if (root) {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const uid = present(/^Uid:\s+(\d+)/m.exec(status)?.[1], 'Uid');
      expect(uid).not.toBe('0');
    }
    expect(await exchange(port, 'version\r\n')).toBe('VERSION 1.6.18\r\nMN\r\n');
  });

  it.skipIf(process.getuid?.() !== 0)(
    "-u drops root's supplementary groups, as memcached (setgroups before setgid/setuid)",
    async () => {
      // a root process with supplementary groups (this sandbox's root has none of its own):
      // the CLI imported into a process that first sets some
      const child = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          'process.setgroups([0, 4, 27]); await import(process.argv[1]);',
          CLI,
          '-p',
          '0',
          '-u',
          'nobody',
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.push(child);
      let stderr = '';
      const port = await new Promise<number>((resolve, reject) => {
        child.stderr.on('data', (d) => {
          stderr += d;
          const m = /listening on \S+:(\d+)/.exec(stderr);
          if (m) resolve(Number(m[1]));
        });
        child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
      });
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const field = (name: string) => present(new RegExp(`^${name}:(.*)$`, 'm').exec(status)?.[1], name);
      expect(field('Uid').trim().split(/\s+/)).toEqual(['65534', '65534', '65534', '65534']);
      expect(field('Gid').trim().split(/\s+/)).toEqual(['65534', '65534', '65534', '65534']);
      expect(field('Groups').trim()).toBe('');
      expect(await exchange(port, 'version\r\n')).toBe('VERSION 1.6.18\r\nMN\r\n');
    },
  );

  it('-M answers out of memory instead of evicting', async () => {
    const { port } = await startCli(['-p', '0', '-m', '1', '-M'], children);
    expect((await settings(port)).get('evictions')).toBe('off');
    const value = 'v'.repeat(200_000);
    let reply = '';
    for (let i = 0; i < 12; i++)
      reply += await exchange(port, `set m${i} 0 0 ${value.length}\r\n${value}\r\n`);
    expect(reply).toMatch(/SERVER_ERROR out of memory storing object/);
    expect(await exchange(port, 'get m0\r\n')).toMatch(/^VALUE m0 /); // nothing was evicted
  });

  it.skipIf(!HAVE_MEMCACHED)('-C: cas 0 everywhere and cas commands EXISTS, as memcached -C', async () => {
    const request =
      'set a 0 0 1\r\nx\r\ngets a\r\ncas a 0 0 1 0\r\nz\r\ncas a 0 0 1 9\r\nz\r\nmg a c v\r\ncas n 0 0 1 5\r\nq\r\n';
    const real = await startRealMemcached(['-C']);
    try {
      const { port } = await startCli(['-p', '0', '-C'], children);
      expect(await exchange(port, request)).toBe(await exchange(real.port, request));
      expect((await settings(port)).get('cas_enabled')).toBe('no');
    } finally {
      await real.stop();
    }
  });

  it.skipIf(!HAVE_MEMCACHED)('-F refuses flush_all (text and binary), as memcached -F', async () => {
    const binaryFlush = Buffer.alloc(24);
    binaryFlush[0] = 0x80;
    binaryFlush[1] = 0x08;
    const request = 'flush_all\r\nflush_all 0\r\n';
    const real = await startRealMemcached(['-F']);
    try {
      const { port } = await startCli(['-p', '0', '-F'], children);
      expect(await exchange(port, request)).toBe(await exchange(real.port, request));
      const ours = await rawReply(port, binaryFlush, 24 + 13);
      expect(ours.toString('latin1')).toBe(
        (await rawReply(real.port, binaryFlush, 24 + 13)).toString('latin1'),
      );
      expect(ours.readUInt16BE(6)).toBe(0x20); // status: auth error
      expect(ours.subarray(24).toString()).toBe('Auth failure.');
    } finally {
      await real.stop();
    }
  });

  it.skipIf(!HAVE_MEMCACHED)(
    "-A enables shutdown (the process exits 0); without it, memcached's refusal",
    async () => {
      const request = 'shutdown\r\nshutdown now\r\n';
      const real = await startRealMemcached();
      try {
        const plain = await startCli(['-p', '0'], children);
        expect(await exchange(plain.port, request)).toBe(await exchange(real.port, request));
      } finally {
        await real.stop();
      }
      const { child, port } = await startCli(['-p', '0', '-A'], children);
      expect(await exchange(port, 'shutdown bad\r\n')).toBe('CLIENT_ERROR invalid shutdown mode\r\nMN\r\n');
      expect(await exchange(port, 'shutdown\r\n')).toBe('<closed>');
      expect(await waitExit(child)).toBe(0);
    },
  );

  it('-B binary closes a text connection; -B ascii reads 0x80 as text', async () => {
    const binary = await startCli(['-p', '0', '-B', 'binary'], children);
    // a binary header is 24 bytes: the text is read as one, whose magic byte is wrong
    expect(await exchange(binary.port, 'version\r\n'.repeat(3))).toBe('<closed>');
    const ascii = await startCli(['-p', '0', '-B', 'ascii'], children);
    expect(await exchange(ascii.port, '\x80version\r\nversion\r\n')).toBe(
      'ERROR\r\nVERSION 1.6.18\r\nMN\r\n',
    );
    expect((await settings(ascii.port)).get('binding_protocol')).toBe('ascii');
  });

  it('-R serves a long pipeline in order, a few commands per turn', async () => {
    const { port } = await startCli(['-p', '0', '-R', '2'], children);
    expect((await settings(port)).get('reqs_per_event')).toBe('2');
    let request = '';
    let expected = '';
    for (let i = 0; i < 200; i++) {
      request += `set r${i} 0 0 ${String(i).length}\r\n${i}\r\nget r${i}\r\n`;
      expected += `STORED\r\nVALUE r${i} 0 ${String(i).length}\r\n${i}\r\nEND\r\n`;
    }
    expect(await exchange(port, request)).toBe(`${expected}MN\r\n`);
  });

  it.each([
    [['-b', '16']],
    [['-L']],
    [['-X']],
    [['-W']],
    [['-t', '4']],
    [['-c', '10']],
    [['-f', '1.5', '-n', '32']],
    [['-I', '2m']],
    [['-U', '0']],
    [['-o', 'idle_timeout=30']],
    [['-vv']],
    [['--memory-limit=16', '--conn-limit=64']],
  ])('%j starts and serves', async (args) => {
    const { port, stderr } = await startCli(['-p', '0', ...args], children);
    expect(await exchange(port, 'version\r\n')).toBe('VERSION 1.6.18\r\nMN\r\n');
    if (args[0] === '-L') expect(stderr).toMatch(/-L: Node cannot ask for large memory pages/);
  });

  it('parses every accepted flag into its server option', () => {
    const action = parseCliArgs([
      '-M',
      '-C',
      '-F',
      '-A',
      '-B',
      'ascii',
      '-R',
      '20',
      '-b',
      '64',
      '-s',
      '/tmp/x.sock',
      '-a',
      '0770',
      '-d',
      '-P',
      '/tmp/x.pid',
      '-u',
      'nobody',
    ]);
    expect(action).toMatchObject({
      kind: 'serve',
      options: {
        evictions: false,
        casEnabled: false,
        flushEnabled: false,
        enableShutdown: true,
        protocol: 'ascii',
        maxReqsPerEvent: 20,
        backlog: 64,
        socketPath: '/tmp/x.sock',
        socketMask: 0o770,
      },
      process: { daemon: true, pidFile: '/tmp/x.pid', user: 'nobody' },
    });
  });
});
