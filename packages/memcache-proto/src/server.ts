import { chmodSync, lstatSync, readFileSync, type Stats, unlinkSync } from 'node:fs';
import { type AddressInfo, createServer as createNetServer, type Server, type Socket } from 'node:net';
import { type AuthUsers, readAuthfile } from './authfile.js';
import { BufferBudget } from './buffer-budget.js';
import { Cache } from './cache.js';
import { Connection } from './connection.js';
import { HotpathMcError } from './errors.js';
import { LINE_MAX_BYTES } from './protocol-limits.js';
import type { ConnectionSettings } from './session.js';
import { SlabAutomover } from './slab-automove.js';

/**
 * What `version` answers: the memcached release whose protocol the server speaks, `x.y.z` and
 * nothing more (clients parse it strictly).
 */
export const SERVER_VERSION = '1.6.18';

/** hotpath's own name and version, reported as the `hotpath_version` stat. */
export const SERVER_IDENTITY = `hotpath-memcached ${
  (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
    .version
}`;

export interface ServerOptions {
  /** TCP port; 0 picks a free one. Default 11211. */
  port?: number;
  /** Listen address. Default 127.0.0.1 (never all interfaces unless asked). */
  host?: string;
  /** Item memory limit in megabytes (memcached's -m). Default 64. */
  memoryMb?: number;
  /** Maximum simultaneous connections (-c); the one over the limit is refused. Default 1024. */
  maxConnections?: number;
  /** Slab chunk size growth factor between classes (-f). Default 1.25. */
  growthFactor?: number;
  /** Minimum key + value space of the smallest slab chunk (-n). Default 48. */
  minChunkBytes?: number;
  /** Largest item in bytes (-I). Default 1 MiB. */
  itemSizeMax?: number;
  /** 0 quiet, 1 errors and warnings, 2 connections too (-v, -vv). */
  verbosity?: number;
  /** Close connections idle this many seconds; 0 = never (memcached's idle_timeout). */
  idleTimeoutSeconds?: number;
  /** Path of an authfile of `user:password` lines (-Y); turns authentication on. */
  authfile?: string;
  /** Users checked instead of an authfile (for embedding). */
  users?: AuthUsers;
  /** Per-connection cap on buffered input. Default itemSizeMax + 64 KiB. */
  maxInputBytes?: number;
  /** Per-connection cap on queued output before reading pauses. Default 8 MiB. */
  maxOutputBytes?: number;
  /**
   * One budget, in megabytes, for the buffered input and unsent output of all connections
   * together (memcached's `-o read_buf_mem_limit`): over it, the connections holding the most are
   * closed until the total is back under it. 0 = no shared limit (each connection's own caps still
   * apply). Default 64, or the two per-connection caps together when they are larger.
   */
  bufferMemoryLimitMb?: number;
  /** How often expired items are swept, in ms. Default 1000. */
  sweepIntervalMs?: number;
  /** Listen on this unix socket instead of TCP (memcached's -s); a stale socket file there is replaced. */
  socketPath?: string;
  /** Permission bits of the unix socket (-a). Default 0o700. */
  socketMask?: number;
  /** Backlog of pending connections (-b). Default 1024. */
  backlog?: number;
  /** false: a full store answers `SERVER_ERROR out of memory storing object` instead of evicting (-M). */
  evictions?: boolean;
  /** false: items carry no cas (gets shows 0, cas commands answer EXISTS), as memcached's -C. */
  casEnabled?: boolean;
  /** false: flush_all is refused (-F). */
  flushEnabled?: boolean;
  /** true: the text command `shutdown` closes the server (-A). */
  enableShutdown?: boolean;
  /** Which protocols a connection may speak (-B). Default 'auto' (binary when the first byte is 0x80). */
  protocol?: 'auto' | 'ascii' | 'binary';
  /** Commands served from one connection's input before other connections get a turn (-R); 0 = no limit. */
  maxReqsPerEvent?: number;
  /** Move slab pages between classes as the mix of item sizes changes (memcached's slab_automove=1). Default true. */
  slabAutomove?: boolean;
  /** How often the automover decides, in ms (memcached: every second). Default 1000. */
  slabAutomoveIntervalMs?: number;
  /** Called after `shutdown` (with enableShutdown) has closed the server. */
  onShutdown?: () => void;
  /** Where log lines go. Default stderr. */
  log?: (line: string) => void;
  /**
   * Read every connection into one shared 64 KiB buffer instead of a new Buffer per read (about
   * 1 µs less CPU per request). Uses the internals behind Node's `onread` socket option and
   * falls back to ordinary reads where they are missing. Default true.
   */
  sharedInputBuffer?: boolean;
  /**
   * Write each read's replies straight to the socket's handle while nothing is queued in the
   * stream, skipping the Writable machinery's per-write state and tick (through the
   * `stream_wrap` binding Node's sockets use); replies that cannot go out at once queue as usual.
   * Falls back to `socket.write` where that binding is missing. Default true.
   */
  directWrite?: boolean;
}

export interface MemcachedServer {
  readonly cache: Cache;
  readonly settings: ConnectionSettings;
  /** Starts listening; resolves with the bound address. */
  listen(): Promise<AddressInfo>;
  /** Stops accepting, closes every connection, stops the sweeper. */
  close(): Promise<void>;
  /** Bound port (after listen). */
  readonly port: number;
  readonly connections: number;
}

const MIB = 1024 * 1024;

function checkInteger(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new HotpathMcError(
      'HP_MC_INVALID_OPTION',
      `${name} must be an integer from ${min} to ${max}, got ${String(value)}`,
    );
  }
  return value;
}

export function createServer(options: ServerOptions = {}): MemcachedServer {
  const port = checkInteger('port', options.port ?? 11211, 0, 65535);
  const host = options.host ?? '127.0.0.1';
  const socketPath = options.socketPath;
  const memoryMb = checkInteger('memoryMb', options.memoryMb ?? 64, 1, 1 << 20);
  const maxConnections = checkInteger('maxConnections', options.maxConnections ?? 1024, 1, 1 << 20);
  const itemSizeMax = checkInteger(
    'itemSizeMax',
    options.itemSizeMax ?? 1024 * 1024,
    1024,
    1024 * 1024 * 1024,
  );
  const idleTimeoutSeconds = checkInteger('idleTimeoutSeconds', options.idleTimeoutSeconds ?? 0, 0, 1 << 30);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const users =
    options.users ?? (options.authfile === undefined ? undefined : readAuthfile(options.authfile));
  const growthFactor = options.growthFactor ?? 1.25;
  if (!(growthFactor > 1 && growthFactor <= 8)) {
    throw new HotpathMcError(
      'HP_MC_INVALID_OPTION',
      `growthFactor must be a number above 1 and at most 8, got ${String(growthFactor)}`,
    );
  }
  const minChunkBytes = checkInteger('minChunkBytes', options.minChunkBytes ?? 48, 1, 1024 * 1024);
  const backlog = checkInteger('backlog', options.backlog ?? 1024, 1, 1 << 20);
  const socketMask = checkInteger('socketMask', options.socketMask ?? 0o700, 0, 0o777);
  const protocol = options.protocol ?? 'auto';
  if (protocol !== 'auto' && protocol !== 'ascii' && protocol !== 'binary') {
    throw new HotpathMcError(
      'HP_MC_INVALID_OPTION',
      `protocol must be one of auto, ascii, binary, got ${JSON.stringify(protocol)}`,
    );
  }
  const cache = new Cache({
    memoryLimitBytes: memoryMb * 1024 * 1024,
    itemSizeMax,
    growthFactor,
    minChunkBytes,
    evictions: options.evictions ?? true,
    casEnabled: options.casEnabled ?? true,
  });
  const maxInputBytes = checkInteger(
    'maxInputBytes',
    options.maxInputBytes ?? itemSizeMax + 64 * 1024,
    4096,
    Number.MAX_SAFE_INTEGER,
  );
  const maxOutputBytes = checkInteger(
    'maxOutputBytes',
    options.maxOutputBytes ?? 8 * 1024 * 1024,
    4096,
    Number.MAX_SAFE_INTEGER,
  );
  const bufferMemoryLimitMb = checkInteger(
    'bufferMemoryLimitMb',
    options.bufferMemoryLimitMb ?? Math.max(64, Math.ceil((maxInputBytes + maxOutputBytes) / MIB)),
    0,
    1 << 20,
  );
  const settings: ConnectionSettings = {
    version: SERVER_VERSION,
    identity: SERVER_IDENTITY,
    verbosity: checkInteger('verbosity', options.verbosity ?? 0, 0, 3),
    maxLineBytes: LINE_MAX_BYTES,
    maxInputBytes,
    maxOutputBytes,
    users,
    log,
    port,
    listen: host,
    maxConnections,
    idleTimeoutSeconds,
    protocol,
    flushEnabled: options.flushEnabled ?? true,
    shutdownEnabled: options.enableShutdown ?? false,
    shutdown: () => {
      void close().then(() => options.onShutdown?.());
    },
    maxReqsPerEvent: checkInteger('maxReqsPerEvent', options.maxReqsPerEvent ?? 0, 0, 1 << 30),
    evictions: options.evictions ?? true,
    casEnabled: options.casEnabled ?? true,
  };
  const sweepIntervalMs = checkInteger('sweepIntervalMs', options.sweepIntervalMs ?? 1000, 10, 3_600_000);
  const budget = new BufferBudget(bufferMemoryLimitMb * MIB);
  const live = new Set<Connection>();
  const stats = cache.stats;
  let sweeper: NodeJS.Timeout | undefined;
  let automoveTimer: NodeJS.Timeout | undefined;
  const automoveIntervalMs = checkInteger(
    'slabAutomoveIntervalMs',
    options.slabAutomoveIntervalMs ?? 1000,
    10,
    3_600_000,
  );
  const automover = (options.slabAutomove ?? true) ? new SlabAutomover(cache.store) : undefined;
  let boundPort = 0;

  const sockets = new Set<Socket>();
  const sharedInputBuffer = options.sharedInputBuffer ?? true;
  const directWrite = options.directWrite ?? true;
  // Sockets start paused so that Connection can choose how they read before the first byte.
  const server: Server = createNetServer({ noDelay: true, pauseOnConnect: true }, (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    if (live.size >= maxConnections) {
      stats.rejectedConnections++;
      if (settings.verbosity > 0) log('Too many open connections');
      socket.on('error', () => {});
      // as memcached: the error line, then the socket is closed at once (not when the peer
      // closes its side, which would let a client hold every file descriptor)
      socket.write('ERROR Too many open connections\r\n');
      socket.destroySoon();
      return;
    }
    stats.currConnections++;
    stats.totalConnections++;
    const conn = new Connection(socket, cache, settings, budget, sharedInputBuffer, directWrite);
    live.add(conn);
    if (settings.verbosity > 1) log(`new connection from ${socket.remoteAddress}:${socket.remotePort}`);
    if (idleTimeoutSeconds > 0) {
      socket.setTimeout(idleTimeoutSeconds * 1000, () => {
        if (settings.verbosity > 0) log('closing idle connection');
        conn.destroy();
      });
    }
    socket.on('error', (error) => {
      if (settings.verbosity > 0) log(`connection error: ${error.message}`);
    });
    socket.on('close', () => {
      live.delete(conn);
      stats.currConnections--;
    });
  });

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    if (sweeper !== undefined) clearInterval(sweeper);
    if (automoveTimer !== undefined) clearInterval(automoveTimer);
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
    return closing;
  }

  return {
    cache,
    settings,
    get port() {
      return boundPort;
    },
    get connections() {
      return live.size;
    },
    listen() {
      return new Promise<AddressInfo>((resolve, reject) => {
        const where = socketPath ?? `${host}:${port}`;
        const onError = (error: Error) =>
          reject(
            new HotpathMcError('HP_MC_LISTEN', `cannot listen on ${where}: ${error.message}`, {
              cause: error,
            }),
          );
        server.once('error', onError);
        const listening = () => {
          server.off('error', onError);
          const address = server.address();
          if (socketPath !== undefined) {
            try {
              chmodSync(socketPath, socketMask);
            } catch (error) {
              server.close();
              onError(error as Error);
              return;
            }
            boundPort = 0;
            settings.port = 0;
          } else {
            boundPort = (address as AddressInfo).port;
            settings.port = boundPort;
          }
          sweeper = setInterval(() => cache.store.sweep(), sweepIntervalMs);
          sweeper.unref();
          if (automover !== undefined) {
            automoveTimer = setInterval(() => automover.run(Date.now()), automoveIntervalMs);
            automoveTimer.unref();
          }
          resolve(
            socketPath === undefined
              ? (address as AddressInfo)
              : { address: socketPath, family: 'unix', port: 0 },
          );
        };
        if (socketPath === undefined) {
          server.listen({ port, host, backlog }, listening);
          return;
        }
        try {
          removeStaleSocket(socketPath);
        } catch (error) {
          server.off('error', onError);
          onError(error as Error);
          return;
        }
        server.listen({ path: socketPath, backlog }, listening);
      });
    },
    close,
  };
}

/** memcached's -s: a socket file left by an earlier run is replaced; any other file is an error. */
function removeStaleSocket(path: string): void {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch {
    return; // nothing there
  }
  if (!stat.isSocket()) throw new Error(`${path} exists and is not a socket`);
  unlinkSync(path);
}
