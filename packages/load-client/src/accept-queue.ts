// Whether a server on this machine has accepted every connection made to it: Linux shows, for
// each listening TCP socket, how many connections wait in its accept queue (the rx_queue column of
// /proc/net/tcp and /proc/net/tcp6 for a socket in state 0A, LISTEN). connectFirst watches it
// empty before the clocks start, instead of guessing how long the server needs for its turns.
import { readFile } from 'node:fs/promises';

const LISTEN = '0A';
const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];

/** Whether `host` is this machine's loopback interface (the only addresses whose listeners it sees). */
export function isLoopback(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/**
 * Connections waiting to be accepted by the sockets listening on `port` on this machine (summed
 * over all of them: several processes may share a port), read from one table's text. Undefined
 * where none listens on the port.
 */
export function queuedInTable(text: string, port: number): number | undefined {
  let waiting: number | undefined;
  for (const line of text.split('\n')) {
    // "  0: 0100007F:1F90 00000000:0000 0A 00000000:00000003 ...": local address, remote, state, tx:rx
    const fields = line.trim().split(/\s+/);
    if (fields.length < 5 || fields[3] !== LISTEN) continue;
    const local = fields[1] ?? '';
    if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) !== port) continue;
    const queued = Number.parseInt((fields[4] ?? '').split(':')[1] ?? '', 16);
    if (Number.isFinite(queued)) waiting = (waiting ?? 0) + queued;
  }
  return waiting;
}

/**
 * Connections waiting in the accept queues of this machine's sockets listening on `port`;
 * undefined where it cannot tell (not Linux, no such tables, nothing listening on the port).
 * Never throws.
 */
export async function acceptQueue(port: number): Promise<number | undefined> {
  let waiting: number | undefined;
  for (const table of TABLES) {
    const text = await readFile(table, 'utf8').catch(() => undefined);
    const queued = text === undefined ? undefined : queuedInTable(text, port);
    if (queued !== undefined) waiting = (waiting ?? 0) + queued;
  }
  return waiting;
}
