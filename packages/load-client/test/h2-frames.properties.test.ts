import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FRAME_DATA,
  FrameReader,
  type FrameSink,
  frameProblem,
  sizeProblem,
  writeFrameHeader,
} from '../src/h2-frames.js';

// Property-based tests of the HTTP/2 frame reader: generated frames, cut at generated points,
// must come out exactly as written (DATA as its header and length, every other frame with its
// payload); any bytes at all end in frames or one "too large", never an exception.
const SEED = 0x0f_2a_9e;
const RUNS = 300;

interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

const frameArb: fc.Arbitrary<Frame> = fc.record({
  type: fc.integer({ min: 0, max: 12 }),
  flags: fc.integer({ min: 0, max: 255 }),
  stream: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  payload: fc.uint8Array({ maxLength: 600 }).map((bytes) => Buffer.from(bytes)),
});

function serialize(frames: Frame[]): Buffer {
  return Buffer.concat(
    frames.map((f) => {
      const out = Buffer.alloc(9 + f.payload.length);
      writeFrameHeader(out, 0, f.payload.length, f.type, f.flags, f.stream);
      f.payload.copy(out, 9);
      return out;
    }),
  );
}

class Collect implements FrameSink {
  readonly frames: string[] = [];
  tooLarge = 0;
  onDataFrame(streamId: number, flags: number, length: number): void {
    this.frames.push(`0 ${flags} ${streamId} len=${length}`);
  }
  onFrame(type: number, flags: number, streamId: number, payload: Buffer, start: number, end: number): void {
    this.frames.push(`${type} ${flags} ${streamId} ${payload.subarray(start, end).toString('hex')}`);
  }
  onFrameTooLarge(): void {
    this.tooLarge++;
  }
}

const describeFrame = (f: Frame) =>
  f.type === FRAME_DATA
    ? `0 ${f.flags} ${f.stream} len=${f.payload.length}`
    : `${f.type} ${f.flags} ${f.stream} ${f.payload.toString('hex')}`;

/** Feeds `bytes` in pieces cut at `cuts` (each chunk copied into a reused read buffer, as a socket does). */
function feed(reader: FrameReader, bytes: Buffer, cuts: number[]): void {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const readBuffer = Buffer.alloc(64 * 1024);
  let from = 0;
  for (const to of [...points, bytes.length]) {
    if (to <= from) continue;
    bytes.copy(readBuffer, 0, from, to);
    reader.execute(readBuffer, to - from);
    readBuffer.fill(0xee); // the bytes are only valid during the call
    from = to;
  }
}

describe('FrameReader (properties)', () => {
  it('reads frames cut anywhere exactly as they were written', () => {
    fc.assert(
      fc.property(
        fc.array(frameArb, { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (frames, cuts) => {
          const sink = new Collect();
          feed(new FrameReader(sink), serialize(frames), cuts);
          expect(sink.tooLarge).toBe(0);
          expect(sink.frames).toEqual(frames.map(describeFrame));
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('stops at a frame over the size limit, after the frames before it', () => {
    fc.assert(
      fc.property(
        fc.array(frameArb, { maxLength: 5 }),
        fc.integer({ min: 16_385, max: 2 ** 24 - 1 }),
        (frames, length) => {
          const sink = new Collect();
          const big = Buffer.alloc(9);
          writeFrameHeader(big, 0, length, 0, 0, 1);
          feed(new FrameReader(sink), Buffer.concat([serialize(frames), big, Buffer.alloc(100)]), [7, 50]);
          expect(sink.frames).toEqual(frames.map(describeFrame));
          expect(sink.tooLarge).toBe(1);
        },
      ),
      { seed: SEED + 1, numRuns: RUNS },
    );
  });

  it('never throws on any bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 2000 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (bytes, cuts) => {
          const sink = new Collect();
          feed(new FrameReader(sink), Buffer.from(bytes), cuts);
          expect(sink.tooLarge).toBeLessThanOrEqual(1);
        },
      ),
      { seed: SEED + 2, numRuns: RUNS },
    );
  });
});

describe('frameProblem', () => {
  it.each([
    // type, flags, stream, length, problem (null: fine), a size problem
    [0, 0, 0, 10, 'DATA on stream 0', false],
    [0, 1, 3, 10, null, false],
    [1, 4, 0, 1, 'HEADERS on stream 0', false],
    [4, 0, 0, 12, null, false],
    [4, 0, 0, 7, 'a SETTINGS frame of 7 bytes', true],
    [4, 1, 0, 6, 'a SETTINGS frame of 6 bytes', true],
    [4, 0, 1, 6, 'SETTINGS on stream 1', false],
    [6, 0, 0, 8, null, false],
    [6, 0, 0, 9, 'a PING frame of 9 bytes', true],
    [6, 0, 5, 8, 'PING on stream 5', false],
    [3, 0, 0, 4, 'RST_STREAM on stream 0', false],
    [3, 0, 1, 5, 'a RST_STREAM frame of 5 bytes', true],
    [7, 0, 0, 7, 'a GOAWAY frame of 7 bytes', true],
    [7, 0, 0, 100, null, false],
    [8, 0, 3, 3, 'a WINDOW_UPDATE frame of 3 bytes', true],
    [5, 4, 1, 10, 'PUSH_PROMISE after SETTINGS_ENABLE_PUSH 0', false],
    [2, 0, 1, 5, null, false],
    [42, 0, 0, 3, null, false],
  ] as const)('type %i flags %i stream %i length %i: %s', (type, flags, stream, length, problem, size) => {
    const found = frameProblem(type, flags, stream, length);
    expect(found).toBe(problem);
    if (found !== null) expect(sizeProblem(found)).toBe(size);
  });
});
