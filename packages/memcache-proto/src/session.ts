import type { AuthUsers } from './authfile.js';
import type { BufferBudget } from './buffer-budget.js';
import type { Cache } from './cache.js';
import type { OutputBuffer } from './output-buffer.js';
import type { StatLines } from './stats-report.js';

/** Settings every connection of one server shares (some change at run time: verbosity). */
export interface ConnectionSettings {
  /** What `version` answers: memcached's protocol level, x.y.z and nothing else. */
  version: string;
  /** hotpath's own name and version, reported as the `hotpath_version` stat. */
  identity: string;
  verbosity: number;
  /** Longest text line without a newline; memcached's 2048 (get lines may be longer). */
  maxLineBytes: number;
  /** Cap on one connection's buffered, unprocessed input. */
  maxInputBytes: number;
  /** Cap on one connection's queued, unsent output; reading pauses above it. */
  maxOutputBytes: number;
  /** Users from the authfile; undefined when authentication is off. */
  users: AuthUsers | undefined;
  log: (line: string) => void;
  /** For `stats settings`. */
  port: number;
  listen: string;
  maxConnections: number;
  idleTimeoutSeconds: number;
  /** Which protocols connections may speak (-B). */
  protocol: 'auto' | 'ascii' | 'binary';
  /** Whether flush_all is allowed (-F turns it off). */
  flushEnabled: boolean;
  /** Whether the text `shutdown` command is allowed (-A), and what it runs. */
  shutdownEnabled: boolean;
  shutdown: () => void;
  /** Commands one connection may run per turn before the others get theirs (-R); 0 = no limit. */
  maxReqsPerEvent: number;
  /** For `stats settings`: -M and -C. */
  evictions: boolean;
  casEnabled: boolean;
}

/** What a paused multi-key get resumes with; `active` is false when no get is paused. */
export interface PausedGet {
  active: boolean;
  withCas: boolean;
  touch: boolean;
  exptime: number;
}

/**
 * What a protocol handler (text, meta, binary) may do with the connection it serves: the
 * narrow interface the handlers see instead of the Connection itself.
 *
 * Framing rule shared by every handler: a handler returns the input position where parsing
 * resumes. A position past the end of the buffer means "discard that many more bytes" (the data
 * of a rejected value); the connection alone does the skipping. A command whose bytes have not
 * all arrived calls `waitFor` and returns the position where it starts.
 */
export interface Session {
  readonly cache: Cache;
  readonly settings: ConnectionSettings;
  /** The memory budget the server's connections share (for `stats`). */
  readonly budget: BufferBudget;
  /** Where replies are queued; written to the socket once per read. */
  readonly out: OutputBuffer;
  /** Scratch token bounds (start, end pairs) for the tokenizer. */
  readonly tokens: Int32Array;
  /** The connection is closing: handlers stop. */
  readonly closing: boolean;
  readonly authenticated: boolean;
  /** Whether the current command asked for no reply. */
  readonly noreply: boolean;
  /**
   * A multi-key get that stopped at the output batch mark with keys left (see text-protocol's
   * runGet): the input position it returned lies inside its line, where the next key starts.
   */
  readonly pausedGet: PausedGet;
  /** The time of the current read, ms since the epoch. */
  now(): number;
  /** Marks the current command noreply (or not). */
  setNoreply(noreply: boolean): void;
  /** Queues a reply line unless the current command is noreply. */
  reply(text: string): void;
  /** Queues reply bytes unless the current command is noreply. */
  replyBytes(bytes: Buffer): void;
  /** Output is over the batch high-water mark: handlers stop until it is written. */
  outputFull(): boolean;
  /**
   * Whether the handler may start another command now (not closing, output under the batch
   * mark, -R's count not spent); counts the command when it may.
   */
  mayRun(): boolean;
  /** The command at the returned position needs this many more bytes before it can run. */
  waitFor(bytes: number): void;
  /** Sends what is queued, then closes (quit, fatal protocol errors). */
  closeAfterWrite(): void;
  /** Closes at once without a reply (memcached's answer to cross-protocol requests). */
  closeSilently(reason: string): void;
  /** Checks a user's password; on success the connection is authenticated. */
  login(user: string, password: Buffer): boolean;
  /** The stats report for a group ('' = general) as name/value pairs; a string for RESET. */
  statsLines(group: string): StatLines | string | undefined;
}
