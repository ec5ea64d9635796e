/** The code symbols of one binary file, sorted by address (addresses as in the file). */
export interface SymbolTable {
  path: string;
  /** 'exec': fixed-address executable (non-PIE); 'dyn': PIE executable or shared library. */
  elfType: 'exec' | 'dyn';
  /** File offset minus virtual address of `.text` (from the section headers), 0 for exec or when unknown. */
  textOffsetMinusVma: number;
  /** Where the symbols came from: this package's ELF reader, or nm's output. */
  source: 'elf' | 'nm';
  starts: Float64Array;
  ends: Float64Array;
  /**
   * nm's output or the ELF string table; symbol i's name is bytes nameStarts[i]..nameEnds[i]
   * (decoded on demand). In an ELF string table names end at a NUL, and nameEnds[i] is 0 until
   * symbolName has looked for it.
   */
  text: Buffer;
  nameStarts: Int32Array;
  nameEnds: Int32Array;
  /** What went wrong or was guessed while reading it. */
  warnings: string[];
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
  return sortedTable(
    path,
    elfType,
    shift,
    'nm',
    text,
    { starts: rawStart, sizes: rawSize, nameStarts: rawName, nameEnds: rawNameEnd },
    n,
    warnings,
  );
}

/** Symbols in the order they were read: address, size (0 = unknown), name bounds in the text (end 0: up to a NUL). */
export interface RawSymbols {
  starts: Float64Array;
  sizes: Float64Array;
  nameStarts: Int32Array;
  nameEnds: Int32Array;
}

/**
 * Sorts symbols by address and keeps one per address: the largest, and among equals the first
 * in nm -n's order (which sorts aliases by name, so the ELF reader's symbols are compared by
 * name). A symbol without a size reaches the next symbol, as V8's tick processor assumes.
 */
export function sortedTable(
  path: string,
  elfType: 'exec' | 'dyn',
  shift: number,
  source: 'elf' | 'nm',
  text: Buffer,
  raw: RawSymbols,
  n: number,
  warnings: string[],
): SymbolTable {
  const { starts: rawStart, sizes: rawSize, nameStarts: rawName, nameEnds: rawNameEnd } = raw;
  const order = byAddress(rawStart, n);
  const starts = new Float64Array(n);
  const ends = new Float64Array(n);
  const nameStarts = new Int32Array(n);
  const nameEnds = new Int32Array(n);
  let kept = 0;
  let k = 0;
  while (k < n) {
    // Aliases share an address: keep the largest, then the first name.
    let best = order[k]!;
    const start = rawStart[best]!;
    let next = k + 1;
    for (; next < n && rawStart[order[next]!] === start; next++) {
      const other = order[next]!;
      const size = rawSize[other]!;
      if (
        size > rawSize[best]! ||
        (size === rawSize[best] && source === 'elf' && nameBefore(text, raw, other, best))
      ) {
        best = other;
      }
    }
    const size = rawSize[best]!;
    starts[kept] = start;
    ends[kept] = size > 0 ? start + size : next < n ? rawStart[order[next]!]! : start + 1;
    nameStarts[kept] = rawName[best]!;
    nameEnds[kept] = rawNameEnd[best]!;
    kept++;
    k = next;
  }
  return {
    path,
    elfType,
    textOffsetMinusVma: shift,
    source,
    starts: starts.subarray(0, kept),
    ends: ends.subarray(0, kept),
    text,
    nameStarts: nameStarts.subarray(0, kept),
    nameEnds: nameEnds.subarray(0, kept),
    warnings,
  };
}

/** Whether symbol a's name sorts before symbol b's, byte by byte (names end at a NUL or their end). */
function nameBefore(text: Buffer, raw: RawSymbols, a: number, b: number): boolean {
  let i = raw.nameStarts[a]!;
  let j = raw.nameStarts[b]!;
  const iEnd = raw.nameEnds[a] || text.length;
  const jEnd = raw.nameEnds[b] || text.length;
  for (; i < iEnd && j < jEnd; i++, j++) {
    const x = text[i]!;
    const y = text[j]!;
    if (x !== y) return x < y;
    if (x === 0) return false;
  }
  return i === iEnd && j < jEnd && text[j] !== 0;
}

/**
 * Indices 0..n-1 in address order (stable). nm -n's output is in order already. Otherwise, where
 * address and index fit together in a double's 53 bits (every executable and library seen so
 * far), one native sort of address·2^k + index does it without calling a comparator 1.5 million
 * times for 100 000 symbols.
 */
function byAddress(starts: Float64Array, n: number): Uint32Array {
  const order = new Uint32Array(n);
  let sorted = true;
  let max = 0;
  for (let i = 0; i < n; i++) {
    const start = starts[i]!;
    if (start < max) sorted = false;
    else max = start;
  }
  if (sorted) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order;
  }
  const scale = 2 ** Math.ceil(Math.log2(n + 1));
  if (max * scale + scale > Number.MAX_SAFE_INTEGER) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order.sort((a, b) => starts[a]! - starts[b]! || a - b);
  }
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = starts[i]! * scale + i;
  keys.sort();
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    order[i] = key - Math.floor(key / scale) * scale;
  }
  return order;
}

/** The demangled name of symbol `index`, without a symbol version suffix. */
export function symbolName(table: SymbolTable, index: number): string {
  const start = table.nameStarts[index]!;
  let end = table.nameEnds[index]!;
  if (end === 0) {
    // Names from an ELF string table: found on first use (most symbols are never named).
    end = table.text.indexOf(0, start);
    if (end === -1) end = table.text.length;
    table.nameEnds[index] = end;
  }
  return table.text.toString('utf8', start, end).replace(VERSION_SUFFIX, '');
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
