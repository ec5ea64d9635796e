import type { Connection } from './connection.js';

/** Binary protocol requests. */
export function processBinary(conn: Connection, _buf: Buffer, pos: number): number {
  conn.closeAfterWrite();
  return pos;
}
