import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCliArgs } from '../src/cli-options.js';
import { createServer, type MemcachedServer, SERVER_VERSION } from '../src/index.js';
import { exchange, freePort, present, type RealMemcached, startRealMemcached } from './helpers.js';

// Behaviour clients and attackers notice, compared with the real memcached 1.6 where it is
// installed: each test sends the same bytes to both and expects our reply to be memcached's.
const HAVE_MEMCACHED = existsSync('/usr/bin/memcached');
const scenarios: [string, string][] = [
  ['version is x.y.z and nothing else', 'version\r\n'],
  ['GET over HTTP closes silently', 'GET / HTTP/1.0\r\nversion\r\n'],
  [
    'PUT over HTTP closes silently, dropping replies of the same read',
    'set $a 0 0 1\r\nx\r\nPUT /x HTTP/1.1\r\n',
  ],
  ['DELETE HTTP/1.1 closes silently', 'DELETE HTTP/1.1\r\n'],
  ['a lone HTTP/ token closes', 'HTTP/1.1\r\n'],
  ['an unknown command ending in HTTP without a slash is an ERROR', 'foo HTTP\r\n'],
  ['a known command with an HTTP/ key is a command', 'get $a HTTP/1.1\r\ndelete HTTP/1.1\r\n'],
  ['meta miss echoes O and k in request order', 'mg $m v O123 k\r\nmg $m k O7 s f t v c\r\n'],
  ['meta quiet miss says nothing', 'mg $m v O1 k q\r\n'],
  ['meta miss of a base64 key echoes it with b', 'mg bWlzc2luZy1rZXktMTc= b k O9 v\r\n'],
  ['meta unknown flags', 'mg $a v !\r\nmg $a x\r\nmg $a Q\r\nmg $a 1\r\nmg $a E1\r\nmd $a x\r\nma $a x\r\n'],
  ['ms with an unknown flag skips its data', 'ms $a 1 x\r\nz\r\nms $a 1 S1\r\nzz\r\nmg $a v\r\n'],
  ['meta duplicate flag', 'mg $a v v\r\nmd $a q q\r\n'],
  [
    'meta opaque of 32 bytes with its letter, and of 33',
    `mg $a v O${'1'.repeat(31)}\r\nmg $a v O${'1'.repeat(32)}\r\nmd $a O${'2'.repeat(32)}\r\nma $a O${'3'.repeat(32)}\r\n`,
  ],
  [
    'md I marks stale: X and W on the next mg, then Z',
    'ms $s 1\r\nx\r\nmd $s I\r\nmg $s v O5 k t s f h l\r\nmg $s O6 k\r\nmd $s I q\r\nmg $s k\r\nmd $z I\r\n' +
      'ms $s 1\r\nz\r\nmg $s v\r\nmd $s I T30\r\nmg $s t\r\n',
  ],
  ['md I on a vivified placeholder', 'mg $v N30 v\r\nmg $v v\r\nmd $v I\r\nmg $v v\r\nmg $v v\r\n'],
];

/** A binary-protocol request (memcached's protocol_binary.h layout). */
function binaryRequest(opcode: number, key: string, extras: Buffer, value = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(24);
  header[0] = 0x80;
  header[1] = opcode;
  header.writeUInt16BE(key.length, 2);
  header[4] = extras.length;
  header.writeUInt32BE(extras.length + key.length + value.length, 8);
  return Buffer.concat([header, extras, Buffer.from(key, 'latin1'), value]);
}

/** Sends a binary request stream and collects `count` responses as [status, value] pairs. */
function binaryExchange(port: number, request: Buffer, count: number): Promise<[number, string][]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no binary reply'));
    }, 10_000);
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      const replies: [number, string][] = [];
      let pos = 0;
      while (data.length - pos >= 24) {
        const body = data.readUInt32BE(pos + 8);
        if (data.length - pos < 24 + body) break;
        const skip = data.readUInt8(pos + 4) + data.readUInt16BE(pos + 2);
        replies.push([data.readUInt16BE(pos + 6), data.toString('latin1', pos + 24 + skip, pos + 24 + body)]);
        pos += 24 + body;
      }
      if (replies.length >= count) {
        clearTimeout(timer);
        socket.destroy();
        resolve(replies);
      }
    });
    socket.on('error', reject);
  });
}

function rssBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(present(kb, `VmRSS of ${pid}`)) * 1024;
}

describe.skipIf(!HAVE_MEMCACHED)('answers like memcached 1.6 where clients and attackers notice', () => {
  let real: RealMemcached;
  let ours: MemcachedServer;

  beforeAll(async () => {
    real = await startRealMemcached();
    ours = createServer({ port: 0 });
    await ours.listen();
  });
  afterAll(async () => {
    await real?.stop();
    await ours?.close();
  });

  it.each(scenarios.map(([name, text], i) => [name, text.replaceAll('$', `p${i}_`)]))(
    '%s',
    async (_name, request) => {
      const expected = await exchange(real.port, request);
      const actual = await exchange(ours.port, request);
      expect(actual, `memcached answered ${JSON.stringify(expected)}, we ${JSON.stringify(actual)}`).toBe(
        expected,
      );
    },
  );

  it('version answers VERSION x.y.z only; hotpath names itself in the hotpath_version stat', async () => {
    const reply = await exchange(ours.port, 'version\r\nstats\r\n');
    expect(reply.startsWith(`VERSION ${SERVER_VERSION}\r\n`)).toBe(true);
    expect(SERVER_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    expect(reply).toMatch(/\r\nSTAT version 1\.6\.18\r\n/);
    expect(reply).toMatch(/\r\nSTAT hotpath_version hotpath-memcached \d+\.\d+\.\d+\S*\r\n/);
    const binary = binaryRequest(0x0b, '', Buffer.alloc(0));
    expect(await binaryExchange(ours.port, binary, 1)).toEqual(await binaryExchange(real.port, binary, 1));
  });

  it('closes a line over 2048 bytes without a newline, without a reply, unless it is a get', async () => {
    const long = `set ${'k'.repeat(3000)}`;
    const expected = await exchange(real.port, long, 1, false);
    expect(expected).toBe('<closed>');
    expect(await exchange(ours.port, long, 1, false), 'memcached closes without a word').toBe(expected);
    const keys = Array.from({ length: 500 }, (_, i) => `lg${i}`).join(' ');
    const get = `set lg499 0 0 1\r\nz\r\nget ${keys}\r\n`;
    const expectedGet = await exchange(real.port, get, 4);
    expect(expectedGet).toBe('STORED\r\nVALUE lg499 0 1\r\nz\r\nEND\r\nMN\r\n');
    expect(await exchange(ours.port, get, 4)).toBe(expectedGet);
  });

  it('reads the binary expiration as unsigned 32-bit (0xFFFFFFFF is far in the future)', async () => {
    const extras = Buffer.alloc(8);
    extras.writeUInt32BE(0xffff_ffff, 4);
    const touch = Buffer.alloc(4);
    touch.writeUInt32BE(0x8000_0000, 0);
    const request = Buffer.concat([
      binaryRequest(0x01, 'binexp', extras, Buffer.from('v')), // set
      binaryRequest(0x00, 'binexp', Buffer.alloc(0)), // get
      binaryRequest(0x1c, 'binexp', touch), // touch, 2^31: also a time in the future
      binaryRequest(0x00, 'binexp', Buffer.alloc(0)), // get
    ]);
    const expected = await binaryExchange(real.port, request, 4);
    expect(expected.map(([status]) => status)).toEqual([0, 0, 0, 0]);
    expect(await binaryExchange(ours.port, request, 4)).toEqual(expected);
  });
});

describe('output backpressure holds per read', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  /** RSS growth of a server while a client sends 40 small multi-key gets 60 ms apart and never reads. */
  async function growthUnderNonReader(command: string, args: string[]): Promise<number> {
    const port = await freePort();
    const child = spawn(command, [...args, '-p', String(port)], { stdio: 'ignore' });
    children.push(child);
    for (let i = 0; i < 100; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => {
          s.destroy();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      });
      if (up) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const value = 'v'.repeat(8000); // small enough to be copied into the reply, not referenced
    let fill = '';
    for (let i = 0; i < 300; i++) fill += `set bp${i} 0 0 ${value.length} noreply\r\n${value}\r\n`;
    expect(await exchange(port, fill)).toBe('MN\r\n');
    await new Promise((r) => setTimeout(r, 200));
    const pid = present(child.pid, 'the server pid');
    const before = rssBytes(pid);
    const keys = Array.from({ length: 300 }, (_, i) => `bp${i}`).join(' ');
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.pause(); // never read: every reply stays queued somewhere
    for (let i = 0; i < 40; i++) {
      socket.write(`get ${keys}\r\n`); // 2.4 MB of replies each
      await new Promise((r) => setTimeout(r, 60));
    }
    await new Promise((r) => setTimeout(r, 300));
    const growth = rssBytes(pid) - before;
    socket.destroy();
    child.kill('SIGKILL');
    return growth;
  }

  it('a client that sends one multi-key get at a time and never reads does not grow server memory', async () => {
    const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
    const ours = await growthUnderNonReader(process.execPath, [cli, '-m', '64']);
    const root = process.getuid?.() === 0 ? ['-u', 'root'] : [];
    const real = HAVE_MEMCACHED
      ? await growthUnderNonReader('/usr/bin/memcached', ['-l', '127.0.0.1', '-U', '0', '-t', '1', ...root])
      : 0;
    const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
    // unbounded, 40 replies of 2.4 MB would add about 96 MB; the cap (8 MiB) plus one read's reply is the bound
    expect(ours, `RSS grew ${mb(ours)} (memcached: ${mb(real)}); bound 24 MB`).toBeLessThan(24e6);
  });
});

describe('-l spellings of all interfaces', () => {
  it.each([
    '0.0.0.0',
    '0',
    '0.0',
    '000.0.0.0',
    '0x0',
    '::',
    '::0',
    '0::',
    '0:0:0:0:0:0:0:0',
    '[::]',
    '::0.0.0.0',
    '*',
  ])('%s warns', (address) => {
    const action = parseCliArgs(['-l', address]);
    expect(action.kind === 'serve' && action.warnings[0]).toMatch(/all interfaces/);
  });
  it.each(['127.0.0.1', '::1', '10.0.0.0', 'localhost', '0.0.0.1', '::ffff:127.0.0.1'])(
    '%s does not',
    (address) => {
      const action = parseCliArgs(['-l', address]);
      expect(action.kind === 'serve' && action.warnings).toEqual([]);
    },
  );
});
