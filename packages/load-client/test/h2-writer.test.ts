import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { FrameWriter } from '../src/h2-writer.js';

// Over TLS the HTTP/2 client writes what a loop turn freed once per connection (flushSoon): a
// socket read of ten responses is ten TLS records handed over one by one, and each used to refill
// and write on its own — two records and two syscalls per read against h2load's one.
function fakeSocket() {
  const writes: Buffer[] = [];
  return {
    writes,
    socket: { write: (chunk: Buffer) => writes.push(Buffer.from(chunk)) } as unknown as Socket,
  };
}

const immediate = () => new Promise((resolve) => setImmediate(resolve));

describe('FrameWriter.flushSoon', () => {
  it('writes each writer’s frames of a turn once, after the poll phase, in order', async () => {
    const a = fakeSocket();
    const b = fakeSocket();
    const first = new FrameWriter();
    const second = new FrameWriter();
    first.attach(a.socket, false);
    second.attach(b.socket, false);
    for (let i = 0; i < 10; i++) {
      first.raw(Buffer.from([i]));
      first.flushSoon();
    }
    second.raw(Buffer.from('x'));
    second.flushSoon();
    expect(a.writes).toHaveLength(0);
    await immediate();
    expect(a.writes.map((w) => [...w])).toEqual([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]);
    expect(b.writes.map((w) => w.toString())).toEqual(['x']);
    // the next turn's frames go out in a write of their own
    first.raw(Buffer.from([10]));
    first.flushSoon();
    await immediate();
    expect(a.writes.map((w) => [...w])).toEqual([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [10]]);
  });

  it('writes nothing for a writer detached before its turn ended, and nothing when empty', async () => {
    const a = fakeSocket();
    const writer = new FrameWriter();
    writer.attach(a.socket, false);
    writer.flushSoon();
    writer.raw(Buffer.from('gone'));
    writer.flushSoon();
    writer.detach();
    await immediate();
    expect(a.writes).toHaveLength(0);
    // attached again (a new connection), its frames still go out once
    writer.attach(a.socket, false);
    writer.raw(Buffer.from('new'));
    writer.flushSoon();
    await immediate();
    expect(a.writes.map((w) => w.toString())).toEqual(['new']);
  });
});

// Requests freed while most of a connection's streams are still in flight are held
// (hold) so that the next responses' requests share their record: against nginx one write carried
// 2.4 requests without it and 5.6 with it (h2load: 5.5).
describe('FrameWriter.hold', () => {
  const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** A writer on a fake socket with one request (a one-byte header block) written, not flushed. */
  const withRequest = () => {
    const a = fakeSocket();
    const writer = new FrameWriter();
    writer.attach(a.socket, false);
    writer.headers(1, Buffer.from([0x82]), true, 16_384);
    return { a, writer };
  };

  it('goes out with the next flushSoon, in one write with what came after it', async () => {
    const { a, writer } = withRequest();
    expect(writer.requests).toBe(1);
    writer.hold();
    await immediate();
    expect(a.writes).toHaveLength(0);
    writer.headers(3, Buffer.from([0x82]), true, 16_384);
    writer.flushSoon();
    await immediate();
    expect(a.writes).toHaveLength(1);
    expect(a.writes[0]?.length).toBe(2 * (9 + 1));
    expect(writer.requests).toBe(0);
    // the hold's timer then finds nothing left to write
    await later(5);
    expect(a.writes).toHaveLength(1);
  });

  it('goes out by itself within a few milliseconds when nothing else comes', async () => {
    const { a, writer } = withRequest();
    writer.hold();
    writer.hold();
    await later(20);
    expect(a.writes).toHaveLength(1);
    // held again after that write: the timer is armed anew
    writer.headers(3, Buffer.from([0x82]), true, 16_384);
    writer.hold();
    await later(20);
    expect(a.writes).toHaveLength(2);
  });

  it('writes nothing for a writer detached while it held', async () => {
    const { a, writer } = withRequest();
    writer.hold();
    writer.detach();
    await later(20);
    expect(a.writes).toHaveLength(0);
  });
});
