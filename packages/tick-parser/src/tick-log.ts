import { open } from 'node:fs/promises';
import { HotpathTicksError } from './errors.js';
import type { Profile } from './model.js';
import { type TickLogOptions, TickLogReader } from './tick-log-reader.js';

export type { TickLogOptions } from './tick-log-reader.js';

/**
 * Reads a V8 `--prof` log (a path or a readable stream) into a Profile, streaming: memory stays
 * bounded by the number of distinct functions and stacks, not by the log's size. C++ frames are
 * resolved with nm/objdump while the log is read. Problems become `warnings`; only an unreadable
 * input throws (HP_TICKS_READ_FAILED).
 */
export async function parseTickLog(
  input: string | NodeJS.ReadableStream,
  options: TickLogOptions = {},
): Promise<Profile> {
  const reader = new TickLogReader(options);
  try {
    if (typeof input === 'string') await readFileInChunks(input, reader);
    else {
      for await (const chunk of input as AsyncIterable<Buffer | string>) {
        reader.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
      }
    }
  } catch (error) {
    const what = typeof input === 'string' ? input : 'the input stream';
    const code = (error as NodeJS.ErrnoException).code;
    throw new HotpathTicksError(
      'HP_TICKS_READ_FAILED',
      `cannot read ${what}${code ? ` (${code})` : ''}: expected a readable V8 tick log`,
      { cause: error },
    );
  }
  return reader.finish();
}

/** Small enough that timers (the CLI's, see cli-tiering.ts) run soon between two chunks. */
const CHUNK_BYTES = 256 * 1024;

/**
 * Reads a file into the reader 256 KiB at a time through one reused buffer (the reader copies
 * what it keeps), without a stream: node:stream's modules cost a few milliseconds to load.
 */
async function readFileInChunks(path: string, reader: TickLogReader): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      reader.push(bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
}
