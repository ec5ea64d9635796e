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

/** The value of byte `c` as a hexadecimal digit, -1 for any other byte or none (past the end). */
function hexValue(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Code symbol types of nm: text (t/T), weak (w/W), indirect functions (i). */
function isCodeType(c: number | undefined): boolean {
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
  // a symbol index outside the table (none is) would compare as -Infinity: never preferred
  const startA = starts[a] ?? Number.NEGATIVE_INFINITY;
  const startB = starts[b] ?? Number.NEGATIVE_INFINITY;
  if (startA !== startB) return startA > startB;
  const sizeA = sizes[a] ?? Number.NEGATIVE_INFINITY;
  const sizeB = sizes[b] ?? Number.NEGATIVE_INFINITY;
  if (sizeA !== sizeB) return sizeA > sizeB;
  return table.source === 'elf' ? nameBefore(table, a, b) : a < b;
}

/** Whether symbol a's name sorts before symbol b's, byte by byte. */
function nameBefore(table: SymbolTable, a: number, b: number): boolean {
  const text = table.text;
  return (
    text.compare(text, nameStart(table, b), nameEnd(table, b), nameStart(table, a), nameEnd(table, a)) < 0
  );
}

/** Where symbol `index`'s name starts in the text (the text's end for an index outside the table). */
function nameStart(table: SymbolTable, index: number): number {
  return table.nameStarts[index] ?? table.text.length;
}

/** Where symbol `index`'s name ends in the text (in an ELF string table: found on first use). */
function nameEnd(table: SymbolTable, index: number): number {
  let end = table.nameEnds[index] ?? table.text.length;
  if (end === 0) {
    end = table.text.indexOf(0, nameStart(table, index));
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
  const first = addresses[0];
  const last = addresses[m - 1];
  if (first === undefined || last === undefined) return found;
  if (table.listed) return lookupListed(table, addresses, found);
  const { starts, sizes, count } = table;
  // Where a symbol falls among the addresses: buckets of equal width over [first, last] each know
  // the first address at or above their start, which leaves a binary search over a few addresses.
  const buckets = Math.min(4 * m, 1 << 20);
  const width = Math.floor((last - first) / buckets) + 1;
  const firstAbove = bucketStarts(addresses, first, buckets, width);
  // best[j]: among the symbols starting in (addresses[j - 1], addresses[j]], the preferred one
  // (see `preferred`). Aliases of equal size are set aside and compared by name afterwards: a
  // rarely taken call in this loop costs more than the loop.
  const best = found;
  const ties: [slot: number, symbol: number][] = [];
  const byName = table.source === 'elf';
  let highest = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < count; i++) {
    const start = starts[i];
    if (start === undefined) break; // the arrays have `count` entries
    if (start > highest) highest = start;
    if (start > last) continue;
    let lo = 0;
    let hi = 0;
    if (start > first) {
      // b < buckets since start <= last; beyond the buckets no address is at or above: m
      const b = Math.floor((start - first) / width);
      lo = firstAbove[b] ?? m;
      hi = firstAbove[b + 1] ?? m;
    }
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const addr = addresses[mid];
      if (addr !== undefined && addr < start) lo = mid + 1;
      else hi = mid;
    }
    const other = best[lo] ?? -1;
    const otherStart = other < 0 ? undefined : starts[other];
    if (otherStart === undefined || start > otherStart) best[lo] = i;
    else if (start === otherStart) {
      // aliases: the larger wins (sizes are 0 when unknown)
      const size = sizes[i] ?? 0;
      const otherSize = sizes[other] ?? 0;
      if (size > otherSize) best[lo] = i;
      else if (byName && size === otherSize) ties.push([lo, i]);
    }
  }
  // Ties still standing (same address and size as the final choice), in table order.
  for (const [lo, i] of ties) {
    const other = best[lo] ?? -1;
    if (starts[i] === starts[other] && sizes[i] === sizes[other] && nameBefore(table, i, other)) best[lo] = i;
  }
  // Symbol of addresses[j]: the last best at or before j (the starts of best[] ascend with j).
  let current = -1;
  for (let j = 0; j < m; j++) {
    const chosen = best[j] ?? -1;
    if (chosen >= 0) current = chosen;
    if (current < 0) continue;
    const addr = addresses[j];
    const start = starts[current];
    const size = sizes[current];
    if (addr === undefined || start === undefined || size === undefined) continue;
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
    const start = starts[mid];
    if (start !== undefined && start <= addr) {
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
  addresses.forEach((addr, j) => {
    // at or after `from`: addresses ascend
    const at = lastAtOrBelow(starts, addr, from, count - 1);
    if (at < 0) return;
    from = at;
    const start = starts[at];
    const size = sizes[at];
    if (start !== undefined && size !== undefined && addr < start + size) found[j] = at;
  });
  return found;
}

/**
 * For each of `buckets` ranges of `width` from `first` (= addresses[0]) on, the index of the first
 * address at or above the range's start. (A function of its own, so the optimizing compiler's
 * on-stack replacement of this loop does not leave the main loop of lookupSymbols compiled without
 * feedback.)
 */
function bucketStarts(addresses: Float64Array, first: number, buckets: number, width: number): Int32Array {
  const firstAbove = new Int32Array(buckets + 1);
  let j = 0;
  let next = addresses[0];
  for (let b = 0; b <= buckets; b++) {
    const at = first + b * width;
    while (next !== undefined && next < at) next = addresses[++j];
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
  const starts = new Float64Array(n);
  const ends = new Float64Array(n);
  const symbols = new Int32Array(n);
  let kept = 0;
  // The symbols at one address (aliases) follow each other in `order`: the address of the group
  // being read and its preferred symbol (-1 before the first), listed once the next address comes.
  let best = -1;
  let start = 0;
  const list = (next: number): void => {
    const size = rawSize[best] ?? 0; // 0: unknown, the symbol reaches the next one
    starts[kept] = start;
    ends[kept] = size > 0 ? start + size : next;
    symbols[kept] = best;
    kept++;
  };
  for (const symbol of sortOrder(rawStart, n)) {
    const at = rawStart[symbol];
    if (at === undefined) continue; // (every index in the order is one of the table's)
    if (best >= 0 && at === start) {
      if (preferred(table, symbol, best)) best = symbol;
      continue;
    }
    if (best >= 0) list(at);
    best = symbol;
    start = at;
  }
  if (best >= 0) list(start + 1);
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
  const head = values.subarray(0, n);
  let sorted = true;
  let max = 0;
  let wholeNonNegative = true;
  for (const value of head) {
    if (value < max) sorted = false;
    else max = value;
    if (!(value >= 0 && value === Math.floor(value))) wholeNonNegative = false;
  }
  if (sorted) return Uint32Array.from(head.keys());
  const scale = 2 ** Math.ceil(Math.log2(n + 1));
  if (!wholeNonNegative || max * scale + scale > Number.MAX_SAFE_INTEGER) {
    const pairs = Array.from(head, (value, i): [value: number, index: number] => [value, i]);
    pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    return Uint32Array.from(pairs, ([, index]) => index);
  }
  const keys = head.map((value, i) => value * scale + i);
  keys.sort();
  return Uint32Array.from(keys, (key) => key - Math.floor(key / scale) * scale);
}

/** The (mangled) name of symbol `index`, without a symbol version suffix. */
export function symbolName(table: SymbolTable, index: number): string {
  const file = table.nameFile;
  if (file) return file.loaded.get(index) ?? loadSymbolNames(table, [index]).get(index) ?? '';
  return table.text
    .toString('utf8', nameStart(table, index), nameEnd(table, index))
    .replace(VERSION_SUFFIX, '');
}

/** Longest name read from a file (C++ names of templates run to a few KB). */
const MAX_NAME_BYTES = 64 * 1024;

/**
 * Reads the names of `indices` from a table's `nameFile` (a no-op for names in memory): one
 * positioned read per name, a few hundred of them for a log, instead of reading the whole string
 * table (7.5 MB for node). A name that cannot be read (file gone, offset outside the table) is ''.
 */
export function loadSymbolNames(table: SymbolTable, indices: Iterable<number>): Map<number, string> {
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
    for (const index of indices) {
      if (index < 0 || loaded.has(index)) continue;
      const at = table.nameStarts[index] ?? -1; // outside the table: unreadable, ''
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
  const end = ends[found];
  const symbol = sorted.symbols[found];
  return end !== undefined && symbol !== undefined && addr < end ? symbol : -1;
}
