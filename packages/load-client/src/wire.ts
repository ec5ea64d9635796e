/** The small interface between a connection and the protocol it speaks (HTTP/1.1 or memcache). */

/** What a parser reports to; one object per connection, so there are no per-response closures. */
export interface ResponseSink {
  /**
   * One complete response. `close`: the server closes the connection after it. `bodyMismatch`:
   * its body differed from the expected one (only when the parser was given one).
   */
  onResponse(status: number, close: boolean, bodyMismatch?: boolean): void;
  /** The bytes do not follow the protocol; the connection must be dropped. */
  onParseError(reason: string): void;
}

/** A streaming response parser for one connection. */
export interface WireParser {
  /** Parses `chunk[0..length)`; the bytes are only valid during the call (the parser copies what it keeps). */
  execute(chunk: Buffer, length: number): void;
  /** Fresh state for a new connection. */
  reset(): void;
  /** Part of a response has been read. */
  readonly midResponse: boolean;
  /** The server closed the connection: completes a close-delimited response, if one is open. */
  finishOnClose(): boolean;
  /** The response now awaited carries no body (HTTP HEAD). */
  noBody: boolean;
  /** Stop reading the current chunk (the connection is being dropped). */
  halted: boolean;
}
