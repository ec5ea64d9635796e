// Where a server's downstream calls go (bundled into probe.cjs): the endpoint a client socket
// connects to, as the client named it, and the protocol it speaks where the port or the first
// bytes tell it. Used by probe-downstream.ts.
import type { DownstreamEndpoint, DownstreamProtocol } from '../downstream-model.js';

/**
 * A stack taken and the calls it stands for: the calls to its endpoint started since the stack
 * before, and its own. Each call's waiting is its own, added as it ends (held until the stack is
 * taken): the functions' waiting is the sum of real durations, not one call's times the count.
 */
export class StackGroup {
  fn = -1;
  /** The function that resumed from an await to make the call. */
  resumed = -1;
  /** The stack's index once it was taken (-1: not yet; fn and resumed hold from then). */
  stack = -1;
  /** Calls that ended in the window before the stack was taken, and their waiting (µs). */
  heldCalls = 0;
  heldMicros = 0;
  /** Of heldCalls, those made outside any request. */
  heldOutside = 0;
}

/** One endpoint and its counters for the open window. */
export class Endpoint {
  calls = 0;
  waitingMicros = 0;
  connections = 0;
  bytesOut = 0;
  bytesIn = 0;
  /** The calls started since the last stack taken, for the next stack. */
  group = new StackGroup();
  /** The group of the window's last stack: the calls after it stand with it when the window closes. */
  stacked: StackGroup | undefined;
  protocol: DownstreamProtocol | undefined;
  constructor(
    readonly key: string,
    readonly transport: 'tcp' | 'unix',
    readonly port: number,
  ) {
    this.protocol = protocolOfPort(port);
  }

  /** A new window: every counter from zero, no calls for the next stack yet. */
  reset(): void {
    this.calls = 0;
    this.waitingMicros = 0;
    this.connections = 0;
    this.bytesOut = 0;
    this.bytesIn = 0;
    this.group = new StackGroup();
    this.stacked = undefined;
  }
}

/** The window's rows of the endpoints that saw anything, and each one's row number. */
export function endpointRows(all: Endpoint[]): {
  endpoints: DownstreamEndpoint[];
  endpointAt: Map<Endpoint, number>;
} {
  const endpoints: DownstreamEndpoint[] = [];
  const endpointAt = new Map<Endpoint, number>();
  for (const endpoint of all) {
    if (!endpoint.calls && !endpoint.connections && !endpoint.bytesOut && !endpoint.bytesIn) continue;
    endpointAt.set(endpoint, endpoints.length);
    endpoints.push({
      endpoint: endpoint.key,
      transport: endpoint.transport,
      ...(endpoint.protocol ? { protocol: endpoint.protocol } : {}),
      calls: endpoint.calls,
      waitingMicros: Math.round(endpoint.waitingMicros),
      connections: endpoint.connections,
      bytesOut: endpoint.bytesOut,
      bytesIn: endpoint.bytesIn,
    });
  }
  return { endpoints, endpointAt };
}

function protocolOfPort(port: number): DownstreamProtocol | undefined {
  if (port === 5432) return 'postgres';
  if (port === 6379) return 'redis';
  if (port === 11211) return 'memcache';
  if (port === 3306) return 'mysql';
  if (port === 80 || port === 8080) return 'http';
  if (port === 443) return 'https';
  return undefined;
}

function byteAt(chunk: unknown, i: number): number {
  if (typeof chunk === 'string') return i < chunk.length ? chunk.charCodeAt(i) & 0xff : -1;
  if (chunk instanceof Uint8Array) return i < chunk.length ? (chunk[i] as number) : -1;
  return -1;
}

/** The first four bytes as a big-endian number (-1 when shorter). */
function word(chunk: unknown, at: number): number {
  const a = byteAt(chunk, at);
  const d = byteAt(chunk, at + 3);
  if (a < 0 || d < 0) return -1;
  return ((a << 24) | (byteAt(chunk, at + 1) << 16) | (byteAt(chunk, at + 2) << 8) | d) >>> 0;
}

const ascii = (text: string) => word(text, 0);
const HTTP_METHODS = new Set(
  ['GET ', 'POST', 'PUT ', 'HEAD', 'DELE', 'PATC', 'OPTI', 'CONN', 'TRAC'].map(ascii),
);
const MEMCACHE_TEXT = new Set(
  ['get ', 'gets', 'set ', 'add ', 'repl', 'appe', 'prep', 'cas ', 'dele', 'incr', 'decr', 'touc', 'gat ']
    .concat(['gats', 'stat', 'vers', 'flus', 'mg ', 'ms ', 'md ', 'ma ', 'mn\r\n'])
    .map((command) => ascii(command.padEnd(4, ' ').slice(0, 4))),
);
const POSTGRES_STARTUP = new Set([0x00030000, 80877103, 80877104]);

/** The protocol a client's first write speaks, where its bytes say. */
export function protocolOfWrite(chunk: unknown, encrypted: boolean): DownstreamProtocol | undefined {
  const head = word(chunk, 0);
  if (head < 0) return undefined;
  if (HTTP_METHODS.has(head)) return encrypted ? 'https' : 'http';
  if (POSTGRES_STARTUP.has(word(chunk, 4))) return 'postgres';
  const first = head >>> 24;
  const second = (head >>> 16) & 0xff;
  if (first === 0x2a && second >= 0x30 && second <= 0x39) return 'redis';
  if (first === 0x80 || MEMCACHE_TEXT.has(head)) return 'memcache';
  return undefined;
}

/** MySQL's server speaks first: a packet of sequence 0 whose payload opens with protocol 10. */
export function protocolOfGreeting(chunk: unknown): DownstreamProtocol | undefined {
  return byteAt(chunk, 3) === 0 && byteAt(chunk, 4) === 0x0a ? 'mysql' : undefined;
}

/** The endpoint a connect call names: its arguments as net.Socket#connect takes them. */
export function endpointOf(args: unknown[]): { key: string; transport: 'tcp' | 'unix'; port: number } {
  let first = args[0];
  if (Array.isArray(first)) first = first[0];
  let host: unknown = 'localhost';
  let port: unknown;
  if (first && typeof first === 'object') {
    const options = first as { path?: unknown; host?: unknown; port?: unknown };
    if (typeof options.path === 'string' && options.path)
      return { key: options.path, transport: 'unix', port: 0 };
    if (typeof options.host === 'string' && options.host) host = options.host;
    port = options.port;
  } else if (typeof first === 'string' && !/^\d+$/.test(first)) {
    return { key: first, transport: 'unix', port: 0 };
  } else {
    port = first;
    if (typeof args[1] === 'string' && args[1]) host = args[1];
  }
  const number = Number(port);
  const name = String(host);
  const key = `${name.includes(':') ? `[${name}]` : name}:${Number.isFinite(number) ? number : '?'}`;
  return { key, transport: 'tcp', port: number };
}
