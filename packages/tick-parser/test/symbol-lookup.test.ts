import { describe, expect, it } from 'vitest';
import { findSymbol, lookupSymbols, type SymbolTable, sortedSymbols } from '../src/binary-symbols.js';
import { prng } from './helpers/prng.js';

interface Sym {
  start: number;
  size: number;
  name: string;
}

/** A table as either reader builds it: ELF (names end at a NUL, found on use) or nm (name bounds known). */
function table(symbols: Sym[], source: 'elf' | 'nm'): SymbolTable {
  const names = symbols.map((s) => s.name);
  const text = Buffer.from(source === 'elf' ? `\0${names.join('\0')}\0` : `${names.join('\n')}\n`);
  const nameStarts = new Int32Array(symbols.length);
  const nameEnds = new Int32Array(symbols.length);
  let at = source === 'elf' ? 1 : 0;
  symbols.forEach((s, i) => {
    nameStarts[i] = at;
    nameEnds[i] = source === 'elf' ? 0 : at + s.name.length;
    at += s.name.length + 1;
  });
  return {
    path: '/synthetic',
    elfType: 'exec',
    textOffsetMinusVma: 0,
    source,
    count: symbols.length,
    starts: Float64Array.from(symbols, (s) => s.start),
    sizes: Float64Array.from(symbols, (s) => s.size),
    text,
    nameStarts,
    nameEnds,
    warnings: [],
  };
}

/**
 * The rule spelled out, one address at a time: the symbols at the highest start at or below the
 * address; of those the largest, then the first by name (ELF) or in the input order (nm); it
 * contains the address up to start + size, or without a size up to the next higher start.
 */
function bruteForce(symbols: Sym[], source: 'elf' | 'nm', addr: number): number {
  let chosen = -1;
  let c: Sym | undefined;
  for (const [i, s] of symbols.entries()) {
    if (s.start > addr) continue;
    const better =
      c === undefined ||
      s.start > c.start ||
      (s.start === c.start &&
        (s.size > c.size ||
          (s.size === c.size &&
            source === 'elf' &&
            Buffer.compare(Buffer.from(s.name), Buffer.from(c.name)) < 0)));
    if (better) {
      chosen = i;
      c = s;
    }
  }
  if (c === undefined) return -1;
  const start = c.start;
  let end = start + 1;
  if (c.size > 0) end = start + c.size;
  else {
    const above = symbols.filter((s) => s.start > start).map((s) => s.start);
    if (above.length > 0) end = Math.min(...above);
  }
  return addr < end ? chosen : -1;
}

function randomSymbols(rand: () => number, count: number): Sym[] {
  const symbols: Sym[] = [];
  for (let i = 0; i < count; i++) {
    // Few distinct starts so aliases are common; sizes from none to overlapping the next ones.
    const start = 0x1000 + Math.floor(rand() * count * 2) * 16;
    const size = rand() < 0.25 ? 0 : Math.floor(rand() * 64);
    const name = `f${Math.floor(rand() * count)}`;
    symbols.push({ start, size, name });
  }
  return symbols;
}

describe('lookupSymbols', () => {
  it('answers as the rule spelled out does, for random tables with aliases and missing sizes', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const rand = prng(seed);
      const symbols = randomSymbols(rand, 1 + Math.floor(rand() * 80));
      const lowest = Math.min(...symbols.map((s) => s.start));
      const highest = Math.max(...symbols.map((s) => s.start + s.size));
      const addrs: number[] = [];
      for (let k = 0; k < 200; k++) addrs.push(lowest - 40 + Math.floor(rand() * (highest - lowest + 120)));
      // Exact starts and ends, and repeats.
      for (const s of symbols.slice(0, 10))
        addrs.push(s.start, s.start + s.size, s.start + s.size - 1, s.start);
      addrs.sort((a, b) => a - b);
      for (const source of ['elf', 'nm'] as const) {
        const t = table(symbols, source);
        const found = Array.from(lookupSymbols(t, Float64Array.from(addrs)));
        const expected = addrs.map((addr) => bruteForce(symbols, source, addr));
        expect(found, `seed ${seed}, ${source}`).toEqual(expected);
        const sorted = sortedSymbols(t);
        expect(
          addrs.map((addr) => findSymbol(sorted, addr)),
          `seed ${seed}, ${source}, sorted`,
        ).toEqual(expected);
      }
    }
  });

  it('names aliases by size, then by name in an ELF table and by line order in nm output', () => {
    const symbols: Sym[] = [
      { start: 0x100, size: 8, name: 'zeta' },
      { start: 0x100, size: 8, name: 'alpha' },
      { start: 0x100, size: 4, name: 'aardvark' },
      { start: 0x200, size: 0, name: 'label' },
      { start: 0x300, size: 0, name: 'last' },
    ];
    const addrs = Float64Array.from([0xff, 0x100, 0x107, 0x108, 0x1ff, 0x200, 0x2ff, 0x300, 0x301]);
    expect(Array.from(lookupSymbols(table(symbols, 'elf'), addrs))).toEqual([-1, 1, 1, -1, -1, 3, 3, 4, -1]);
    expect(Array.from(lookupSymbols(table(symbols, 'nm'), addrs))).toEqual([-1, 0, 0, -1, -1, 3, 3, 4, -1]);
    expect(Array.from(lookupSymbols(table([], 'elf'), addrs))).toEqual(Array(addrs.length).fill(-1));
    expect(lookupSymbols(table(symbols, 'elf'), new Float64Array(0))).toEqual(new Int32Array(0));
  });
});
