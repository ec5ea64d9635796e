import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { serializeRequest } from '../src/index.js';

describe('serializeRequest', () => {
  it('produces a request a real node:http server parses, body and headers intact', async () => {
    const seen: { method?: string; url?: string; header?: string; body: string }[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, header: req.headers['x-test'] as string, body });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const request = serializeRequest(`127.0.0.1:${port}`, {
        method: 'POST',
        path: '/users?x=1',
        headers: { 'x-test': 'yes' },
        body: '{"name":"ana"}',
      });
      // Two pipelined copies on one keep-alive connection: both must be answered.
      const responses = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk;
          if (text.split('HTTP/1.1 200').length === 3) {
            socket.end();
            resolve(text);
          }
        });
        socket.on('error', reject);
        socket.write(Buffer.concat([request, request]));
      });
      expect(responses.split('HTTP/1.1 200')).toHaveLength(3);
      expect(seen).toEqual([
        { method: 'POST', url: '/users?x=1', header: 'yes', body: '{"name":"ana"}' },
        { method: 'POST', url: '/users?x=1', header: 'yes', body: '{"name":"ana"}' },
      ]);
    } finally {
      server.close();
    }
  });

  it('rejects header values that would split the request', () => {
    expect(() => serializeRequest('h', { headers: { a: 'b\r\nx: y' } })).toThrow(
      /header a: contains a line break/,
    );
  });
});
