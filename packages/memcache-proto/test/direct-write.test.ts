import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { directWriteAvailable } from '../src/connection.js';
import { createServer, type MemcachedServer } from '../src/index.js';

const servers: MemcachedServer[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(directWrite: boolean): Promise<number> {
  const server = createServer({ port: 0, directWrite });
  servers.push(server);
  return (await server.listen()).port;
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
    sockets.push(socket);
  });
}

/** Reads until `bytes` bytes have arrived (or fails after 10 s). */
function readBytes(socket: net.Socket, bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const timer = setTimeout(() => reject(new Error(`got ${got} of ${bytes} bytes`)), 10_000);
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      got += chunk.length;
      if (got >= bytes) {
        clearTimeout(timer);
        socket.off('data', onData);
        resolve(Buffer.concat(chunks));
      }
    };
    socket.on('data', onData);
    socket.resume();
  });
}

describe('writing replies to the socket handle directly', () => {
  it('is available on this Node', () => {
    expect(directWriteAvailable()).toBe(true);
  });

  describe.each([
    ['direct writes', true],
    ['stream writes', false],
  ])('%s', (_mode, directWrite) => {
    it('keeps replies whole and in order when the client reads late (writes that go asynchronous)', async () => {
      const port = await start(directWrite);
      const socket = await connect(port);
      const big = Buffer.alloc(900_000);
      for (let i = 0; i < big.length; i++) big[i] = 97 + (i % 26);
      socket.write(`set big 0 0 ${big.length}\r\n`);
      socket.write(big);
      socket.write('\r\nset small 1 0 2\r\nok\r\n');
      expect((await readBytes(socket, 16)).toString()).toBe('STORED\r\nSTORED\r\n');
      socket.pause();
      // one request per write, spaced so that each is its own read on the server
      for (let i = 0; i < 12; i++) {
        socket.write(i % 3 === 2 ? 'get small\r\n' : 'get big\r\n');
        await new Promise((r) => setTimeout(r, 5));
      }
      const bigReply = Buffer.concat([
        Buffer.from(`VALUE big 0 ${big.length}\r\n`),
        big,
        Buffer.from('\r\nEND\r\n'),
      ]);
      const smallReply = Buffer.from('VALUE small 1 2\r\nok\r\nEND\r\n');
      const expected = Buffer.concat(
        Array.from({ length: 12 }, (_, i) => (i % 3 === 2 ? smallReply : bigReply)),
      );
      const got = await readBytes(socket, expected.length);
      expect(got.length).toBe(expected.length);
      expect(got.equals(expected)).toBe(true);
      socket.write('stats\r\n');
      let stats = '';
      while (!stats.endsWith('END\r\n')) stats += (await readBytes(socket, 1)).toString();
      expect(Number(/STAT bytes_written (\d+)/.exec(stats)?.[1])).toBeGreaterThan(expected.length);
    });

    it('survives a client that closes before its reply is written', async () => {
      const port = await start(directWrite);
      const a = await connect(port);
      a.write('set big 0 0 500000\r\n');
      a.write(Buffer.alloc(500_000, 'x'));
      a.write('\r\n');
      await readBytes(a, 8);
      a.pause();
      for (let i = 0; i < 20; i++) a.write('get big\r\n');
      await new Promise((r) => setTimeout(r, 50));
      a.destroy();
      await new Promise((r) => setTimeout(r, 50));
      const b = await connect(port);
      b.write('get big\r\n');
      const reply = await readBytes(b, 500_027);
      expect(reply.subarray(0, 22).toString()).toBe('VALUE big 0 500000\r\nxx');
    });
  });
});
