import { open, readFile } from 'node:fs/promises';
import { parseCpuProfile } from './cpuprofile.js';
import { HotpathTicksError } from './errors.js';
import type { Profile } from './model.js';
import { parseTickLog, type TickLogOptions } from './tick-log.js';

const LOG_KINDS = new Set([
  'v8-version',
  'v8-platform',
  'shared-library',
  'shared-library-end',
  'code-creation',
  'code-move',
  'code-delete',
  'sfi-move',
  'tick',
  'profiler',
  'new',
  'delete',
  'heap-capacity',
  'heap-available',
  'code-source-info',
  'script-source',
  'script-details',
  'current-time',
  'timer-event-start',
  'timer-event-end',
]);

/** Which format the first bytes of a file are: a V8 tick log, a .cpuprofile, or neither. */
export function detectProfileFormat(head: Buffer): 'tick-log' | 'cpuprofile' | undefined {
  const text = head.toString('utf8');
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    return /"(nodes|head)"\s*:/.test(text) || /"startTime"\s*:/.test(text) ? 'cpuprofile' : undefined;
  }
  // A tick log: most of its first lines are known event kinds.
  const lines = text
    .split('\n')
    .slice(0, 20)
    .filter((l) => l.length > 0);
  if (lines.length === 0) return undefined;
  const known = lines.filter((l) => LOG_KINDS.has(l.slice(0, l.indexOf(',') >>> 0))).length;
  return known > 0 && known >= Math.ceil(lines.length / 2) ? 'tick-log' : undefined;
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Reads a profile file whose format is detected from its content: a V8 `--prof` log or a
 * `.cpuprofile`. Throws HP_TICKS_UNKNOWN_FORMAT for anything else, HP_TICKS_READ_FAILED when the
 * file cannot be read.
 */
export async function readProfile(path: string, options: TickLogOptions = {}): Promise<Profile> {
  let head: Buffer;
  try {
    head = await readHead(path, 64 * 1024);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new HotpathTicksError(
      'HP_TICKS_READ_FAILED',
      `cannot read ${path} (${code}): expected a readable file`,
      {
        cause: error,
      },
    );
  }
  const format = detectProfileFormat(head);
  if (format === 'tick-log') return parseTickLog(path, options);
  if (format === 'cpuprofile') return parseCpuProfile(await readFile(path, 'utf8'));
  const start = head.toString('utf8', 0, 40).replace(/[^\x20-\x7e]/g, '?');
  throw new HotpathTicksError(
    'HP_TICKS_UNKNOWN_FORMAT',
    `${path} is neither a V8 tick log nor a .cpuprofile (it starts with "${start}"); expected the output of node --prof or node --cpu-prof`,
  );
}
