import type { Connection } from './connection.js';

/** Meta commands (mg, ms, md, ma, mn, me). */
export function processMetaCommand(
  conn: Connection,
  _buf: Buffer,
  _ntok: number,
  cmd: string,
  _lineEnd: number,
  next: number,
): number {
  if (cmd === 'mn') conn.reply('MN\r\n');
  else conn.reply('ERROR\r\n');
  return next;
}
