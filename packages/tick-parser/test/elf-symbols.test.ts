import { copyFileSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  findSymbol,
  lookupSymbols,
  readSymbolTable,
  type SymbolTable,
  sortedSymbols,
  symbolName,
} from '../src/binary-symbols.js';
import { readElfSymbols } from '../src/elf-symbols.js';
import { defined } from './helpers/defined.js';
import { prng } from './helpers/prng.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-elf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const nodeBinary = realpathSync(process.execPath);
/** The C library this process has mapped: a real position-independent shared object. */
const libc = realpathSync(
  defined(
    readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .map((line) => line.slice(line.indexOf('/')))
      .find((path) => /\/libc[.-][^/]*\.so/.test(path) || /\/libc\.so\.\d+$/.test(path)),
    'a libc in /proc/self/maps',
  ),
);

/**
 * Names of the symbols at `addrs`, looked up in one batch with lookupSymbols; each answer is also
 * checked against a binary search in the sorted listing (mismatches are pushed to `wrong`).
 */
function namesAt(table: SymbolTable, addrs: number[], wrong: string[]): (string | undefined)[] {
  const byAddress = [...addrs.entries()].sort(([, a], [, b]) => a - b);
  const found = lookupSymbols(
    table,
    Float64Array.from(byAddress, ([, addr]) => addr),
  );
  const sorted = sortedSymbols(table);
  const names: (string | undefined)[] = [];
  byAddress.forEach(([k, addr], j) => {
    const expected = findSymbol(sorted, addr);
    const symbol = found[j] ?? -1;
    if (symbol !== expected) wrong.push(`${addr.toString(16)}: batch ${symbol} sorted ${expected}`);
    names[k] = symbol < 0 ? undefined : symbolName(table, symbol);
  });
  return names;
}

/**
 * nm's table against the ELF reader's: 2000 sampled code symbols of nm's (with a size) resolve
 * to the same name at their first and last byte, and so do 2000 addresses inside them.
 */
function compareTables(elf: SymbolTable, nm: SymbolTable): void {
  const rand = prng(20261123);
  const listing = sortedSymbols(nm);
  const sized: { start: number; end: number }[] = [];
  listing.starts.forEach((start, i) => {
    const end = defined(listing.ends[i], 'an end');
    if (end - start > 1) sized.push({ start, end });
  });
  expect(sized.length).toBeGreaterThan(100);
  const addrs: number[] = [];
  for (let k = 0; k < 2000; k++) {
    const { start, end } = defined(sized[Math.floor(rand() * sized.length)], 'a sized symbol');
    addrs.push(start, end - 1, start + Math.floor(rand() * (end - start)));
  }
  const wrong: string[] = [];
  const want = namesAt(nm, addrs, wrong);
  const got = namesAt(elf, addrs, wrong);
  const mismatches = addrs
    .map((addr, k) => (want[k] === got[k] ? '' : `${addr.toString(16)}: nm ${want[k]} elf ${got[k]}`))
    .filter(Boolean);
  expect(wrong.slice(0, 5)).toEqual([]);
  expect(mismatches.slice(0, 5)).toEqual([]);
}

describe('the ELF symbol reader', () => {
  it('reads the node executable as nm does (same symbols, same addresses, same text offset)', async () => {
    const elf = await readSymbolTable(nodeBinary);
    const nm = await readSymbolTable(nodeBinary, { nm: 'nm' });
    expect(elf.source).toBe('elf');
    expect(nm.source).toBe('nm');
    expect(elf.warnings).toEqual([]);
    expect(elf.elfType).toBe(nm.elfType);
    expect(elf.textOffsetMinusVma).toBe(nm.textOffsetMinusVma);
    // nm also lists weak symbols outside code sections (e.g. `data_start`); the reader keeps code only.
    expect(Math.abs(elf.count - nm.count)).toBeLessThan(nm.count / 1000);
    expect(elf.count).toBeGreaterThan(10_000);
    compareTables(elf, nm);

    // A known C++ symbol: the PBKDF2 job's mangled name, at the same start and with the same size.
    const find = (table: SymbolTable) => {
      for (let i = 0; i < table.count; i++) {
        const name = symbolName(table, i);
        if (name.includes('PBKDF2Traits') && name.startsWith('_ZN4node6crypto'))
          return [name, table.starts[i], table.sizes[i]];
      }
      return undefined;
    };
    const known = find(nm);
    expect(known).toBeDefined();
    expect(find(elf)).toEqual(known);
  });

  it('reads a PIE shared library (libc) with its .text offset as objdump -h gives it', async () => {
    const elf = await readSymbolTable(libc);
    const tools = await readSymbolTable(libc, { nm: 'nm', objdump: 'objdump' });
    expect(elf.elfType).toBe('dyn');
    expect(elf.warnings).toEqual([]);
    expect(elf.textOffsetMinusVma).toBe(tools.textOffsetMinusVma);
    expect(sortedSymbols(elf).starts.length).toBe(sortedSymbols(tools).starts.length);
    compareTables(elf, tools);
  });

  it('turns malformed files into an error text, and readSymbolTable into warnings, never a throw', async () => {
    const original = readFileSync(libc);
    const cases: [string, Buffer, RegExp][] = [
      ['truncated', original.subarray(0, 4096), /outside the \d+-byte file|do not fit/],
      ['magic only', Buffer.from('\x7fELF'), /too short/],
      ['not elf', Buffer.from('#!/bin/sh\necho hello, this is not a binary at all\n'), /not an ELF file/],
    ];
    // Section header table pointed past the end of the file.
    const farHeaders = Buffer.from(original);
    farHeaders.writeUInt32LE(0xfffffff0, 0x28);
    farHeaders.writeUInt32LE(0x7fff, 0x2c);
    cases.push(['section headers beyond the file', farHeaders, /outside|do not fit/]);
    // A huge section count.
    const manySections = Buffer.from(original);
    manySections.writeUInt16LE(0xfffe, 0x3c);
    cases.push(['65534 sections', manySections, /do not fit|outside/]);
    // Every section claims an enormous size (symbol tables included).
    const hugeSizes = Buffer.from(original);
    const shoff = hugeSizes.readUInt32LE(0x28);
    const shnum = hugeSizes.readUInt16LE(0x3c);
    for (let i = 0; i < shnum; i++) hugeSizes.writeUInt32LE(0xffffff00, shoff + i * 64 + 36);
    cases.push(['enormous sections', hugeSizes, /outside|claims/]);
    for (const [label, bytes, pattern] of cases) {
      const file = join(dir, label.replaceAll(' ', '-'));
      writeFileSync(file, bytes);
      const result = await readElfSymbols(file);
      expect('error' in result ? result.error : 'parsed', label).toMatch(pattern);
      const table = await readSymbolTable(file, {});
      expect(table.count, label).toBe(0);
      expect(table.warnings.length, label).toBeGreaterThan(0);
    }
  });

  it('gives the same answer for a copy of the executable (no dependence on the path)', async () => {
    const copy = join(dir, 'node-copy');
    copyFileSync(nodeBinary, copy);
    const a = await readSymbolTable(nodeBinary);
    const b = await readSymbolTable(copy);
    expect(b.starts).toEqual(a.starts);
    expect(b.sizes).toEqual(a.sizes);
  });
});
