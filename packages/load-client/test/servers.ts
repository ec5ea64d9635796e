import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';

export interface Running {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1 and a free port. */
export async function httpServer(handler: RequestListener): Promise<Running & { server: Server }> {
  const server = createHttpServer({ keepAliveTimeout: 30_000 }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A raw TCP server: the handler sees each request's bytes and answers however it likes. */
export async function tcpServer(onData: (socket: Socket, chunk: Buffer) => void): Promise<Running> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.on('data', (chunk) => onData(socket, chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Counts complete requests in a byte stream of pipelined GETs (no bodies). */
export function countRequests(chunk: Buffer): number {
  let n = 0;
  let i = chunk.indexOf('\r\n\r\n');
  while (i !== -1) {
    n++;
    i = chunk.indexOf('\r\n\r\n', i + 4);
  }
  return n;
}
