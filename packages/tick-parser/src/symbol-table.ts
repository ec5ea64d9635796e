import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The code symbols of one binary file as read (nm's order or the ELF file's), aliases included;
 * addresses as in the file. Lookups go through `lookupSymbols` (many addresses in one pass, no
 * sort of the table) or `sortedSymbols` (the table as `nm -n` lists it, one symbol per address).
 */
export interface SymbolTable {
  path: string;
  /** 'exec': fixed-address executable (non-PIE); 'dyn': PIE executable or shared library. */
  elfType: 'exec' | 'dyn';
  /** File offset minus virtual address of `.text` (from the section headers), 0 for exec or when unknown. */
  textOffsetMinusVma: number;
  /** Where the symbols came from: this package's ELF reader, or nm's output. */
  source: 'elf' | 'nm';
  /** Number of symbols; the arrays below have this length. */
  count: number;
  starts: Float64Array;
  /** 0: unknown, the symbol reaches the next one (as V8's tick processor assumes). */
  sizes: Float64Array;
  /**
   * nm's output or the ELF string table; symbol i's name is bytes nameStarts[i]..nameEnds[i]
   * (decoded on demand). In an ELF string table names end at a NUL, and nameEnds[i] is 0 until
   * symbolName has looked for it.
   */
  text: Buffer;
  nameStarts: Int32Array;
  nameEnds: Int32Array;
  /**
   * True when the table is already the sorted listing (see `sortedSymbols`): ascending starts,
   * one symbol per address, every size > 0 reaching the symbol's end. Lookups are then binary
   * searches. (Tables from the symbol cache directory.)
   */
  listed?: boolean;
  /**
   * Names not in memory: `text` is empty and symbol i's name starts at byte nameStarts[i] of
   * this string table of the file, read when first asked for (see `loadSymbolNames`).
   */
  nameFile?: { path: string; offset: number; size: number; loaded: Map<number, string> };
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
  return {
    path,
    elfType,
    textOffsetMinusVma: shift,
    source: 'nm',
    count: n,
    starts: rawStart.subarray(0, n),
    sizes: rawSize.subarray(0, n),
    text,
    nameStarts: rawName.subarray(0, n),
    nameEnds: rawNameEnd.subarray(0, n),
    warnings,
  };
}

/**
 * Whether symbol a is the one to name its address rather than symbol b: the higher address; at
 * the same address (aliases) the larger, and among equals the first in `nm -n`'s order, which
 * sorts aliases by name (nm's own output is in that order already, so the earlier line wins).
 */
function preferred(table: SymbolTable, a: number, b: number): boolean {
  const { starts, sizes } = table;
  if (starts[a] !== starts[b]) return starts[a]! > starts[b]!;
  if (sizes[a] !== sizes[b]) return sizes[a]! > sizes[b]!;
  return table.source === 'elf' ? nameBefore(table, a, b) : a < b;
}

/** Whether symbol a's name sorts before symbol b's, byte by byte. */
function nameBefore(table: SymbolTable, a: number, b: number): boolean {
  const text = table.text;
  return (
    text.compare(text, table.nameStarts[b]!, nameEnd(table, b), table.nameStarts[a]!, nameEnd(table, a)) < 0
  );
}

/** Where symbol `index`'s name ends in the text (in an ELF string table: found on first use). */
function nameEnd(table: SymbolTable, index: number): number {
  let end = table.nameEnds[index]!;
  if (end === 0) {
    end = table.text.indexOf(0, table.nameStarts[index]!);
    if (end === -1) end = table.text.length;
    table.nameEnds[index] = end;
  }
  return end;
}

/**
 * The symbol containing each of `addresses` (whole file addresses in ascending order, repeats allowed),
 * or -1: the one at the highest address at or below it (see `preferred` for aliases), if the
 * address lies before its end, which is start + size, or the next symbol's address when the size
 * is unknown. The same answers as a binary search in `sortedSymbols`, but in one pass over the
 * table with a binary search among the addresses: a log samples a few hundred places of a
 * binary with 100 000 symbols, and sorting those symbols cost more than everything else.
 */
export function lookupSymbols(table: SymbolTable, addresses: Float64Array): Int32Array {
  const m = addresses.length;
  const found = new Int32Array(m).fill(-1);
  if (m === 0) return found;
  if (table.listed) return lookupListed(table, addresses, found);
  const { starts, sizes, count } = table;
  const first = addresses[0]!;
  const last = addresses[m - 1]!;
  // Where a symbol falls among the addresses: buckets of equal width over [first, last] each know
  // the first address at or above their start, which leaves a binary search over a few addresses.
  const buckets = Math.min(4 * m, 1 << 20);
  const width = Math.floor((last - first) / buckets) + 1;
  const firstAbove = bucketStarts(addresses, buckets, width);
  // best[j]: among the symbols starting in (addresses[j - 1], addresses[j]], the preferred one
  // (see `preferred`). Aliases of equal size are set aside and compared by name afterwards: a
  // rarely taken call in this loop costs more than the loop.
  const best = found;
  const ties: number[] = [];
  const byName = table.source === 'elf';
  let highest = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < count; i++) {
    const start = starts[i]!;
    if (start > highest) highest = start;
    if (start > last) continue;
    let lo = 0;
    let hi = 0;
    if (start > first) {
      const b = Math.floor((start - first) / width);
      lo = firstAbove[b]!;
      hi = firstAbove[b + 1]!;
    }
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (addresses[mid]! < start) lo = mid + 1;
      else hi = mid;
    }
    const other = best[lo]!;
    if (other < 0 || start > starts[other]!) best[lo] = i;
    else if (start === starts[other]) {
      if (sizes[i]! > sizes[other]!) best[lo] = i;
      else if (byName && sizes[i] === sizes[other]) ties.push(lo, i);
    }
  }
  // Ties still standing (same address and size as the final choice), in table order.
  for (let k = 0; k < ties.length; k += 2) {
    const lo = ties[k]!;
    const i = ties[k + 1]!;
    const other = best[lo]!;
    if (starts[i] === starts[other] && sizes[i] === sizes[other] && nameBefore(table, i, other)) best[lo] = i;
  }
  // Symbol of addresses[j]: the last best at or before j (the starts of best[] ascend with j).
  let current = -1;
  for (let j = 0; j < m; j++) {
    if (best[j]! >= 0) current = best[j]!;
    if (current < 0) continue;
    const addr = addresses[j]!;
    const start = starts[current]!;
    const size = sizes[current]!;
    // Without a size, the symbol reaches the next one, which lies above addr if there is one.
    const inside = size > 0 ? addr < start + size : highest > addr || addr === start;
    found[j] = inside ? current : -1;
  }
  return found;
}

/** Index of the last of the ascending starts[lo..hi] that is <= addr, or -1 (binary search). */
function lastAtOrBelow(starts: ArrayLike<number>, addr: number, lo: number, hi: number): number {
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! <= addr) {
      at = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return at;
}

/** lookupSymbols in a listed table: a binary search per address, from the previous answer on. */
function lookupListed(table: SymbolTable, addresses: Float64Array, found: Int32Array): Int32Array {
  const { starts, sizes, count } = table;
  let from = 0;
  for (let j = 0; j < addresses.length; j++) {
    const addr = addresses[j]!;
    // at or after `from`: addresses ascend
    const at = lastAtOrBelow(starts, addr, from, count - 1);
    if (at < 0) continue;
    from = at;
    if (addr < starts[at]! + sizes[at]!) found[j] = at;
  }
  return found;
}

/**
 * For each of `buckets` ranges of `width` from addresses[0] on, the index of the first address at
 * or above the range's start. (A function of its own, so the optimizing compiler's on-stack
 * replacement of this loop does not leave the main loop of lookupSymbols compiled without feedback.)
 */
function bucketStarts(addresses: Float64Array, buckets: number, width: number): Int32Array {
  const firstAbove = new Int32Array(buckets + 1);
  const m = addresses.length;
  const first = addresses[0]!;
  for (let b = 0, j = 0; b <= buckets; b++) {
    const at = first + b * width;
    while (j < m && addresses[j]! < at) j++;
    firstAbove[b] = j;
  }
  return firstAbove;
}

/** The table as `nm -n` lists it: one symbol per address (see `preferred`), ascending, with its end. */
export interface SortedSymbols {
  starts: Float64Array;
  ends: Float64Array;
  /** Index in the table of each listed symbol. */
  symbols: Int32Array;
}

/** The sorted listing of a table (a full sort: for listings and checks; lookups use lookupSymbols). */
export function sortedSymbols(table: SymbolTable): SortedSymbols {
  const { starts: rawStart, sizes: rawSize, count: n } = table;
  const order = sortOrder(rawStart, n);
  const starts = new Float64Array(n);
  const ends = new Float64Array(n);
  const symbols = new Int32Array(n);
  let kept = 0;
  let k = 0;
  while (k < n) {
    let best = order[k]!;
    const start = rawStart[best]!;
    let next = k + 1;
    for (; next < n && rawStart[order[next]!] === start; next++) {
      if (preferred(table, order[next]!, best)) best = order[next]!;
    }
    const size = rawSize[best]!;
    starts[kept] = start;
    ends[kept] = size > 0 ? start + size : next < n ? rawStart[order[next]!]! : start + 1;
    symbols[kept] = best;
    kept++;
    k = next;
  }
  return {
    starts: starts.subarray(0, kept),
    ends: ends.subarray(0, kept),
    symbols: symbols.subarray(0, kept),
  };
}

/**
 * Indices 0..n-1 in ascending order of `values` (stable). Where value and index fit together in a
 * double's 53 bits (addresses of every executable and library seen so far), one native sort of
 * value·2^k + index does it without calling a comparator a million times.
 */
export function sortOrder(values: Float64Array, n: number): Uint32Array {
  const order = new Uint32Array(n);
  let sorted = true;
  let max = 0;
  let wholeNonNegative = true;
  for (let i = 0; i < n; i++) {
    const value = values[i]!;
    if (value < max) sorted = false;
    else max = value;
    if (!(value >= 0 && value === Math.floor(value))) wholeNonNegative = false;
  }
  if (sorted) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order;
  }
  const scale = 2 ** Math.ceil(Math.log2(n + 1));
  if (!wholeNonNegative || max * scale + scale > Number.MAX_SAFE_INTEGER) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order.sort((a, b) => values[a]! - values[b]! || a - b);
  }
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = values[i]! * scale + i;
  keys.sort();
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    order[i] = key - Math.floor(key / scale) * scale;
  }
  return order;
}

/** The (mangled) name of symbol `index`, without a symbol version suffix. */
export function symbolName(table: SymbolTable, index: number): string {
  const file = table.nameFile;
  if (file) return file.loaded.get(index) ?? loadSymbolNames(table, [index]).get(index) ?? '';
  return table.text
    .toString('utf8', table.nameStarts[index]!, nameEnd(table, index))
    .replace(VERSION_SUFFIX, '');
}

/** Longest name read from a file (C++ names of templates run to a few KB). */
const MAX_NAME_BYTES = 64 * 1024;

/**
 * Reads the names of `indices` from a table's `nameFile` (a no-op for names in memory): one
 * positioned read per name, a few hundred of them for a log, instead of reading the whole string
 * table (7.5 MB for node). A name that cannot be read (file gone, offset outside the table) is ''.
 */
export function loadSymbolNames(table: SymbolTable, indices: ArrayLike<number>): Map<number, string> {
  const file = table.nameFile;
  if (!file) return new Map();
  const loaded = file.loaded;
  let fd = -1;
  try {
    fd = openSync(file.path, 'r');
  } catch {
    // every name below stays ''
  }
  try {
    let buffer = Buffer.allocUnsafe(512);
    for (let k = 0; k < indices.length; k++) {
      const index = indices[k]!;
      if (index < 0 || loaded.has(index)) continue;
      const at = table.nameStarts[index]!;
      let name = '';
      for (let want = 512; fd >= 0 && at >= 0 && at < file.size; want *= 4) {
        const length = Math.min(want, file.size - at, MAX_NAME_BYTES);
        if (buffer.length < length) buffer = Buffer.allocUnsafe(length);
        const read = readSync(fd, buffer, 0, length, file.offset + at);
        const end = buffer.indexOf(0);
        if (end >= 0 && end < read) {
          name = buffer.toString('utf8', 0, end);
          break;
        }
        if (read < length || length >= MAX_NAME_BYTES || length === file.size - at) break;
      }
      loaded.set(index, name.replace(VERSION_SUFFIX, ''));
    }
  } catch {
    // a read error leaves the remaining names unread (symbolName tries each once more)
  } finally {
    if (fd >= 0) closeSync(fd);
  }
  return loaded;
}

/** Index (in the table) of the listed symbol containing file address `addr`, or -1. */
export function findSymbol(sorted: SortedSymbols, addr: number): number {
  const { starts, ends } = sorted;
  const found = lastAtOrBelow(starts, addr, 0, starts.length - 1);
  return found >= 0 && addr < ends[found]! ? sorted.symbols[found]! : -1;
}
