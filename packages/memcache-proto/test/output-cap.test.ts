import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type MemcachedServer } from '../src/index.js';
import { exchange, present, startCli } from './helpers.js';

const children: ChildProcess[] = [];
const servers: MemcachedServer[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(present(/VmRSS:\s+(\d+)/.exec(status), 'VmRSS')[1]) / 1024;
}

describe('output cap inside one command', () => {
  it('keeps a server process under its output cap plus a margin for amplifying gets never read', async () => {
    const capMb = 8; // the default maxOutputBytes
    const { child, port } = await startCli(['-p', '0'], children);
    const pid = present(child.pid, 'pid');
    const socket = net.connect(port, '127.0.0.1');
    sockets.push(socket);
    await new Promise((r) => socket.once('connect', r));
    const value = 'x'.repeat(100_000);
    socket.write(`set big 0 0 ${value.length}\r\n${value}\r\n`);
    await new Promise((r) => socket.once('data', r));
    socket.pause(); // never read again
    const before = rssMb(pid);
    // each line asks for 300 MB of replies; four of them would be 1.2 GB without the cap
    const line = `get${' big'.repeat(3000)}\r\n`;
    for (let i = 0; i < 4; i++) socket.write(line);
    let peak = before;
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 100));
      peak = Math.max(peak, rssMb(pid));
    }
    expect(peak - before, `RSS ${before.toFixed(1)} MB before, peak ${peak.toFixed(1)} MB`).toBeLessThan(
      capMb + 24,
    );
    // the server still serves others
    expect(await exchange(port, 'version\r\n')).toMatch(/^VERSION /);
  }, 30_000);

  it('answers a get paused at the output batch mark in full and in order, then the commands after it', async () => {
    const server = createServer({ port: 0 });
    servers.push(server);
    await server.listen();
    const big = 'b'.repeat(100_000);
    const other = 'o'.repeat(70_000);
    expect(
      await exchange(
        server.port,
        `set big 1 0 ${big.length}\r\n${big}\r\nset other 2 0 ${other.length}\r\n${other}\r\n`,
      ),
    ).toBe('STORED\r\nSTORED\r\nMN\r\n');
    const keys: string[] = [];
    for (let i = 0; i < 60; i++) keys.push(i % 3 === 0 ? 'big' : i % 3 === 1 ? 'miss' : 'other');
    const reply = await exchange(server.port, `get ${keys.join('  ')}\r\ngets other big\r\nversion\r\n`);
    let expected = '';
    for (const key of keys) {
      if (key === 'big') expected += `VALUE big 1 100000\r\n${big}\r\n`;
      if (key === 'other') expected += `VALUE other 2 70000\r\n${other}\r\n`;
    }
    expected += 'END\r\n';
    const gets = /^VALUE other 2 70000 (\d+)\r\n/m.exec(reply.slice(expected.length));
    expect(reply.slice(0, expected.length) === expected, 'the paused get reply').toBe(true);
    const casOther = present(gets?.[1], 'cas of other');
    const casBig = present(
      /VALUE big 1 100000 (\d+)\r\n/.exec(reply.slice(expected.length))?.[1],
      'cas of big',
    );
    expect(reply.slice(expected.length)).toBe(
      `VALUE other 2 70000 ${casOther}\r\n${other}\r\nVALUE big 1 100000 ${casBig}\r\n${big}\r\nEND\r\nVERSION 1.6.18\r\nMN\r\n`,
    );
  }, 30_000);
});
