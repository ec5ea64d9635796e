import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readIntoSharedBuffer } from '../src/connection.js';
import { createServer, type MemcachedServer } from '../src/index.js';
import { present } from './helpers.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

/** Opens a client connection; resolves once connected, collecting what the server sends. */
function open(
  port: number,
): Promise<{ socket: net.Socket; received: () => string; next: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let wake: (() => void) | undefined;
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      wake?.();
    });
    socket.on('error', reject);
    cleanup.push(async () => {
      socket.destroy();
    });
    socket.on('connect', () =>
      resolve({
        socket,
        received: () => Buffer.concat(chunks).toString('latin1'),
        next: () => new Promise<void>((r) => (wake = r)),
      }),
    );
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

describe('reading into one shared input buffer', () => {
  it('is available on this Node: accepted sockets read into the one buffer', async () => {
    const reads: { nread: number; text: string; buffer: Buffer }[] = [];
    const server = net.createServer({ pauseOnConnect: true }, (socket) => {
      const ok = readIntoSharedBuffer(socket, (nread, input) =>
        reads.push({ nread, text: input.toString('latin1', 0, nread), buffer: input }),
      );
      expect(ok).toBe(true);
      socket.resume();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => server.close(() => r())));
    const { port } = server.address() as net.AddressInfo;
    const a = await open(port);
    a.socket.write('hello');
    await until(() => reads.length === 1, 'the first read');
    const b = await open(port);
    b.socket.write('other connection');
    await until(() => reads.length === 2, 'the second read');
    expect(reads.map((r) => [r.nread, r.text])).toEqual([
      [5, 'hello'],
      [16, 'other connection'],
    ]);
    const [first, second] = reads;
    expect(present(first).buffer).toBe(present(second).buffer);
  });

  describe.each([
    ['shared input buffer', true],
    ['a Buffer per read', false],
  ])('a command split across reads while other connections send (%s)', (_mode, sharedInputBuffer) => {
    let server: MemcachedServer;
    const start = async () => {
      server = createServer({ port: 0, sharedInputBuffer });
      await server.listen();
      cleanup.push(() => server.close());
    };

    it('keeps a partial line and a partial data block intact', async () => {
      await start();
      const a = await open(server.port);
      const b = await open(server.port);
      const noise = async (text: string) => {
        const before = b.received().length;
        b.socket.write(text);
        await until(() => b.received().length > before, 'the other connection’s reply');
      };
      a.socket.write('set shared 5 0 10\r\nabcde');
      await noise(`set noise 0 0 40\r\n${'N'.repeat(40)}\r\n`);
      a.socket.write('fghij\r\nget sha');
      await noise(`get noise ${'M'.repeat(200)}\r\n`);
      a.socket.write('red noise\r\n');
      const expected =
        'STORED\r\nVALUE shared 5 10\r\nabcdefghij\r\nVALUE noise 0 40\r\n' + `${'N'.repeat(40)}\r\nEND\r\n`;
      await until(() => a.received() === expected, `a's replies (got ${JSON.stringify(a.received())})`);
      expect(b.received()).toBe(`STORED\r\nVALUE noise 0 40\r\n${'N'.repeat(40)}\r\nEND\r\n`);
    });
  });
});
