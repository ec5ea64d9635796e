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
  /** nm's output or the ELF string table; symbol i's name is bytes nameStarts[i]..nameEnds[i] (decoded on demand). */
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

/** Symbols in the order they were read: address, size (0 = unknown), name bounds in the text. */
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
  const order = new Uint32Array(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    order[i] = i;
    if (i > 0 && rawStart[i]! < rawStart[i - 1]!) sorted = false;
  }
  // nm -n prints by address already; sort only when the input is not.
  if (!sorted) order.sort((a, b) => rawStart[a]! - rawStart[b]!);
  const starts = new Float64Array(n);
  const ends = new Float64Array(n);
  const nameStarts = new Int32Array(n);
  const nameEnds = new Int32Array(n);
  let kept = 0;
  for (let k = 0; k < n; ) {
    // Aliases share an address: keep the largest, then the first name.
    const start = rawStart[order[k]!]!;
    let best = order[k]!;
    let next = k + 1;
    while (next < n && rawStart[order[next]!] === start) {
      const other = order[next]!;
      if (
        rawSize[other]! > rawSize[best]! ||
        (source === 'elf' &&
          rawSize[other] === rawSize[best] &&
          text.compare(text, rawName[best], rawNameEnd[best], rawName[other], rawNameEnd[other]) < 0)
      ) {
        best = other;
      }
      next++;
    }
    const end = rawSize[best]! > 0 ? start + rawSize[best]! : next < n ? rawStart[order[next]!]! : start + 1;
    starts[kept] = start;
    ends[kept] = end;
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

/** The demangled name of symbol `index`, without a symbol version suffix. */
export function symbolName(table: SymbolTable, index: number): string {
  return table.text
    .toString('utf8', table.nameStarts[index], table.nameEnds[index])
    .replace(VERSION_SUFFIX, '');
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
