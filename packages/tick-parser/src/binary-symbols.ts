import { open, stat } from 'node:fs/promises';
import { listAndCacheElfTable, readCachedElfTable } from './elf-symbol-cache.js';
import { readElfSymbols } from './elf-symbols.js';
import { runTool } from './run-tool.js';
import { prepareCacheDir, readCachedSymbols, writeCachedSymbols } from './symbol-disk-cache.js';
import { buildTable, type SymbolTable } from './symbol-table.js';

export interface SymbolToolOptions {
  /**
   * The `nm` executable. By default symbols are read from the ELF file directly and nm
   * (default `nm`) is only the fallback for a file that reader cannot parse; naming a tool here
   * (or `objdump`) makes nm and objdump read every file.
   */
  nm?: string;
  /** The `objdump` executable (default `objdump`); see `nm`. */
  objdump?: string;
  /** Time limit per tool run (default 60 s). */
  toolTimeoutMs?: number;
  /**
   * Directory for symbol tables kept across runs (keyed by path + size + mtime, and build id for
   * tables read from ELF files; private to the user, mode 0700): nm's output, or the sorted
   * listing of an ELF file's code symbols. Default: none, every binary is read every run.
   */
  symbolCacheDir?: string;
}

/**
 * Symbol tables by binary, keyed by path + size + mtime, so a binary named several times (or in
 * several logs) is read once. Pass one cache to several `parseTickLog` calls to share it.
 */
export class SymbolCache {
  private readonly tables = new Map<string, Promise<SymbolTable>>();

  get(key: string): Promise<SymbolTable> | undefined {
    return this.tables.get(key);
  }

  set(key: string, table: Promise<SymbolTable>): void {
    this.tables.set(key, table);
  }

  get size(): number {
    return this.tables.size;
  }
}

/** Reads the ELF header: 'exec' (ET_EXEC), 'dyn' (ET_DYN), or an error text. */
export async function readElfType(path: string): Promise<'exec' | 'dyn' | { error: string }> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, 'r');
    const header = Buffer.alloc(20);
    const { bytesRead } = await handle.read(header, 0, 20, 0);
    if (bytesRead < 18 || header.readUInt32BE(0) !== 0x7f454c46) return { error: 'not an ELF file' };
    const type = header[5] === 2 ? header.readUInt16BE(16) : header.readUInt16LE(16);
    if (type === 2) return 'exec';
    if (type === 3) return 'dyn';
    return { error: `ELF type ${type} is neither an executable nor a shared object` };
  } catch (error) {
    return { error: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  } finally {
    await handle?.close();
  }
}

/**
 * Reads the code symbols of a binary: from its ELF symbol table (`.symtab`, or `.dynsym` when
 * stripped) and section headers by default; with `nm -n --defined-only -S` (`nm -D` when the file
 * has no symbol table) and `objdump -h` when tools are named in the options or the file cannot be
 * parsed. Never throws: problems end up in `warnings` and an empty table.
 */
export async function readSymbolTable(
  path: string,
  options: SymbolToolOptions = {},
  cacheKey?: string,
): Promise<SymbolTable> {
  const warnings: string[] = [];
  if (options.nm === undefined && options.objdump === undefined) {
    const cache =
      cacheKey && options.symbolCacheDir ? { key: cacheKey, dir: options.symbolCacheDir } : undefined;
    const problem = cache ? await prepareCacheDir(cache.dir) : undefined;
    if (cache && !problem) {
      const cached = await readCachedElfTable(path, cache.key, cache.dir);
      if (cached) return cached;
    }
    const elf = await readElfSymbols(path);
    if (!('error' in elf)) {
      const table: SymbolTable = {
        path,
        elfType: elf.elfType,
        textOffsetMinusVma: elf.elfType === 'dyn' ? elf.textOffsetMinusVma : 0,
        source: 'elf',
        count: elf.count,
        starts: elf.starts,
        sizes: elf.sizes,
        text: elf.names,
        nameStarts: elf.nameStarts,
        nameEnds: elf.nameEnds,
        warnings,
      };
      if (table.count === 0) {
        warnings.push(`no code symbols in ${path} (stripped); its ticks are counted under the library name`);
      } else if (problem) warnings.push(problem);
      else if (cache) return listAndCacheElfTable(table, elf, cache.key, cache.dir);
      return table;
    }
    if (elf.error !== 'not an ELF file')
      warnings.push(`cannot parse ${path} as ELF (${elf.error}); trying nm`);
  }
  return options.symbolCacheDir && cacheKey
    ? readThroughDiskCache(path, cacheKey, options.symbolCacheDir, options, warnings)
    : readSymbolTableWithTools(path, options, warnings);
}

/** readSymbolTable with nm and objdump. */
async function readSymbolTableWithTools(
  path: string,
  options: SymbolToolOptions,
  warnings: string[],
): Promise<SymbolTable> {
  const nm = options.nm ?? 'nm';
  const objdump = options.objdump ?? 'objdump';
  const timeout = options.toolTimeoutMs ?? 60_000;
  const empty = (): SymbolTable => buildTable(path, 'dyn', 0, Buffer.alloc(0), warnings);

  const type = await readElfType(path);
  if (typeof type === 'object') {
    warnings.push(
      `cannot read symbols of ${path} (${type.error}); its ticks are counted under the library name`,
    );
    return empty();
  }
  const [symbols, headers] = await Promise.all([
    runTool(nm, ['-n', '--defined-only', '-S', '--', path], timeout),
    type === 'dyn' ? runTool(objdump, ['-h', '--', path], timeout) : Promise.resolve(undefined),
  ]);
  if (symbols.error && symbols.missing) {
    warnings.push(
      `${nm} is not available (${symbols.error}): C++ frames of ${path} stay unresolved and are counted under the library name; install binutils`,
    );
    return empty();
  }
  let table = buildTable(path, type, 0, symbols.stdout, warnings);
  if (table.count === 0) {
    // Stripped binary: only the dynamic symbol table is left.
    const dynamic = await runTool(nm, ['-n', '--defined-only', '-S', '-D', '--', path], timeout);
    table = buildTable(path, type, 0, dynamic.stdout, warnings);
    if (table.count === 0) {
      warnings.push(
        `no code symbols in ${path} (${dynamic.error ?? symbols.error ?? 'stripped'}); its ticks are counted under the library name`,
      );
    }
  } else if (symbols.error) {
    warnings.push(`${path}: ${symbols.error}; symbols may be incomplete`);
  }

  let shift = 0;
  if (type === 'dyn' && headers) {
    if (headers.error && headers.missing) {
      warnings.push(
        `${objdump} is not available (${headers.error}): assuming ${path}'s .text is at its file offset`,
      );
    } else {
      for (const line of headers.stdout.toString('utf8').split('\n')) {
        // "Idx Name Size VMA LMA File-off Algn"
        const [, name, , vmaHex, , offsetHex] = line.trim().split(/\s+/);
        if (name === '.text' && vmaHex !== undefined && offsetHex !== undefined) {
          const vma = Number.parseInt(vmaHex, 16);
          const offset = Number.parseInt(offsetHex, 16);
          if (Number.isFinite(vma) && Number.isFinite(offset)) shift = offset - vma;
        }
      }
    }
  }
  table.textOffsetMinusVma = shift;
  return table;
}

/**
 * The cached symbol table of `path`, read once per path + size + mtime. A path that is not
 * absolute or not a regular file is never given to a tool.
 */
export async function loadSymbols(
  path: string,
  cache: SymbolCache,
  options: SymbolToolOptions = {},
): Promise<SymbolTable> {
  if (!path.startsWith('/')) {
    return buildTable(path, 'dyn', 0, Buffer.alloc(0), [
      `not reading symbols of "${path}": not an absolute path`,
    ]);
  }
  let key: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) {
      return buildTable(path, 'dyn', 0, Buffer.alloc(0), [
        `not reading symbols of ${path}: not a regular file`,
      ]);
    }
    key = `${path}\u0000${info.size}\u0000${info.mtimeMs}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return buildTable(path, 'dyn', 0, Buffer.alloc(0), [
      `cannot read ${path} (${code}); its ticks are counted under the library name`,
    ]);
  }
  let table = cache.get(key);
  if (!table) {
    table = readSymbolTable(path, options, key);
    cache.set(key, table);
  }
  return table;
}

/** readSymbolTableWithTools through the cache directory: nm's output is kept across runs. */
async function readThroughDiskCache(
  path: string,
  key: string,
  dir: string,
  options: SymbolToolOptions,
  warnings: string[],
): Promise<SymbolTable> {
  const problem = await prepareCacheDir(dir);
  if (!problem) {
    const cached = await readCachedSymbols(dir, key);
    if (cached) return buildTable(path, cached.elfType, cached.textOffsetMinusVma, cached.text, warnings);
  }
  const table = await readSymbolTableWithTools(path, options, warnings);
  if (problem) table.warnings.push(problem);
  else if (table.warnings.length === 0 && table.count > 0) {
    await writeCachedSymbols(dir, key, {
      elfType: table.elfType,
      textOffsetMinusVma: table.textOffsetMinusVma,
      text: table.text,
    });
  }
  return table;
}

export type { SymbolTable } from './symbol-table.js';
export { findSymbol, loadSymbolNames, lookupSymbols, sortedSymbols, symbolName } from './symbol-table.js';
