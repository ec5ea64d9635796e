import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { HotpathLoadError, run } from '../src/index.js';
import { cli } from './cli-runner.js';

const CERT_FILE = fileURLToPath(new URL('./fixtures/tls-cert.pem', import.meta.url));
const key = readFileSync(new URL('./fixtures/tls-key.pem', import.meta.url));
const cert = readFileSync(CERT_FILE);

interface HttpsTarget {
  url: string;
  /** Responses the server finished writing. */
  answered: () => number;
  /** TLS connections the server completed, and how many resumed a session. */
  handshakes: () => number;
  resumed: () => number;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** A real node:https server; with `closeEvery`, every Nth response says `Connection: close`. */
async function httpsServer(closeEvery = 0): Promise<HttpsTarget> {
  let answered = 0;
  let handshakes = 0;
  let resumed = 0;
  let seen = 0;
  const server = createServer({ key, cert, keepAliveTimeout: 30_000 }, (_req, res) => {
    seen++;
    if (closeEvery > 0 && seen % closeEvery === 0) res.setHeader('connection', 'close');
    res.on('finish', () => {
      answered++;
    });
    res.end('hello over tls');
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    handshakes++;
    if (socket.isSessionReused()) resumed++;
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/`,
    answered: () => answered,
    handshakes: () => handshakes,
    resumed: () => resumed,
  };
}

describe('https:// targets', () => {
  it('counts exactly over TLS, pipelined, without checking the certificate by default', async () => {
    const server = await httpsServer();
    const result = await run({ url: server.url, amount: 3000, connections: 5, pipelining: 4 });
    expect(result.requests.total).toBe(3000);
    expect(result.errors).toBe(0);
    expect(result.statusCodes).toEqual({ '200': 3000 });
    expect(server.answered()).toBe(3000);
    expect(result.tls).toEqual({ handshakes: 5, resumed: 0 });
    expect(server.handshakes()).toBe(5);
  });

  it('splits a TLS run over worker threads and still counts exactly', async () => {
    const server = await httpsServer();
    const result = await run({
      url: server.url,
      amount: 1000,
      connections: 4,
      workers: 2,
      tls: { ca: cert },
    });
    expect(result.requests.total).toBe(1000);
    expect(server.answered()).toBe(1000);
    expect(result.tls).toEqual({ handshakes: 4, resumed: 0 });
  });

  it('reconnects after `Connection: close` with resumed TLS sessions and exact counts', async () => {
    const server = await httpsServer(50);
    const result = await run({ url: server.url, amount: 2000, connections: 4 });
    expect(result.requests.total).toBe(2000);
    expect(result.errors).toBe(0);
    expect(server.answered()).toBe(2000);
    // 2000 responses, every 50th closes: 40 closes, 4 first connects, and a reconnect after
    // each close except those after the run's last responses.
    const handshakes = result.tls?.handshakes ?? 0;
    const reconnects = handshakes - 4;
    expect(reconnects).toBeGreaterThanOrEqual(36);
    expect(reconnects).toBeLessThanOrEqual(40);
    // Every reconnect offered the session of the connection before it, and the server took it.
    expect(result.tls?.resumed).toBe(reconnects);
    expect(server.handshakes()).toBe(handshakes);
    expect(server.resumed()).toBe(reconnects);
  });

  it('checks the certificate with verify: untrusted fails with HP_LOAD_TLS, a given CA passes', async () => {
    const server = await httpsServer();
    const failed = await run({ url: server.url, amount: 10, connections: 2, tls: { verify: true } }).catch(
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(HotpathLoadError);
    expect((failed as HotpathLoadError).code).toBe('HP_LOAD_TLS');
    expect((failed as Error).message).toMatch(
      /TLS handshake with 127\.0\.0\.1:\d+ failed: self[- ]signed certificate/,
    );
    const trusted = await run({ url: server.url, amount: 10, connections: 2, tls: { ca: cert } });
    expect(trusted.requests.total).toBe(10);
    expect(trusted.errors).toBe(0);
  });

  it('CLI: --verify on an untrusted certificate fails in one line; --ca trusts it', async () => {
    const server = await httpsServer();
    const refused = await cli(['-a', '10', '-c', '2', '--verify', server.url]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(
      // Node 24 adds its own hint to the message ("; if the root CA is installed locally, try
      // running Node.js with --use-system-ca"): one line all the same
      /^hotpath-load: TLS handshake with 127\.0\.0\.1:\d+ failed: self[- ]signed certificate(?:; [^\n]*)? \(certificate not trusted: pass --ca FILE with its issuer, or leave out --verify\)\n$/,
    );
    const trusted = await cli(['-a', '100', '-c', '2', '--ca', CERT_FILE, '--json', server.url]);
    expect(trusted.stderr).toBe('');
    expect(trusted.code).toBe(0);
    const result = JSON.parse(trusted.stdout);
    expect(result.requests.total).toBe(100);
    expect(result.tls).toEqual({ handshakes: 2, resumed: 0 });
    const unchecked = await cli(['-a', '100', '-c', '2', server.url]);
    expect(unchecked.code).toBe(0);
    expect(unchecked.stdout).toMatch(/TLS handshakes:\s+2 \(0 resumed sessions\)/);
  });

  it('rejects TLS flags for a target that is not https://', async () => {
    const ran = await cli(['-a', '1', '--verify', 'http://127.0.0.1:1/']);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toBe('hotpath-load: invalid --verify true: expected an https:// target\n');
    const missing = await cli(['-a', '1', '--ca', '/nonexistent/ca.pem', 'https://127.0.0.1:1/']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('hotpath-load: cannot read --ca file "/nonexistent/ca.pem"\n');
  });
});
