import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { acceptQueue, isLoopback, queuedInTable } from '../src/accept-queue.js';

// Lines as Linux writes them: a listener on 127.0.0.1:8080 with 3 connections waiting, one on
// 0.0.0.0:8080 (another process sharing the port) with 2, a connection to 8080 (not a listener).
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000003 00:00000000 00000000  1000        0 1 1 0 100 0 0 10 0
   1: 00000000:1F90 00000000:0000 0A 00000000:00000002 00:00000000 00000000  1000        0 2 1 0 100 0 0 10 0
   2: 0100007F:C350 0100007F:1F90 01 00000000:00000007 00:00000000 00000000  1000        0 3 1 0 20 4 30 10 -1
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:0000000A 00:00000000 00000000  1000        0 4 1 0 100 0 0 10 0
`;

describe('accept queue', () => {
  it('sums the accept queues of the sockets listening on the port, and only those', () => {
    expect(queuedInTable(TCP, 8080)).toBe(5);
    expect(queuedInTable(TCP6, 8080)).toBe(10);
    expect(queuedInTable(TCP, 50000)).toBeUndefined();
    expect(queuedInTable('', 8080)).toBeUndefined();
  });

  it('knows the loopback names and addresses, and nothing else', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
      expect(isLoopback(host), host).toBe(true);
    for (const host of ['10.0.0.1', 'example.test', '::', '1127.0.0.1', '127.0.0.1.nip'])
      expect(isLoopback(host), host).toBe(false);
  });

  it.skipIf(process.platform !== 'linux')(
    'reads a real listener on this machine: empty once accepted, nothing where none listens',
    async () => {
      const server = createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      expect(await acceptQueue(port)).toBe(0);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      expect(await acceptQueue(port)).toBeUndefined();
    },
  );
});
