import type { AddressInfo } from 'node:net';
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../src/index.js';

// Hostile HTTP/2 servers, written on raw sockets: each one must end in counted errors with a
// clear HP_LOAD_H2_* message, and the run must end when its duration (or amount) says.
const PREFACE_LENGTH = 24;

interface Peer {
  socket: Socket;
  send(type: number, flags: number, stream: number, payload?: Buffer): void;
}

type OnFrame = (peer: Peer, type: number, flags: number, stream: number, payload: Buffer) => void;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(stream, 5);
  return Buffer.concat([header, payload]);
}

function settings(pairs: [number, number][] = []): Buffer {
  const payload = Buffer.alloc(pairs.length * 6);
  pairs.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(4, 0, 0, payload);
}

/** A raw HTTP/2 server: sends its SETTINGS, acks the client's, hands every other frame to `onFrame`. */
async function rawH2(
  onFrame: OnFrame,
  ourSettings: [number, number][] = [],
): Promise<{ url: string; connections: () => number }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const peer: Peer = {
      socket,
      send: (type, flags, stream, payload) => {
        if (!socket.destroyed) socket.write(frame(type, flags, stream, payload));
      },
    };
    socket.write(settings(ourSettings));
    let buffered = Buffer.alloc(0);
    let prefaceSeen = false;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!prefaceSeen) {
        if (buffered.length < PREFACE_LENGTH) return;
        buffered = buffered.subarray(PREFACE_LENGTH);
        prefaceSeen = true;
      }
      while (buffered.length >= 9) {
        const length = buffered.readUIntBE(0, 3);
        if (buffered.length < 9 + length) break;
        const type = buffered[3] as number;
        const flags = buffered[4] as number;
        const stream = buffered.readUInt32BE(5) & 0x7fffffff;
        const payload = buffered.subarray(9, 9 + length);
        buffered = buffered.subarray(9 + length);
        if (type === 4 && (flags & 1) === 0) peer.send(4, 1, 0);
        else if (type !== 4 && type !== 8) onFrame(peer, type, flags, stream, payload);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    connections: () => connections,
  };
}

const HEADERS = 1;
const STATUS_200 = Buffer.from([0x88]);
/** Answers every request: HEADERS :status 200, then DATA "ok" with END_STREAM. */
function answer(peer: Peer, stream: number): void {
  peer.send(HEADERS, 4, stream, STATUS_200);
  peer.send(0, 1, stream, Buffer.from('ok'));
}

describe('hostile HTTP/2 servers', () => {
  it('a server that resets every stream: each counted as a `stream` error, the run ends on time', async () => {
    const server = await rawH2((peer, type, _flags, stream) => {
      if (type === HEADERS) {
        const code = Buffer.alloc(4);
        code.writeUInt32BE(2); // INTERNAL_ERROR
        peer.send(3, 0, stream, code);
      }
    });
    const result = await run({ url: server.url, http2: true, connections: 2, pipelining: 4, duration: 0.5 });
    expect(result.requests.total).toBe(0);
    expect(result.errorsByKind.stream).toBeGreaterThan(0);
    expect(result.errors).toBe(result.errorsByKind.stream);
    expect(result.errorMessages.stream).toBe(
      'HP_LOAD_H2_STREAM_RESET: the server reset a stream (RST_STREAM INTERNAL_ERROR (2))',
    );
  });

  it('GOAWAY: streams above its last id count as refused, the client reconnects, answers are exact', async () => {
    let answered = 0;
    const perConnection = new WeakMap<Socket, number>();
    const server = await rawH2((peer, type, _flags, stream) => {
      if (type !== HEADERS) return;
      const n = (perConnection.get(peer.socket) ?? 0) + 1;
      perConnection.set(peer.socket, n);
      if (n <= 10) {
        answer(peer, stream);
        answered++;
      }
      if (n === 10) {
        const goaway = Buffer.alloc(8);
        goaway.writeUInt32BE(stream);
        peer.send(7, 0, 0, goaway);
      }
    });
    const result = await run({ url: server.url, http2: true, connections: 1, pipelining: 4, amount: 200 });
    expect(result.statusCodes[200]).toBe(answered);
    expect(result.requests.total + result.errors).toBe(200);
    expect(result.errorsByKind.refused).toBe(result.errors);
    expect(result.errorMessages.refused).toContain('HP_LOAD_H2_REFUSED');
    expect(server.connections()).toBeGreaterThan(10);
  });

  it('a CONTINUATION flood ends the connection with HP_LOAD_H2_HEADERS_TOO_LARGE', async () => {
    const server = await rawH2((peer, type, _flags, stream) => {
      if (type !== HEADERS) return;
      peer.send(HEADERS, 0, stream, STATUS_200); // no END_HEADERS
      for (let i = 0; i < 500; i++) peer.send(9, 0, stream); // empty CONTINUATION frames
    });
    const result = await run({ url: server.url, http2: true, connections: 1, pipelining: 1, amount: 5 });
    expect(result.errorsByKind.parse).toBe(5);
    expect(result.errorMessages.parse).toMatch(
      /^HP_LOAD_H2_HEADERS_TOO_LARGE: a header block in more than 128 CONTINUATION frames/,
    );
  });

  it('a header block past 64 KiB in CONTINUATION frames, and a header list past the limit', async () => {
    const big = await rawH2((peer, type, _flags, stream) => {
      if (type !== HEADERS) return;
      peer.send(HEADERS, 0, stream, STATUS_200);
      for (let i = 0; i < 8; i++) peer.send(9, 0, stream, Buffer.alloc(16_000, 0x88));
    });
    const first = await run({ url: big.url, http2: true, connections: 1, amount: 3 });
    expect(first.errorMessages.parse).toBe('HP_LOAD_H2_HEADERS_TOO_LARGE: a header block over 65536 bytes');
    // 3000 indexed fields in 3000 bytes: a list of 3000 * 42 bytes once decoded.
    const list = await rawH2((peer, type, _flags, stream) => {
      if (type === HEADERS) peer.send(HEADERS, 5, stream, Buffer.alloc(3000, 0x88));
    });
    const second = await run({ url: list.url, http2: true, connections: 1, amount: 3 });
    expect(second.errorMessages.parse).toBe(
      'HP_LOAD_H2_HEADERS_TOO_LARGE: a response header list over 65536 bytes',
    );
  });

  it('an endless DATA stream: the request times out, the stream is cancelled, the run ends on time', async () => {
    const chunk = Buffer.alloc(16_000, 0x7a);
    let cancelled = 0;
    const server = await rawH2((peer, type, _flags, stream) => {
      if (type === 3) cancelled++;
      if (type !== HEADERS) return;
      peer.send(HEADERS, 4, stream, STATUS_200);
      const pump = () => {
        while (!peer.socket.destroyed && peer.socket.write(frame(0, 0, stream, chunk)));
        if (!peer.socket.destroyed) peer.socket.once('drain', pump);
      };
      pump();
    });
    const result = await run({ url: server.url, http2: true, connections: 1, duration: 1.2, timeout: 0.4 });
    expect(result.requests.total).toBe(0);
    expect(result.errorsByKind.timeout).toBeGreaterThanOrEqual(1);
    expect(result.errorMessages.timeout).toBe('no response within 0.4 s');
    expect(result.throughput.total).toBeGreaterThan(1_000_000);
    expect(cancelled).toBeGreaterThanOrEqual(1);
  });

  it('a window never opened: the request body waits until the timeout, named HP_LOAD_H2_WINDOW', async () => {
    const server = await rawH2(() => {}, [[4, 0]]); // SETTINGS_INITIAL_WINDOW_SIZE 0
    const result = await run({
      url: server.url,
      http2: true,
      connections: 1,
      duration: 0.8,
      timeout: 0.3,
      method: 'POST',
      body: 'payload',
    });
    expect(result.errorsByKind.timeout).toBeGreaterThanOrEqual(1);
    expect(result.errorMessages.timeout).toMatch(/^HP_LOAD_H2_WINDOW: the request body was still waiting/);
  });

  it('a server that shrinks its HPACK table mid-connection gets a new connection, no request lost', async () => {
    let connectionsSeen = 0;
    const perConnection = new WeakMap<Socket, number>();
    const server = await rawH2((peer, type, _flags, stream) => {
      if (type !== HEADERS) return;
      const n = (perConnection.get(peer.socket) ?? 0) + 1;
      perConnection.set(peer.socket, n);
      if (n === 1) connectionsSeen++;
      answer(peer, stream);
      if (n === 3 && connectionsSeen === 1) peer.socket.write(settings([[1, 0]])); // HEADER_TABLE_SIZE 0
    });
    const result = await run({ url: server.url, http2: true, connections: 1, pipelining: 1, amount: 50 });
    expect(result.statusCodes).toEqual({ 200: 50 });
    expect(result.errors).toBe(0);
    expect(server.connections()).toBe(2);
  });

  it('a server that allows no streams: one `refused` error per timeout and connection, the run ends', async () => {
    const server = await rawH2(() => {}, [[3, 0]]); // SETTINGS_MAX_CONCURRENT_STREAMS 0
    const result = await run({ url: server.url, http2: true, connections: 2, amount: 4, timeout: 0.2 });
    expect(result.errorsByKind).toEqual({ refused: 4 });
    expect(result.errorMessages.refused).toBe(
      'HP_LOAD_H2_REFUSED: the server allowed no streams (SETTINGS_MAX_CONCURRENT_STREAMS 0) for 0.2 s',
    );
    expect(server.connections()).toBeGreaterThanOrEqual(3);
  });

  it('a flood of PINGs or of SETTINGS ends the connection with HP_LOAD_H2_FLOOD', async () => {
    for (const flood of [
      (peer: Peer) => {
        for (let i = 0; i < 1500; i++) peer.send(6, 0, 0, Buffer.alloc(8));
      },
      (peer: Peer) => {
        for (let i = 0; i < 1500; i++) peer.socket.write(settings([[3, 100]]));
      },
    ]) {
      const server = await rawH2((peer, type) => {
        if (type === HEADERS) flood(peer);
      });
      const result = await run({ url: server.url, http2: true, connections: 1, pipelining: 2, amount: 4 });
      expect(result.errorsByKind.parse).toBe(4);
      expect(result.errorMessages.parse).toBe(
        'HP_LOAD_H2_FLOOD: more than 1000 PING/SETTINGS frames between two responses',
      );
    }
  });

  it('a frame over the frame size limit and bad HPACK are protocol errors', async () => {
    const oversized = await rawH2((peer, type, _flags, stream) => {
      if (type === HEADERS) peer.send(0, 1, stream, Buffer.alloc(20_000));
    });
    const first = await run({ url: oversized.url, http2: true, connections: 1, amount: 2 });
    expect(first.errorMessages.parse).toMatch(/^HP_LOAD_H2_PROTOCOL: a frame of type 0 with 20000 bytes/);
    const badHpack = await rawH2((peer, type, _flags, stream) => {
      if (type === HEADERS) peer.send(HEADERS, 5, stream, Buffer.from([0xff, 0xff, 0xff]));
    });
    const second = await run({ url: badHpack.url, http2: true, connections: 1, amount: 2 });
    expect(second.errorMessages.parse).toBe('HP_LOAD_H2_PROTOCOL: a header block HPACK cannot decode');
  });
});
