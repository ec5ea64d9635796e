import { open, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isPrivate, prepareCacheDir } from './symbol-disk-cache.js';

/** The file of demangled names in a symbol cache directory (c++filt's answers, one per line). */
const FILE = 'demangled-v1.txt';
/** Beyond this many names the file starts over with the names of the current run. */
const MAX_NAMES = 200_000;

/**
 * c++filt's answers kept across runs: `mangled<TAB>readable` lines in the (private) symbol cache
 * directory, so a later run on the same binaries starts no c++filt at all. Read only when the
 * directory and the file belong to this user and others cannot write them, like the symbol cache.
 */
export async function readDemangled(dir: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const file = join(dir, FILE);
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    if (!(await isPrivate(dir)) || !(await isPrivate(file))) return names;
    handle = await open(file, 'r');
    const text = await handle.readFile('utf8');
    let pos = 0;
    while (pos < text.length) {
      let end = text.indexOf('\n', pos);
      if (end < 0) end = text.length;
      const tab = text.indexOf('\t', pos);
      if (tab > pos && tab < end) names.set(text.slice(pos, tab), text.slice(tab + 1, end));
      pos = end + 1;
    }
  } catch {
    // no file yet, or unreadable: c++filt answers
  } finally {
    await handle?.close();
  }
  return names;
}

/** Adds `added` to the file (atomically rewritten). Failures are ignored: it is a cache. */
export async function writeDemangled(
  dir: string,
  known: Map<string, string>,
  added: Map<string, string>,
): Promise<void> {
  if ((await prepareCacheDir(dir)) !== undefined) return;
  const all = known.size + added.size > MAX_NAMES ? added : new Map([...known, ...added]);
  let text = '';
  for (const [mangled, readable] of all) {
    if (/[\t\n]/.test(mangled) || /[\t\n]/.test(readable)) continue;
    text += `${mangled}\t${readable}\n`;
  }
  const file = join(dir, FILE);
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(temp, text, { mode: 0o600 });
    await rename(temp, file);
  } catch {
    // a read-only or full disk only costs the next run a c++filt
  }
}
