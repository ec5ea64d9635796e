// The first nodecached, as the seed article wrote it: every chunk becomes a string, commands
// are split on "\r\n", values are kept as strings, and each reply goes out in several small
// writes. With Nagle's algorithm on (the socket default), those small writes wait for the
// peer's delayed ACK.
import net from 'node:net';

export function createNaiveServer({ noDelay }) {
  const values = new Map();
  return net.createServer((socket) => {
    socket.setNoDelay(noDelay);
    let pending = '';
    socket.on('data', (chunk) => {
      pending += chunk.toString();
      for (;;) {
        const end = pending.indexOf('\r\n');
        if (end < 0) return;
        const parts = pending.slice(0, end).split(' ');
        const command = parts[0];
        if (command === 'set') {
          const bytes = Number(parts[4]);
          if (pending.length < end + 2 + bytes + 2) return; // value not complete yet
          const value = pending.slice(end + 2, end + 2 + bytes);
          values.set(parts[1], { flags: parts[2], value });
          pending = pending.slice(end + 2 + bytes + 2);
          socket.write('STORED\r\n');
        } else if (command === 'get') {
          pending = pending.slice(end + 2);
          for (const key of parts.slice(1)) {
            const item = values.get(key);
            if (item) {
              socket.write(`VALUE ${key} ${item.flags} ${Buffer.byteLength(item.value)}\r\n`);
              socket.write(`${item.value}\r\n`);
            }
          }
          socket.write('END\r\n');
        } else if (command === 'delete') {
          pending = pending.slice(end + 2);
          socket.write(values.delete(parts[1]) ? 'DELETED\r\n' : 'NOT_FOUND\r\n');
        } else {
          pending = pending.slice(end + 2);
          socket.write('ERROR\r\n');
        }
      }
    });
    socket.on('error', () => socket.destroy());
  });
}
