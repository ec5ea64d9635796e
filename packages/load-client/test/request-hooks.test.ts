import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../src/index.js';
import { httpServer, type Running } from './servers.js';

const running: Running[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

describe('request hooks', () => {
  it('setupConnection gives each connection its own requests, serialised once', async () => {
    const tokensBySocket = new Map<unknown, Set<string>>();
    const server = await httpServer((req, res) => {
      const seen = tokensBySocket.get(req.socket) ?? new Set<string>();
      seen.add(String(req.headers.authorization));
      tokensBySocket.set(req.socket, seen);
      res.end('ok');
    });
    running.push(server);
    const calls: number[] = [];
    const result = await run({
      url: `${server.url}/`,
      amount: 300,
      connections: 3,
      setupConnection: (connection) => {
        calls.push(connection);
        return [{ headers: { authorization: `Bearer user-${connection}` } }];
      },
    });
    expect(result.requests.total).toBe(300);
    expect(calls.sort()).toEqual([0, 1, 2]);
    const tokens = [...tokensBySocket.values()].map((set) => [...set]);
    expect(tokens).toHaveLength(3);
    for (const one of tokens) expect(one).toHaveLength(1);
    expect(tokens.flat().sort()).toEqual(['Bearer user-0', 'Bearer user-1', 'Bearer user-2']);
  });

  it('onRequest templates every request body', async () => {
    const bodies: string[] = [];
    const server = await httpServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        bodies.push(body);
        res.end();
      });
    });
    running.push(server);
    const result = await run({
      url: `${server.url}/items`,
      amount: 200,
      connections: 2,
      onRequest: ({ connection, sequence }) => ({
        method: 'POST',
        body: JSON.stringify({ connection, sequence }),
      }),
    });
    expect(result.requests.total).toBe(200);
    const parsed = bodies.map((b) => JSON.parse(b) as { connection: number; sequence: number });
    const distinct = new Set(parsed.map((p) => `${p.connection}:${p.sequence}`));
    expect(distinct.size).toBe(200);
  });

  it('ends the run with the error a callback throws', async () => {
    const server = await httpServer((_req, res) => res.end());
    running.push(server);
    await expect(
      run({
        url: `${server.url}/`,
        amount: 100,
        onRequest: ({ sequence }) => {
          if (sequence === 5) throw new Error('template broke');
          return {};
        },
      }),
    ).rejects.toThrow('template broke');
    await expect(
      run({
        url: `${server.url}/`,
        amount: 100,
        setupConnection: () => {
          throw new Error('setup broke');
        },
      }),
    ).rejects.toThrow('setup broke');
  });

  it('refuses callbacks with worker threads', async () => {
    await expect(
      run({ url: 'http://127.0.0.1:1/', workers: 2, connections: 2, onRequest: () => ({}) }),
    ).rejects.toThrow(/invalid workers 2: expected 1 when onRequest is given/);
  });
});
