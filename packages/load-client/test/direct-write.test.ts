import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { directWriter } from '../src/direct-write.js';
import { run } from '../src/index.js';
import { httpServer, type Running } from './servers.js';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function listen(onSocket: (socket: Socket) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(onSocket);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port };
}

async function connected(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  cleanup.push(() => {
    socket.destroy();
  });
  await once(socket, 'connect');
  return socket;
}

describe('directWriter', () => {
  it('returns null (write through the stream) for a socket without a handle', () => {
    expect(directWriter({}, () => {})).toBeNull();
    expect(directWriter({ _handle: null }, () => {})).toBeNull();
  });

  it('writes in order, keeping a write that libuv queued alive until it completes', async () => {
    const received: Buffer[] = [];
    let peer: Socket | undefined;
    const { port } = await listen((socket) => {
      peer = socket;
      socket.pause(); // let the client's kernel buffers fill so the big write is queued
      socket.on('data', (chunk) => received.push(chunk));
    });
    const socket = await connected(port);
    const errors: number[] = [];
    const write = directWriter(socket, (code) => errors.push(code));
    expect(write).not.toBeNull();
    const big = Buffer.alloc(8 * 1024 * 1024, 'a');
    expect(write?.(big)).toBe(0);
    expect(write?.(Buffer.from('end'))).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    peer?.resume();
    const total = big.length + 3;
    const deadline = Date.now() + 10_000;
    while (received.reduce((n, c) => n + c.length, 0) < total && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const all = Buffer.concat(received);
    expect(all.length).toBe(total);
    expect(all.subarray(0, big.length).equals(big)).toBe(true);
    expect(all.subarray(big.length).toString()).toBe('end');
    expect(errors).toEqual([]);
  });

  it('answers a negative error code, writing nothing, once the socket is closed', async () => {
    let got = 0;
    const { port } = await listen((socket) => socket.on('data', (chunk) => (got += chunk.length)));
    const socket = await connected(port);
    const write = directWriter(socket, () => {});
    expect(write?.(Buffer.from('one'))).toBe(0);
    socket.destroy();
    await once(socket, 'close');
    expect(write?.(Buffer.from('two'))).toBeLessThan(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(got).toBe(3);
  });
});

describe('run() with direct and stream writes', () => {
  for (const streamWrites of [false, true]) {
    it(`sends exactly \`amount\` requests (${streamWrites ? 'HOTPATH_LOAD_STREAM_WRITES=1' : 'direct writes'})`, async () => {
      const before = process.env.HOTPATH_LOAD_STREAM_WRITES;
      if (streamWrites) process.env.HOTPATH_LOAD_STREAM_WRITES = '1';
      else delete process.env.HOTPATH_LOAD_STREAM_WRITES;
      cleanup.push(() => {
        if (before === undefined) delete process.env.HOTPATH_LOAD_STREAM_WRITES;
        else process.env.HOTPATH_LOAD_STREAM_WRITES = before;
      });
      let seen = 0;
      const server: Running = await httpServer((_req, res) => {
        seen++;
        res.end('hello');
      });
      cleanup.push(() => server.close());
      const result = await run({ url: `${server.url}/`, amount: 2000, connections: 5 });
      expect(result.requests.total).toBe(2000);
      expect(seen).toBe(2000);
      expect(result.errors).toBe(0);
      expect(result.statusCodes).toEqual({ '200': 2000 });
    });
  }
});
