import { open, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ElfSymbols, readElfHeaders } from './elf-symbols.js';
import { isPrivate } from './symbol-disk-cache.js';
import { type SymbolTable, sortedSymbols } from './symbol-table.js';

/**
 * The sorted listing of an ELF file's code symbols (one per address, see `sortedSymbols`) kept in
 * the symbol cache directory in binary form, so that a later run reads 20 bytes per symbol into
 * typed arrays instead of the symbol and string tables (10 MB for node) and one pass over them.
 * Names stay in the binary and are read for the sampled symbols only (`loadSymbolNames`).
 *
 * File: one JSON line (format version, the binary's path + size + mtime + build id, its type,
 * `.text` offset, where the names are), padded with spaces to a multiple of 8 bytes, then starts
 * (float64), sizes (float64) and name offsets (int32), native byte order.
 */
const VERSION = 1;
const MAX_HEADER = 4096;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

interface Header {
  v: number;
  key: string;
  le: boolean;
  elfType: 'exec' | 'dyn';
  shift: number;
  source: '.symtab' | '.dynsym';
  namesOffset: number;
  namesSize: number;
  count: number;
}

/** Two 32-bit FNV-1a hashes of `text`, as 16 hex digits: a file name, checked against the header. */
function fileName(key: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return `elf-${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}.symbols`;
}

/**
 * The cached listing of `path` as a SymbolTable (names read from the file on demand), or
 * undefined when there is none, it is foreign or stale (other size, mtime or build id), or the
 * binary's headers have changed. `key` is the binary's path + size + mtime.
 */
export async function readCachedElfTable(
  path: string,
  key: string,
  dir: string,
): Promise<SymbolTable | undefined> {
  const headers = await readElfHeaders(path);
  if ('error' in headers) return undefined;
  const fullKey = `${key}\u0000${headers.buildId}`;
  const file = join(dir, fileName(fullKey));
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    if (!(await isPrivate(file))) return undefined;
    handle = await open(file, 'r');
    const size = (await handle.stat()).size;
    // Own memory at offset 0, so the arrays below can view it in place (aligned).
    const data = new Uint8Array(size);
    const { bytesRead } = await handle.read(data, 0, size, 0);
    if (bytesRead !== size) return undefined;
    const bytes = Buffer.from(data.buffer, 0, size);
    const nl = bytes.indexOf(10);
    if (nl < 0 || nl >= MAX_HEADER) return undefined;
    const header = JSON.parse(bytes.toString('utf8', 0, nl)) as Header;
    const at = Math.ceil((nl + 1) / 8) * 8;
    const count = header.count;
    const names = headers.stringTables[header.source];
    if (
      header.v !== VERSION ||
      header.key !== fullKey ||
      header.le !== LITTLE_ENDIAN ||
      header.elfType !== headers.elfType ||
      header.shift !== (headers.elfType === 'dyn' ? headers.textOffsetMinusVma : 0) ||
      !Number.isSafeInteger(count) ||
      count <= 0 ||
      size !== at + count * 20 ||
      names === undefined ||
      names.offset !== header.namesOffset ||
      names.size !== header.namesSize
    ) {
      return undefined;
    }
    return {
      path,
      elfType: headers.elfType,
      textOffsetMinusVma: headers.elfType === 'dyn' ? headers.textOffsetMinusVma : 0,
      source: 'elf',
      count,
      starts: new Float64Array(data.buffer, at, count),
      sizes: new Float64Array(data.buffer, at + count * 8, count),
      text: Buffer.alloc(0),
      nameStarts: new Int32Array(data.buffer, at + count * 16, count),
      nameEnds: new Int32Array(count),
      listed: true,
      nameFile: { path, offset: names.offset, size: names.size, loaded: new Map() },
      warnings: [],
    };
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

/**
 * The listing of a table read from an ELF file (names still in memory), and stores it for later
 * runs (atomically: a temporary file, then rename; failures are ignored, it is a cache).
 */
export async function listAndCacheElfTable(
  table: SymbolTable,
  elf: Pick<ElfSymbols, 'source' | 'namesOffset' | 'buildId'>,
  key: string,
  dir: string,
): Promise<SymbolTable> {
  const sorted = sortedSymbols(table);
  const count = sorted.starts.length;
  // (starts, ends and symbols have `count` entries each, and every symbol is one of the table's)
  const sizes = sorted.ends.map((end, k) => end - (sorted.starts[k] ?? end));
  // 0 is the empty name of an ELF string table, and a name end of 0 means "not looked for yet"
  const nameStarts = Int32Array.from(sorted.symbols, (symbol) => table.nameStarts[symbol] ?? 0);
  const nameEnds = Int32Array.from(sorted.symbols, (symbol) => table.nameEnds[symbol] ?? 0);
  const listed: SymbolTable = {
    ...table,
    count,
    starts: sorted.starts,
    sizes,
    nameStarts,
    nameEnds,
    listed: true,
  };
  if (count === 0) return listed;
  const fullKey = `${key}\u0000${elf.buildId}`;
  const header: Header = {
    v: VERSION,
    key: fullKey,
    le: LITTLE_ENDIAN,
    elfType: table.elfType,
    shift: table.textOffsetMinusVma,
    source: elf.source,
    namesOffset: elf.namesOffset,
    namesSize: table.text.length,
    count,
  };
  let line = `${JSON.stringify(header)}\n`;
  const at = Math.ceil(Buffer.byteLength(line) / 8) * 8;
  line = `${line.slice(0, -1)}${' '.repeat(at - Buffer.byteLength(line))}\n`;
  const file = join(dir, fileName(fullKey));
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(
      temp,
      Buffer.concat([
        Buffer.from(line),
        new Uint8Array(sorted.starts.buffer, sorted.starts.byteOffset, count * 8),
        new Uint8Array(sizes.buffer, 0, count * 8),
        new Uint8Array(nameStarts.buffer, 0, count * 4),
      ]),
      { mode: 0o600 },
    );
    await rename(temp, file);
  } catch {
    // a read-only or full disk only costs the next run the full read
  }
  return listed;
}
