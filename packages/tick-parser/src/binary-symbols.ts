import { spawn } from 'node:child_process';
import { open, stat } from 'node:fs/promises';

/** The code symbols of one binary file, sorted by address (addresses as in the file). */
export interface SymbolTable {
  path: string;
  /** 'exec': fixed-address executable (non-PIE); 'dyn': PIE executable or shared library. */
  elfType: 'exec' | 'dyn';
  /** File offset minus virtual address of `.text` (from `objdump -h`), 0 for exec or when unknown. */
  textOffsetMinusVma: number;
  starts: Float64Array;
  ends: Float64Array;
  names: string[];
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

interface ToolResult {
  stdout: string;
  error?: string;
  missing?: boolean;
}

/** Runs a tool without a shell; the path is one argument after `--`, never parsed as an option. */
function runTool(command: string, args: string[], timeoutMs: number): Promise<ToolResult> {
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, { shell: false, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    } catch (error) {
      resolve({ stdout: '', error: (error as Error).message, missing: true });
      return;
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
      resolve({ stdout: '', error: `${command}: ${error.message}`, missing: error.code === 'ENOENT' });
    });
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(chunks).toString('utf8');
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

const SYMBOL_LINE = /^([0-9a-fA-F]{1,16}) (?:([0-9a-fA-F]{1,16}) )?([tTwWiI]) (.+)$/;
/** `name@@GLIBC_2.2.5` → `name` (symbol versions of dynamic symbols). */
const VERSION_SUFFIX = /@@?[A-Za-z0-9_.]+$/;

interface RawSymbol {
  start: number;
  size: number;
  name: string;
}

function parseNmOutput(text: string, into: RawSymbol[]): void {
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = text.length;
    const match = SYMBOL_LINE.exec(text.slice(pos, nl));
    pos = nl + 1;
    if (!match) continue;
    into.push({
      start: Number.parseInt(match[1], 16),
      size: match[2] ? Number.parseInt(match[2], 16) : 0,
      name: match[4].replace(VERSION_SUFFIX, ''),
    });
  }
}

function buildTable(
  path: string,
  elfType: 'exec' | 'dyn',
  shift: number,
  raw: RawSymbol[],
  warnings: string[],
): SymbolTable {
  raw.sort((a, b) => a.start - b.start || b.size - a.size);
  const starts: number[] = [];
  const ends: number[] = [];
  const names: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const sym = raw[i];
    if (starts.length > 0 && starts[starts.length - 1] === sym.start) continue; // aliases: keep one
    let end = sym.start + sym.size;
    if (sym.size === 0) {
      // No size: up to the next symbol, as V8's tick processor does.
      let j = i + 1;
      while (j < raw.length && raw[j].start === sym.start) j++;
      end = j < raw.length ? raw[j].start : sym.start + 1;
    }
    starts.push(sym.start);
    ends.push(end);
    names.push(sym.name);
  }
  return {
    path,
    elfType,
    textOffsetMinusVma: shift,
    starts: Float64Array.from(starts),
    ends: Float64Array.from(ends),
    names,
    warnings,
  };
}

/**
 * Reads the code symbols of a binary with `nm -C --defined-only -S` (and `nm -D` when the file has
 * no symbol table), plus `objdump -h` for the text section's offset of position-independent files.
 * Never throws: problems end up in `warnings` and an empty table.
 */
export async function readSymbolTable(path: string, options: SymbolToolOptions = {}): Promise<SymbolTable> {
  const nm = options.nm ?? 'nm';
  const objdump = options.objdump ?? 'objdump';
  const timeout = options.toolTimeoutMs ?? 60_000;
  const warnings: string[] = [];
  const empty = (): SymbolTable => buildTable(path, 'dyn', 0, [], warnings);

  const type = await readElfType(path);
  if (typeof type === 'object') {
    warnings.push(
      `cannot read symbols of ${path} (${type.error}); its ticks are counted under the library name`,
    );
    return empty();
  }
  const [symbols, headers] = await Promise.all([
    runTool(nm, ['-C', '--defined-only', '-S', '--', path], timeout),
    type === 'dyn' ? runTool(objdump, ['-h', '--', path], timeout) : Promise.resolve(undefined),
  ]);
  const raw: RawSymbol[] = [];
  if (symbols.error && symbols.missing) {
    warnings.push(
      `${nm} is not available (${symbols.error}): C++ frames of ${path} stay unresolved and are counted under the library name; install binutils`,
    );
    return empty();
  }
  parseNmOutput(symbols.stdout, raw);
  if (raw.length === 0) {
    // Stripped binary: only the dynamic symbol table is left.
    const dynamic = await runTool(nm, ['-C', '--defined-only', '-S', '-D', '--', path], timeout);
    parseNmOutput(dynamic.stdout, raw);
    if (raw.length === 0) {
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
      for (const line of headers.stdout.split('\n')) {
        const parts = line.trim().split(/\s+/);
        if (parts[1] === '.text' && parts.length >= 6) {
          const vma = Number.parseInt(parts[3], 16);
          const offset = Number.parseInt(parts[5], 16);
          if (Number.isFinite(vma) && Number.isFinite(offset)) shift = offset - vma;
        }
      }
    }
  }
  return buildTable(path, type, shift, raw, warnings);
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
    return buildTable(path, 'dyn', 0, [], [`not reading symbols of "${path}": not an absolute path`]);
  }
  let key: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) {
      return buildTable(path, 'dyn', 0, [], [`not reading symbols of ${path}: not a regular file`]);
    }
    key = `${path}\u0000${info.size}\u0000${info.mtimeMs}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return buildTable(
      path,
      'dyn',
      0,
      [],
      [`cannot read ${path} (${code}); its ticks are counted under the library name`],
    );
  }
  let table = cache.get(key);
  if (!table) {
    table = readSymbolTable(path, options);
    cache.set(key, table);
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
