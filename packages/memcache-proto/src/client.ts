import {
  type ClientCodec,
  type ClientReply,
  type ClientValue,
  textCodec,
  unexpectedReply,
} from './client-codec.js';
import { ClientConnection } from './client-connection.js';
import { metaCodec } from './client-meta-codec.js';
import { HotpathMcError } from './errors.js';
import { KetamaRing, type RingServer } from './ketama.js';
import {
  encodeFlushAll,
  encodeStats,
  encodeVersion,
  type StorageCommand,
  type StoreOptions,
} from './text-encoder.js';

export type { ClientValue } from './client-codec.js';

export interface ClientOptions {
  /** "host:port" strings or objects; several servers are spread by ketama hashing. */
  servers: (string | RingServer)[];
  /** Connections per server; requests are spread round-robin and pipelined. Default 1. */
  poolSize?: number;
  /** Request and connect timeout, ms. Default 2000. */
  timeout?: number;
  /** After a failed connect, wait this long before trying that server again, ms. Default 1000. */
  retryDelay?: number;
  /**
   * 'text' (get/set/… commands, the default) or 'meta' (mg/ms/md/ma/mn; keys that are not
   * printable ASCII go base64). flush_all, version and stats are text commands in both modes.
   * Results are the same in both.
   */
  protocol?: 'text' | 'meta';
}

interface ServerSlot {
  server: RingServer;
  connections: (ClientConnection<ClientReply> | undefined)[];
  next: number;
  downUntil: number;
}

function parseServer(spec: string | RingServer): RingServer {
  if (typeof spec !== 'string') return spec;
  const match = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(spec);
  const host = match?.[1];
  const port = match?.[2] === undefined ? 11211 : Number(match[2]);
  if (host === undefined || port < 1 || port > 65535) {
    throw new HotpathMcError(
      'HP_MC_INVALID_OPTION',
      `server must look like host:port, got ${JSON.stringify(spec)}`,
    );
  }
  return { host, port };
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
  private readonly codec: ClientCodec;
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
    const protocol = options.protocol ?? 'text';
    if (protocol !== 'text' && protocol !== 'meta') {
      throw new HotpathMcError(
        'HP_MC_INVALID_OPTION',
        `protocol must be 'text' or 'meta', got ${JSON.stringify(protocol)}`,
      );
    }
    this.codec = protocol === 'meta' ? metaCodec : textCodec;
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
    const server = this.slotFor(key).server;
    return `${server.host}:${server.port}`;
  }

  /** The slot of the server the ring places key on. */
  private slotFor(key: string): ServerSlot {
    const index = this.ring.serverFor(key);
    const slot = this.slots[index];
    if (slot === undefined) {
      throw new HotpathMcError(
        'HP_MC_NO_SERVERS',
        `no server for key ${JSON.stringify(key)} (ring index ${index})`,
      );
    }
    return slot;
  }

  /** The protocol this client speaks. */
  get protocol(): 'text' | 'meta' {
    return this.codec.protocol;
  }

  private connection(slot: ServerSlot): ClientConnection<ClientReply> {
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
      conn = new ClientConnection({
        host: slot.server.host,
        port: slot.server.port,
        timeout: this.timeout,
        createParser: this.codec.createParser,
        endsBatch: this.codec.endsBatch,
      });
      conn.ready.catch(() => {
        slot.downUntil = Date.now() + this.retryDelay;
      });
      slot.connections[index] = conn;
    }
    return conn;
  }

  private request(key: string, data: Buffer): Promise<ClientReply> {
    try {
      return this.connection(this.slotFor(key)).request(data);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async retrieve(mode: 'get' | 'gets' | 'gat', key: string, exptime: number) {
    const reply = await this.request(key, this.codec.encodeRetrieve(mode, key, exptime));
    return this.codec.readValue(reply, mode, key);
  }

  get(key: string): Promise<ClientValue | undefined> {
    return this.retrieve('get', key, 0);
  }

  /** get with the cas unique (for cas()). */
  gets(key: string): Promise<ClientValue | undefined> {
    return this.retrieve('gets', key, 0);
  }

  /** Fetches and sets a new exptime. */
  gat(key: string, exptime: number): Promise<ClientValue | undefined> {
    return this.retrieve('gat', key, exptime);
  }

  /** One multi-key get per server, in parallel; missing keys are absent from the map. */
  async getMulti(keys: readonly string[]): Promise<Map<string, ClientValue>> {
    const byServer = new Map<ServerSlot, string[]>();
    for (const key of keys) {
      const slot = this.slotFor(key);
      const list = byServer.get(slot);
      if (list === undefined) byServer.set(slot, [key]);
      else list.push(key);
    }
    const result = new Map<string, ClientValue>();
    const codec = this.codec;
    await Promise.all(
      [...byServer].map(async ([slot, list]) => {
        const conn = this.connection(slot);
        const data = codec.encodeGetMulti(list);
        const replies = codec.multiIsBatch ? await conn.requestBatch(data) : [await conn.request(data)];
        codec.readMulti(replies, list, result);
      }),
    );
    return result;
  }

  private async store(command: StorageCommand, key: string, value: Buffer | string, options: StoreOptions) {
    const what = `${command} ${key}`;
    const reply = await this.request(key, this.codec.encodeStore(command, key, value, options));
    return this.codec.readStore(reply, what);
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
    const reply = await this.request(key, this.codec.encodeDelete(key));
    return this.codec.readDelete(reply, `delete ${key}`);
  }

  /** Resolves the new value, or undefined when the key is missing. */
  async incr(key: string, delta: bigint | number = 1): Promise<bigint | undefined> {
    return this.delta('incr', key, delta);
  }
  async decr(key: string, delta: bigint | number = 1): Promise<bigint | undefined> {
    return this.delta('decr', key, delta);
  }
  private async delta(command: 'incr' | 'decr', key: string, delta: bigint | number) {
    const reply = await this.request(key, this.codec.encodeDelta(command, key, delta));
    return this.codec.readDelta(reply, `${command} ${key}`);
  }

  async touch(key: string, exptime: number): Promise<boolean> {
    const reply = await this.request(key, this.codec.encodeTouch(key, exptime));
    return this.codec.readTouch(reply, `touch ${key}`);
  }

  /** Each server's reply, by "host:port". */
  private async everyServer<T>(data: Buffer, read: (reply: ClientReply) => T): Promise<Record<string, T>> {
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
      if (reply.type !== 'status' || reply.status !== 'OK') throw unexpectedReply(reply, 'flush_all');
    });
  }

  async version(): Promise<Record<string, string>> {
    return this.everyServer(encodeVersion(), (reply) => {
      if (reply.type !== 'version') throw unexpectedReply(reply, 'version');
      return reply.version;
    });
  }

  async stats(group?: string): Promise<Record<string, Record<string, string>>> {
    return this.everyServer(encodeStats(group), (reply) => {
      if (reply.type === 'stats') return reply.stats;
      if (reply.type === 'values' && reply.values.length === 0) return {};
      throw unexpectedReply(reply, 'stats');
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
