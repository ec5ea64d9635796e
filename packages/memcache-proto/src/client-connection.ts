import net from 'node:net';
import { HotpathMcError } from './errors.js';

/** What a connection needs from a reply parser: bytes in; complete replies come out through onReply. */
export interface ReplyStream {
  push(chunk: Buffer): unknown;
}

interface PendingRequest<R> {
  /** Resolves with one reply, or with the replies of a batch. */
  resolve: (value: R | R[]) => void;
  reject: (error: Error) => void;
  deadline: number;
  /** Set for a batch request: replies collected until the one that ends the batch. */
  batch: R[] | undefined;
}

export interface ClientConnectionOptions<R> {
  host: string;
  port: number;
  /** Request timeout in ms (also the connect timeout). */
  timeout: number;
  /** Makes the reply parser for this connection (text or meta). */
  createParser: (onReply: (reply: R) => void) => ReplyStream;
  /** For batch requests: true for the reply that ends a batch (it is not included). */
  endsBatch?: (reply: R) => boolean;
}

/**
 * One pipelined connection: requests are written as they come, replies are matched to
 * requests in order by one queue, whatever the protocol (the parser is pluggable). A batch
 * request (several quiet commands and a terminator, e.g. meta `mg … q` lines then `mn`) takes
 * every reply up to its terminator. A timeout or a protocol error fails every request in
 * flight and closes the socket (the stream can no longer be trusted); the owner reconnects.
 */
export class ClientConnection<R> {
  private readonly socket: net.Socket;
  private readonly parser: ReplyStream;
  private readonly endsBatch: (reply: R) => boolean;
  private readonly queue: PendingRequest<R>[] = [];
  private head = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly options: ClientConnectionOptions<R>;
  closed = false;
  private connected = false;
  readonly ready: Promise<void>;

  constructor(options: ClientConnectionOptions<R>) {
    this.options = options;
    this.parser = options.createParser((reply) => this.onReply(reply));
    this.endsBatch = options.endsBatch ?? (() => true);
    this.socket = net.connect({ host: options.host, port: options.port, noDelay: true });
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', () => {
        this.connected = true;
        resolve();
      });
      this.socket.once('error', (error) => {
        if (!this.connected) {
          reject(
            new HotpathMcError(
              'HP_MC_CONNECT_FAILED',
              `cannot connect to ${options.host}:${options.port}: ${error.message}`,
              { cause: error },
            ),
          );
        }
      });
    });
    this.ready.catch(() => {});
    this.socket.on('data', (chunk: Buffer) => {
      try {
        this.parser.push(chunk);
      } catch (error) {
        this.fail(error as Error);
      }
    });
    this.socket.on('error', (error) =>
      this.fail(
        new HotpathMcError(
          this.connected ? 'HP_MC_CONNECTION_CLOSED' : 'HP_MC_CONNECT_FAILED',
          `${this.connected ? 'connection to' : 'cannot connect to'} ${options.host}:${options.port}: ${error.message}`,
          { cause: error },
        ),
      ),
    );
    this.socket.on('close', () =>
      this.fail(
        new HotpathMcError('HP_MC_CONNECTION_CLOSED', `connection to ${options.host}:${options.port} closed`),
      ),
    );
    const tick = Math.max(5, Math.min(1000, Math.floor(options.timeout / 4)));
    this.timer = setInterval(() => this.checkTimeouts(), tick);
    this.timer.unref();
  }

  get inFlight(): number {
    return this.queue.length - this.head;
  }

  /** Sends an encoded request; resolves with its reply. */
  request(data: Buffer): Promise<R> {
    return this.enqueue(data, undefined) as Promise<R>;
  }

  /**
   * Sends an encoded batch (quiet commands followed by a terminator); resolves with every
   * reply before the terminator's.
   */
  requestBatch(data: Buffer): Promise<R[]> {
    return this.enqueue(data, []) as Promise<R[]>;
  }

  private enqueue(data: Buffer, batch: R[] | undefined): Promise<R | R[]> {
    if (this.closed) {
      return Promise.reject(new HotpathMcError('HP_MC_CONNECTION_CLOSED', 'connection is closed'));
    }
    return new Promise<R | R[]>((resolve, reject) => {
      this.queue.push({ resolve, reject, deadline: Date.now() + this.options.timeout, batch });
      this.socket.write(data);
    });
  }

  /** Sends a noreply request: nothing comes back. */
  send(data: Buffer): void {
    if (!this.closed) this.socket.write(data);
  }

  private onReply(reply: R): void {
    const pending = this.queue[this.head];
    if (pending === undefined) {
      this.fail(new HotpathMcError('HP_MC_PROTOCOL', 'reply received with no request waiting'));
      return;
    }
    if (pending.batch !== undefined && !this.endsBatch(reply)) {
      pending.batch.push(reply);
      return;
    }
    this.queue[this.head++] = undefined as unknown as PendingRequest<R>;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    pending.resolve(pending.batch ?? reply);
  }

  private checkTimeouts(): void {
    const first = this.queue[this.head];
    if (first !== undefined && first.deadline <= Date.now()) {
      this.fail(
        new HotpathMcError(
          'HP_MC_TIMEOUT',
          `no reply from ${this.options.host}:${this.options.port} within ${this.options.timeout} ms`,
        ),
      );
    }
  }

  private fail(error: Error): void {
    if (!this.closed) {
      this.closed = true;
      clearInterval(this.timer);
      this.socket.destroy();
    }
    const pending = this.queue.splice(this.head);
    this.queue.length = 0;
    this.head = 0;
    for (const request of pending) request.reject(error);
  }

  close(): void {
    this.fail(new HotpathMcError('HP_MC_CONNECTION_CLOSED', 'connection closed by the client'));
  }
}
