/** A connection as the shared buffer budget sees it. */
export interface BudgetedConnection {
  /** Bytes charged to the budget for this connection when it last reported (kept by the budget). */
  charged: number;
  /** Its buffered, unprocessed input plus its unsent output now, in bytes. */
  bufferedBytes(): number;
  /** Closes it at once, dropping its buffers: the budget is spent. */
  closeForMemory(): void;
}

/**
 * One memory budget for the buffers of all connections of a server together (memcached's
 * `-o read_buf_mem_limit`): each connection reports what it holds (input kept between reads,
 * output the socket has not sent yet) whenever that changes. When the total goes over the
 * limit, the budget recounts every connection (a report may be stale: a socket sends without
 * telling) and closes connections, the one holding the most first, until the total is back
 * under it, as memcached closes a connection that cannot get a buffer (`read_buf_oom`). A client
 * that sends requests and never reads its replies holds the most, so it goes first.
 */
export class BufferBudget {
  /** Bytes charged now, all connections together. */
  used = 0;
  /** Connections closed because the budget was spent (the `read_buf_oom` stat). */
  closed = 0;
  private readonly members = new Set<BudgetedConnection>();

  /** limit: bytes for all connections' buffers; 0 = no limit (the total is still counted). */
  constructor(readonly limit: number) {}

  add(conn: BudgetedConnection): void {
    conn.charged = 0;
    this.members.add(conn);
  }

  /** The connection closed: what it held is no longer charged. */
  remove(conn: BudgetedConnection): void {
    if (!this.members.delete(conn)) return;
    this.used -= conn.charged;
    conn.charged = 0;
  }

  /** Half the limit is charged: a connection whose replies are not being read stops reading. */
  pressed(): boolean {
    return this.limit > 0 && this.used * 2 > this.limit;
  }

  /** The connection holds `bytes` now; over the limit, connections are closed (maybe this one). */
  charge(conn: BudgetedConnection, bytes: number): void {
    if (!this.members.has(conn)) return;
    this.used += bytes - conn.charged;
    conn.charged = bytes;
    if (this.limit > 0 && this.used > this.limit) this.enforce();
  }

  private enforce(): void {
    let used = 0;
    for (const conn of this.members) {
      conn.charged = conn.bufferedBytes();
      used += conn.charged;
    }
    this.used = used;
    while (this.used > this.limit) {
      let largest: BudgetedConnection | undefined;
      for (const conn of this.members)
        if (largest === undefined || conn.charged > largest.charged) largest = conn;
      if (largest === undefined || largest.charged === 0) return;
      this.members.delete(largest);
      this.used -= largest.charged;
      largest.charged = 0;
      this.closed++;
      largest.closeForMemory();
    }
  }
}
