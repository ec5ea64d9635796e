import { connect, createServer } from 'node:net';

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** One TCP connect attempt; true when the port accepted. */
export function canConnect(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (ok: boolean) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export type Readiness = { state: 'ready' } | { state: 'exited' } | { state: 'timeout' };

/** A node server listens some 100–200 ms after its start: polled every 20 ms for 2 s, then every 100 ms. */
const FAST_POLL_MS = 20;
const FAST_FOR_MS = 2000;
const SLOW_POLL_MS = 100;

/**
 * Polls until the port accepts a connection or `attached()` says the server's probe reported it
 * listening, the watched process exits (`exited` settles), or `timeoutMs` passes.
 */
export async function waitUntilReady(
  port: number,
  exited: Promise<unknown>,
  timeoutMs: number,
  host = '127.0.0.1',
  attached?: () => boolean,
): Promise<Readiness> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const started = Date.now();
  const deadline = started + timeoutMs;
  while (!gone) {
    if (attached?.() || (await canConnect(port, host, 500))) return { state: 'ready' };
    if (gone) break;
    if (Date.now() >= deadline) return { state: 'timeout' };
    const poll = Date.now() - started < FAST_FOR_MS ? FAST_POLL_MS : SLOW_POLL_MS;
    await new Promise((resolve) => setTimeout(resolve, poll));
  }
  return { state: 'exited' };
}
