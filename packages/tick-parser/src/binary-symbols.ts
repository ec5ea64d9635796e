import { spawn } from 'node:child_process';
import { open, stat } from 'node:fs/promises';
import { prepareCacheDir, readCachedSymbols, writeCachedSymbols } from './symbol-disk-cache.js';

/** The code symbols of one binary file, sorted by address (addresses as in the file). */
export interface SymbolTable {
  path: string;
  /** 'exec': fixed-address executable (non-PIE); 'dyn': PIE executable or shared library. */
  elfType: 'exec' | 'dyn';
  /** File offset minus virtual address of `.text` (from `objdump -h`), 0 for exec or when unknown. */
  textOffsetMinusVma: number;
  starts: Float64Array;
  ends: Float64Array;
  /** nm's output; symbol i's name is bytes nameStarts[i]..nameEnds[i] (decoded on demand). */
  text: Buffer;
  nameStarts: Int32Array;
  nameEnds: Int32Array;
  /** What went wrong or was guessed while reading it. */
  warnings: string[];
}

export interface SymbolToolOptions {
  /** The `nm` executable (default `nm`). */
  nm?: string;
  /** The `objdump` executable (default `objdump`). */
  objdump?: string;
  /** Time limit per tool run (default 60 s). */
  toolTimeoutMs?: number;
  /**
   * Directory for symbol tables kept across runs (keyed by path + size + mtime; private to the
   * user, mode 0700). Default: none, symbols are read with nm every run.
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

const MAX_TOOL_OUTPUT = 512 * 1024 * 1024;

export interface ToolResult {
  stdout: Buffer;
  error?: string;
  missing?: boolean;
}

/** Runs a tool without a shell; the path is one argument after `--`, never parsed as an option. */
export function runTool(
  command: string,
  args: string[],
  timeoutMs: number,
  input?: Buffer,
): Promise<ToolResult> {
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, {
        shell: false,
        stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        timeout: timeoutMs,
      });
    } catch (error) {
      resolve({ stdout: Buffer.alloc(0), error: (error as Error).message, missing: true });
      return;
    }
    if (input) {
      child.stdin!.on('error', () => undefined); // the tool may exit before reading everything
      child.stdin!.end(input);
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let stderr = '';
    let tooBig = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_TOOL_OUTPUT) {
        tooBig = true;
        child.kill('SIGKILL');
        return;
      }
      chunks.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      resolve({
        stdout: Buffer.alloc(0),
        error: `${command}: ${error.message}`,
        missing: error.code === 'ENOENT',
      });
    });
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(chunks);
      if (tooBig) resolve({ stdout, error: `${command} printed more than ${MAX_TOOL_OUTPUT} bytes; cut` });
      else if (signal)
        resolve({ stdout, error: `${command} stopped by ${signal} (time limit ${timeoutMs} ms?)` });
      else if (code !== 0)
        resolve({ stdout, error: `${command} exited with ${code}: ${stderr.trim().split('\n')[0]}` });
      else resolve({ stdout });
    });
  });
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

/** `name@@GLIBC_2.2.5` → `name` (symbol versions of dynamic symbols). */
const VERSION_SUFFIX = /@@?[A-Za-z0-9_.]+$/;

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Code symbol types of nm: text (t/T), weak (w/W), indirect functions (i). */
function isCodeType(c: number): boolean {
  return c === 116 || c === 84 || c === 119 || c === 87 || c === 105 || c === 73;
}

/**
 * Parses `nm -S` lines ("addr [size] type name") straight from its output bytes; names stay in the
 * buffer as offsets, so a binary with 100k symbols costs a few typed arrays, not 100k strings.
 */
export function buildTable(
  path: string,
  elfType: 'exec' | 'dyn',
  shift: number,
  text: Buffer,
  warnings: string[],
): SymbolTable {
  let capacity = 0;
  for (let pos = text.indexOf(10); pos !== -1; pos = text.indexOf(10, pos + 1)) capacity++;
  capacity++;
  const rawStart = new Float64Array(capacity);
  const rawSize = new Float64Array(capacity);
  const rawName = new Int32Array(capacity);
  const rawNameEnd = new Int32Array(capacity);
  let n = 0;
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf(10, pos);
    if (end === -1) end = text.length;
    const lineStart = pos;
    pos = end + 1;
    let p = lineStart;
    let addr = 0;
    let digits = 0;
    for (; p < end && text[p] !== 32; p++, digits++) {
      const d = hexValue(text[p]);
      if (d < 0) break;
      addr = addr * 16 + d;
    }
    if (digits === 0 || digits > 16 || text[p] !== 32) continue;
    p++;
    let size = 0;
    // Either "type name" (one character, then a space) or "size type name".
    if (!(p + 1 < end && text[p + 1] === 32)) {
      let sizeDigits = 0;
      for (; p < end && text[p] !== 32; p++, sizeDigits++) {
        const d = hexValue(text[p]);
        if (d < 0) break;
        size = size * 16 + d;
      }
      if (sizeDigits === 0 || text[p] !== 32) continue;
      p++;
    }
    if (p + 2 >= end || text[p + 1] !== 32 || !isCodeType(text[p])) continue;
    rawStart[n] = addr;
    rawSize[n] = size;
    rawName[n] = p + 2;
    rawNameEnd[n] = end;
    n++;
  }
  const order = new Uint32Array(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    order[i] = i;
    if (i > 0 && rawStart[i] < rawStart[i - 1]) sorted = false;
  }
  // nm -n prints by address already; sort only when it did not.
  if (!sorted) order.sort((a, b) => rawStart[a] - rawStart[b]);
  const starts = new Float64Array(n);
  const ends = new Float64Array(n);
  const nameStarts = new Int32Array(n);
  const nameEnds = new Int32Array(n);
  let kept = 0;
  for (let k = 0; k < n; ) {
    // Aliases share an address: keep the largest.
    const start = rawStart[order[k]];
    let best = order[k];
    let next = k + 1;
    while (next < n && rawStart[order[next]] === start) {
      if (rawSize[order[next]] > rawSize[best]) best = order[next];
      next++;
    }
    // No size: up to the next symbol, as V8's tick processor does.
    const end = rawSize[best] > 0 ? start + rawSize[best] : next < n ? rawStart[order[next]] : start + 1;
    starts[kept] = start;
    ends[kept] = end;
    nameStarts[kept] = rawName[best];
    nameEnds[kept] = rawNameEnd[best];
    kept++;
    k = next;
  }
  return {
    path,
    elfType,
    textOffsetMinusVma: shift,
    starts: starts.subarray(0, kept),
    ends: ends.subarray(0, kept),
    text,
    nameStarts: nameStarts.subarray(0, kept),
    nameEnds: nameEnds.subarray(0, kept),
    warnings,
  };
}

/** The demangled name of symbol `index`, without a symbol version suffix. */
export function symbolName(table: SymbolTable, index: number): string {
  return table.text
    .toString('utf8', table.nameStarts[index], table.nameEnds[index])
    .replace(VERSION_SUFFIX, '');
}

/**
 * Reads the code symbols of a binary with `nm -n --defined-only -S` (and `nm -D` when the file has
 * no symbol table), plus `objdump -h` for the text section's offset of position-independent files.
 * Never throws: problems end up in `warnings` and an empty table.
 */
export async function readSymbolTable(path: string, options: SymbolToolOptions = {}): Promise<SymbolTable> {
  const nm = options.nm ?? 'nm';
  const objdump = options.objdump ?? 'objdump';
  const timeout = options.toolTimeoutMs ?? 60_000;
  const warnings: string[] = [];
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
  if (table.starts.length === 0) {
    // Stripped binary: only the dynamic symbol table is left.
    const dynamic = await runTool(nm, ['-n', '--defined-only', '-S', '-D', '--', path], timeout);
    table = buildTable(path, type, 0, dynamic.stdout, warnings);
    if (table.starts.length === 0) {
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
        const parts = line.trim().split(/\s+/);
        if (parts[1] === '.text' && parts.length >= 6) {
          const vma = Number.parseInt(parts[3], 16);
          const offset = Number.parseInt(parts[5], 16);
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
    table = options.symbolCacheDir
      ? readThroughDiskCache(path, key, options.symbolCacheDir, options)
      : readSymbolTable(path, options);
    cache.set(key, table);
  }
  return table;
}

async function readThroughDiskCache(
  path: string,
  key: string,
  dir: string,
  options: SymbolToolOptions,
): Promise<SymbolTable> {
  const problem = await prepareCacheDir(dir);
  if (!problem) {
    const cached = await readCachedSymbols(dir, key);
    if (cached) return buildTable(path, cached.elfType, cached.textOffsetMinusVma, cached.text, []);
  }
  const table = await readSymbolTable(path, options);
  if (problem) table.warnings.push(problem);
  else if (table.warnings.length === 0 && table.starts.length > 0) {
    await writeCachedSymbols(dir, key, {
      elfType: table.elfType,
      textOffsetMinusVma: table.textOffsetMinusVma,
      text: table.text,
    });
  }
  return table;
}

/** Index of the symbol containing file address `addr`, or -1. */
export function findSymbol(table: SymbolTable, addr: number): number {
  const { starts, ends } = table;
  let lo = 0;
  let hi = starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid] <= addr) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && addr < ends[found] ? found : -1;
}
