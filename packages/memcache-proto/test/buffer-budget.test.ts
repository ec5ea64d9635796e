import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type BudgetedConnection, BufferBudget } from '../src/buffer-budget.js';
import { exchange, present, startCli } from './helpers.js';

/** A connection as the budget sees it: holds `bytes` (the truth), reports when told. */
function member(name: string, bytes: number, closed: string[]): BudgetedConnection & { bytes: number } {
  const conn: BudgetedConnection & { bytes: number } = {
    charged: 0,
    bytes,
    bufferedBytes: () => conn.bytes,
    closeForMemory: () => {
      closed.push(name);
    },
  };
  return conn;
}

describe('BufferBudget', () => {
  it('counts what connections report and closes none while the total stays within the limit', () => {
    const closed: string[] = [];
    const budget = new BufferBudget(1000);
    const a = member('a', 400, closed);
    const b = member('b', 600, closed);
    budget.add(a);
    budget.add(b);
    budget.charge(a, 400);
    budget.charge(b, 600);
    expect(budget.used).toBe(1000);
    budget.charge(a, 100);
    expect(budget.used).toBe(700);
    budget.remove(b);
    expect(budget.used).toBe(100);
    expect(closed).toEqual([]);
    expect(budget.closed).toBe(0);
  });

  it('over the limit closes the connections holding the most first, until the total is back under it', () => {
    const table: { holds: Record<string, number>; limit: number; closes: string[] }[] = [
      { holds: { a: 100, b: 500, c: 300, d: 200 }, limit: 1000, closes: ['b'] },
      { holds: { a: 100, b: 500, c: 300, d: 200 }, limit: 500, closes: ['b', 'c'] },
      { holds: { a: 100, b: 500, c: 300, d: 200 }, limit: 50, closes: ['b', 'c', 'd', 'a'] },
    ];
    for (const { holds, limit, closes } of table) {
      const closed: string[] = [];
      const budget = new BufferBudget(limit);
      const members = Object.entries(holds).map(([name, bytes]) => member(name, bytes, closed));
      for (const m of members) budget.add(m);
      for (const m of members) budget.charge(m, m.bytes);
      expect(closed).toEqual(closes);
      expect(budget.closed).toBe(closes.length);
      const kept = Object.entries(holds).filter(([name]) => !closes.includes(name));
      expect(budget.used).toBe(kept.reduce((sum, [, bytes]) => sum + bytes, 0));
      expect(budget.used).toBeLessThanOrEqual(limit);
      // a closed connection's later reports and its removal change nothing
      for (const m of members) budget.charge(m, m.charged);
    }
  });

  it('recounts stale reports before closing anything: output sent since is not held', () => {
    const closed: string[] = [];
    const budget = new BufferBudget(1000);
    const a = member('a', 900, closed);
    const b = member('b', 50, closed);
    budget.add(a);
    budget.add(b);
    budget.charge(a, 900);
    a.bytes = 0; // its socket sent everything without a report
    budget.charge(b, 200);
    expect(closed).toEqual([]);
    expect(budget.used).toBe(50 + 0);
  });

  it('with no limit (0) counts but never closes', () => {
    const closed: string[] = [];
    const budget = new BufferBudget(0);
    const a = member('a', 1 << 30, closed);
    budget.add(a);
    budget.charge(a, 1 << 30);
    expect(budget.used).toBe(1 << 30);
    expect(closed).toEqual([]);
  });
});

const children: ChildProcess[] = [];
const sockets: net.Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(present(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1], 'VmRSS')) * 1024;
}

async function stats(port: number): Promise<Map<string, number>> {
  const reply = await exchange(port, 'stats\r\n');
  return new Map([...reply.matchAll(/^STAT (\S+) (\d+)\r$/gm)].map((m) => [present(m[1]), Number(m[2])]));
}

describe('one memory budget for all connections (a real server process)', () => {
  it('keeps RSS under the budget plus a margin with 200 connections that send gets and never read', async () => {
    const MIB = 1024 * 1024;
    const budgetMb = 32;
    // the margin: 200 connections' reply slabs (64 KiB each), the replies the kernel took before
    // the server stopped reading (garbage until V8 collects it, which it does in steps of about
    // 64 MiB of external memory) and what malloc keeps; without the budget the peak was +1.6 GB
    const marginMb = 128;
    const { child, port } = await startCli(
      ['-p', '0', '-m', '64', '-o', `read_buf_mem_limit=${budgetMb}`],
      children,
    );
    const pid = present(child.pid, 'server pid');
    // 40 items of 100 kB (slab chunks: every get copies the value into the reply)
    const value = 'v'.repeat(100_000);
    let sets = '';
    for (let i = 0; i < 40; i++) sets += `set k${i} 0 0 ${value.length}\r\n${value}\r\n`;
    expect(await exchange(port, sets)).toBe(`${'STORED\r\n'.repeat(40)}MN\r\n`);
    const baseline = rssBytes(pid);

    // each line asks for 4 MB of replies; 4 lines a connection, twice its own 8 MiB output cap
    const line = `get ${Array.from({ length: 40 }, (_, i) => `k${i}`).join(' ')}\r\n`;
    let closedByServer = 0;
    await Promise.all(
      Array.from(
        { length: 200 },
        () =>
          new Promise<void>((resolve, reject) => {
            const socket = net.connect(port, '127.0.0.1');
            sockets.push(socket);
            socket.pause(); // never read a reply
            socket.on('error', () => {});
            socket.once('close', () => closedByServer++);
            socket.once('connect', () => {
              socket.write(line.repeat(4));
              resolve();
            });
            socket.once('error', reject);
          }),
      ),
    );

    // watch until the server has stopped serving them (no get counted for a second): every
    // connection is then either closed or paused with its replies unread
    let peak = rssBytes(pid);
    let last = -1;
    let still = 0;
    while (still < 10) {
      await new Promise((r) => setTimeout(r, 100));
      peak = Math.max(peak, rssBytes(pid));
      const gets = present((await stats(port)).get('cmd_get'), 'cmd_get');
      still = gets === last ? still + 1 : 0;
      last = gets;
    }
    const after = await stats(port);
    if (process.env.HP_MC_BUDGET_REPORT === '1') {
      console.log(
        `RSS baseline ${(baseline / MIB).toFixed(1)} MiB, peak ${(peak / MIB).toFixed(1)} MiB (+${((peak - baseline) / MIB).toFixed(1)}); read_buf_oom ${after.get('read_buf_oom')}, read_buf_bytes ${after.get('read_buf_bytes')}, curr_connections ${after.get('curr_connections')}, cmd_get ${after.get('cmd_get')}, closed seen ${closedByServer}`,
      );
    }
    expect(peak).toBeLessThan(baseline + (budgetMb + marginMb) * MIB);
    // the budget was what held it: connections were closed for it, and what the others hold is
    // within it
    expect(present(after.get('read_buf_oom'), 'read_buf_oom')).toBeGreaterThan(0);
    expect(present(after.get('read_buf_bytes'), 'read_buf_bytes')).toBeLessThanOrEqual(budgetMb * MIB);
    // and a client that reads its replies is still served
    expect(await exchange(port, 'get k1\r\n')).toBe(
      `VALUE k1 0 ${value.length}\r\n${value}\r\nEND\r\nMN\r\n`,
    );
  });
});
