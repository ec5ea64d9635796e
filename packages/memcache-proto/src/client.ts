import { ClientConnection } from './client-connection.js';
import { HotpathMcError } from './errors.js';
import { KetamaRing, type RingServer } from './ketama.js';
import {
  encodeDelete,
  encodeDelta,
  encodeFlushAll,
  encodeGat,
  encodeGet,
  encodeGets,
  encodeStats,
  encodeStore,
  encodeTouch,
  encodeVersion,
  type StorageCommand,
  type StoreOptions,
} from './text-encoder.js';
import type { TextReply, TextValue } from './text-reply-parser.js';

export interface ClientOptions {
  /** "host:port" strings or objects; several servers are spread by ketama hashing. */
  servers: (string | RingServer)[];
  /** Connections per server; requests are spread round-robin and pipelined. Default 1. */
  poolSize?: number;
  /** Request and connect timeout, ms. Default 2000. */
  timeout?: number;
  /** After a failed connect, wait this long before trying that server again, ms. Default 1000. */
  retryDelay?: number;
}

export type ClientValue = TextValue;

interface ServerSlot {
  server: RingServer;
  connections: (ClientConnection | undefined)[];
  next: number;
  downUntil: number;
}

function parseServer(spec: string | RingServer): RingServer {
  if (typeof spec !== 'string') return spec;
  const match = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(spec);
  const port = match?.[2] === undefined ? 11211 : Number(match[2]);
  if (match === null || port < 1 || port > 65535) {
    throw new HotpathMcError(
      'HP_MC_INVALID_OPTION',
      `server must look like host:port, got ${JSON.stringify(spec)}`,
    );
  }
  return { host: match[1]!, port };
}

function expectError(reply: TextReply, what: string): HotpathMcError {
  const text =
    reply.type === 'error'
      ? `${reply.kind}${reply.message ? ` ${reply.message}` : ''}`
      : JSON.stringify(reply.type);
  return new HotpathMcError('HP_MC_SERVER_ERROR', `${what}: server replied ${text}`);
}

/**
 * A memcached client: promise API, requests pipelined on each connection, a pool of
 * connections per server, several servers placed on a ketama ring, timeouts, and lazy
 * reconnects (a broken connection is replaced on the next request).
 */
export class Client {
  private readonly slots: ServerSlot[];
  private readonly ring: KetamaRing;
  private readonly timeout: number;
  private readonly retryDelay: number;
  private closed = false;

  constructor(options: ClientOptions) {
    if (options.servers.length === 0)
      throw new HotpathMcError('HP_MC_NO_SERVERS', 'servers must list at least one server');
    const poolSize = options.poolSize ?? 1;
    if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1024) {
      throw new HotpathMcError(
        'HP_MC_INVALID_OPTION',
        `poolSize must be an integer from 1 to 1024, got ${poolSize}`,
      );
    }
    this.timeout = options.timeout ?? 2000;
    this.retryDelay = options.retryDelay ?? 1000;
    if (!(this.timeout > 0)) {
      throw new HotpathMcError(
        'HP_MC_INVALID_OPTION',
        `timeout must be a positive number of ms, got ${this.timeout}`,
      );
    }
    const servers = options.servers.map(parseServer);
    this.slots = servers.map((server) => ({
      server,
      connections: new Array(poolSize),
      next: 0,
      downUntil: 0,
    }));
    this.ring = new KetamaRing(servers);
  }

  /** The server a key maps to ("host:port"). */
  serverFor(key: string): string {
    const server = this.slots[this.ring.serverFor(key)]!.server;
    return `${server.host}:${server.port}`;
  }

  private connection(slot: ServerSlot): ClientConnection {
    if (this.closed) throw new HotpathMcError('HP_MC_CONNECTION_CLOSED', 'client is closed');
    const index = slot.next;
    slot.next = (index + 1) % slot.connections.length;
    let conn = slot.connections[index];
    if (conn === undefined || conn.closed) {
      if (slot.downUntil > Date.now()) {
        throw new HotpathMcError(
          'HP_MC_CONNECT_FAILED',
          `server ${slot.server.host}:${slot.server.port} failed recently; retrying after ${this.retryDelay} ms`,
        );
      }
      conn = new ClientConnection({ host: slot.server.host, port: slot.server.port, timeout: this.timeout });
      conn.ready.catch(() => {
        slot.downUntil = Date.now() + this.retryDelay;
      });
      slot.connections[index] = conn;
    }
    return conn;
  }

  private request(key: string, data: Buffer): Promise<TextReply> {
    try {
      return this.connection(this.slots[this.ring.serverFor(key)]!).request(data);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async get(key: string): Promise<ClientValue | undefined> {
    const reply = await this.request(key, encodeGet(key));
    if (reply.type !== 'values') throw expectError(reply, `get ${key}`);
    return reply.values[0];
  }

  /** get with the cas unique (for cas()). */
  async gets(key: string): Promise<ClientValue | undefined> {
    const reply = await this.request(key, encodeGets(key));
    if (reply.type !== 'values') throw expectError(reply, `gets ${key}`);
    return reply.values[0];
  }

  /** Fetches and sets a new exptime. */
  async gat(key: string, exptime: number): Promise<ClientValue | undefined> {
    const reply = await this.request(key, encodeGat(exptime, key));
    if (reply.type !== 'values') throw expectError(reply, `gat ${key}`);
    return reply.values[0];
  }

  /** One multi-key get per server, in parallel; missing keys are absent from the map. */
  async getMulti(keys: readonly string[]): Promise<Map<string, ClientValue>> {
    const byServer = new Map<number, string[]>();
    for (const key of keys) {
      const index = this.ring.serverFor(key);
      const list = byServer.get(index);
      if (list === undefined) byServer.set(index, [key]);
      else list.push(key);
    }
    const result = new Map<string, ClientValue>();
    await Promise.all(
      [...byServer].map(async ([index, list]) => {
        const reply = await this.connection(this.slots[index]!).request(encodeGet(list));
        if (reply.type !== 'values') throw expectError(reply, 'get');
        for (const value of reply.values) result.set(value.key, value);
      }),
    );
    return result;
  }

  private async store(command: StorageCommand, key: string, value: Buffer | string, options: StoreOptions) {
    const reply = await this.request(key, encodeStore(command, key, value, options));
    if (reply.type !== 'status') throw expectError(reply, `${command} ${key}`);
    return reply.status;
  }

  /** Resolves true when STORED. */
  async set(key: string, value: Buffer | string, options: Omit<StoreOptions, 'cas' | 'noreply'> = {}) {
    return (await this.store('set', key, value, options)) === 'STORED';
  }
  async add(key: string, value: Buffer | string, options: Omit<StoreOptions, 'cas' | 'noreply'> = {}) {
    return (await this.store('add', key, value, options)) === 'STORED';
  }
  async replace(key: string, value: Buffer | string, options: Omit<StoreOptions, 'cas' | 'noreply'> = {}) {
    return (await this.store('replace', key, value, options)) === 'STORED';
  }
  async append(key: string, value: Buffer | string) {
    return (await this.store('append', key, value, {})) === 'STORED';
  }
  async prepend(key: string, value: Buffer | string) {
    return (await this.store('prepend', key, value, {})) === 'STORED';
  }
  /** Resolves 'STORED', 'EXISTS' (changed since gets) or 'NOT_FOUND'. */
  async cas(
    key: string,
    value: Buffer | string,
    cas: bigint,
    options: Omit<StoreOptions, 'cas' | 'noreply'> = {},
  ) {
    return this.store('cas', key, value, { ...options, cas });
  }

  /** Resolves true when the key existed. */
  async delete(key: string): Promise<boolean> {
    const reply = await this.request(key, encodeDelete(key));
    if (reply.type !== 'status') throw expectError(reply, `delete ${key}`);
    return reply.status === 'DELETED';
  }

  /** Resolves the new value, or undefined when the key is missing. */
  async incr(key: string, delta: bigint | number = 1): Promise<bigint | undefined> {
    return this.delta('incr', key, delta);
  }
  async decr(key: string, delta: bigint | number = 1): Promise<bigint | undefined> {
    return this.delta('decr', key, delta);
  }
  private async delta(command: 'incr' | 'decr', key: string, delta: bigint | number) {
    const reply = await this.request(key, encodeDelta(command, key, delta));
    if (reply.type === 'number') return reply.value;
    if (reply.type === 'status' && reply.status === 'NOT_FOUND') return undefined;
    throw expectError(reply, `${command} ${key}`);
  }

  async touch(key: string, exptime: number): Promise<boolean> {
    const reply = await this.request(key, encodeTouch(key, exptime));
    if (reply.type !== 'status') throw expectError(reply, `touch ${key}`);
    return reply.status === 'TOUCHED';
  }

  /** Each server's reply, by "host:port". */
  private async everyServer<T>(data: Buffer, read: (reply: TextReply) => T): Promise<Record<string, T>> {
    const out: Record<string, T> = {};
    await Promise.all(
      this.slots.map(async (slot) => {
        out[`${slot.server.host}:${slot.server.port}`] = read(await this.connection(slot).request(data));
      }),
    );
    return out;
  }

  async flushAll(delay = 0): Promise<void> {
    await this.everyServer(encodeFlushAll(delay), (reply) => {
      if (reply.type !== 'status' || reply.status !== 'OK') throw expectError(reply, 'flush_all');
    });
  }

  async version(): Promise<Record<string, string>> {
    return this.everyServer(encodeVersion(), (reply) => {
      if (reply.type !== 'version') throw expectError(reply, 'version');
      return reply.version;
    });
  }

  async stats(group?: string): Promise<Record<string, Record<string, string>>> {
    return this.everyServer(encodeStats(group), (reply) => {
      if (reply.type === 'stats') return reply.stats;
      if (reply.type === 'values' && reply.values.length === 0) return {};
      throw expectError(reply, 'stats');
    });
  }

  /** Closes every connection; requests in flight fail with HP_MC_CONNECTION_CLOSED. */
  close(): void {
    this.closed = true;
    for (const slot of this.slots) for (const conn of slot.connections) conn?.close();
  }
}

export function createClient(options: ClientOptions): Client {
  return new Client(options);
}
