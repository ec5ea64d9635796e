import { type IncomingHttpHeaders, request } from 'node:http';
import { connect } from 'node:net';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on a fresh connection (no agent pooling), collected whole. */
export function get(port: number, path = '/', method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${path} timed out`)));
    req.end();
  });
}

/**
 * One request written byte for byte on a raw socket (so the request target reaches the server
 * exactly as given: absolute-form, `//path`), with `Connection: close`; status and body parsed.
 */
export function rawGet(port: number, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
        'latin1',
      );
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error(`GET ${target} timed out`)));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const headEnd = text.indexOf('\r\n\r\n');
      const head = text.slice(0, headEnd);
      let body = text.slice(headEnd + 4);
      if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        let plain = '';
        for (let at = 0; ; ) {
          const lineEnd = body.indexOf('\r\n', at);
          const size = Number.parseInt(body.slice(at, lineEnd), 16);
          if (!(size > 0)) break;
          plain += body.slice(lineEnd + 2, lineEnd + 2 + size);
          at = lineEnd + 2 + size + 2;
        }
        body = plain;
      }
      resolve({ status: Number(head.slice(9, 12)), body });
    });
  });
}
