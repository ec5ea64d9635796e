import { mkdir, open, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What is stored per binary: nm's output and how to place it. */
export interface CachedSymbols {
  elfType: 'exec' | 'dyn';
  textOffsetMinusVma: number;
  text: Buffer;
}

const VERSION = 1;
const MAX_HEADER = 4096;

async function fileFor(dir: string, key: string): Promise<string> {
  // Loaded here, not at start-up: only runs that read symbols with nm use the cache.
  const { createHash } = await import('node:crypto');
  return join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 40)}.symbols`);
}

/**
 * Checks that a cache directory (or file) belongs to this user and is not writable by others:
 * symbol names from a cache are trusted as much as nm's output.
 */
export async function isPrivate(path: string): Promise<boolean> {
  const info = await stat(path);
  const uid = process.getuid?.();
  return (uid === undefined || info.uid === uid) && (info.mode & 0o022) === 0;
}

/** Creates the cache directory (mode 0700). Returns a warning when it cannot be used. */
export async function prepareCacheDir(dir: string): Promise<string | undefined> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (!(await isPrivate(dir))) return `symbol cache ${dir} is not private to this user; not used`;
    return undefined;
  } catch (error) {
    return `symbol cache ${dir} cannot be used (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

/** The cached symbols of `key` (path + size + mtime), or undefined when absent, foreign or stale. */
export async function readCachedSymbols(dir: string, key: string): Promise<CachedSymbols | undefined> {
  const file = await fileFor(dir, key);
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    if (!(await isPrivate(file))) return undefined;
    handle = await open(file, 'r');
    const data = await handle.readFile();
    const nl = data.indexOf(10);
    if (nl < 0 || nl > MAX_HEADER) return undefined;
    const header = JSON.parse(data.toString('utf8', 0, nl)) as Record<string, unknown>;
    if (header.v !== VERSION || header.key !== key) return undefined;
    if (header.elfType !== 'exec' && header.elfType !== 'dyn') return undefined;
    if (typeof header.shift !== 'number') return undefined;
    return { elfType: header.elfType, textOffsetMinusVma: header.shift, text: data.subarray(nl + 1) };
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

/** Stores symbols atomically (temporary file, then rename). Failures are ignored: it is a cache. */
export async function writeCachedSymbols(dir: string, key: string, symbols: CachedSymbols): Promise<void> {
  const file = await fileFor(dir, key);
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    const header = JSON.stringify({
      v: VERSION,
      key,
      elfType: symbols.elfType,
      shift: symbols.textOffsetMinusVma,
    });
    await writeFile(temp, Buffer.concat([Buffer.from(`${header}\n`), symbols.text]), { mode: 0o600 });
    await rename(temp, file);
  } catch {
    // A read-only or full disk only costs the next run some time.
  }
}
