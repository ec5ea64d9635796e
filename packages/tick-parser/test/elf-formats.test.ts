import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSymbolTable, type SymbolTable, sortedSymbols, symbolName } from '../src/binary-symbols.js';
import { readElfSymbols } from '../src/elf-symbols.js';
import { defined } from './helpers/defined.js';
import { bigEndianCopy, type ElfKind, linkElf } from './helpers/elf-files.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-elf-formats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The table as nm -n lists it: [name, start, end] per address. */
const listed = (table: SymbolTable): [name: string, start: number, end: number][] => {
  const sorted = sortedSymbols(table);
  return Array.from(sorted.symbols, (symbol, i) => [
    symbolName(table, symbol),
    defined(sorted.starts[i], 'a start'),
    defined(sorted.ends[i], 'an end'),
  ]);
};

/** The binary of `kind`, little-endian as linked or as a big-endian copy; `strip` first if asked. */
function binary(kind: ElfKind, endian: 'little' | 'big', stripped = false): string {
  let file = linkElf(dir, kind);
  if (stripped) {
    execFileSync('strip', ['--strip-all', '-o', `${file}-stripped`, file]);
    file = `${file}-stripped`;
  }
  if (endian === 'big') {
    writeFileSync(`${file}-be`, bigEndianCopy(readFileSync(file)));
    file = `${file}-be`;
  }
  return file;
}

const kinds: (ElfKind & { endian: 'little' | 'big' })[] = [];
for (const bits of [32, 64] as const)
  for (const type of ['exec', 'dyn'] as const)
    for (const endian of ['little', 'big'] as const) kinds.push({ bits, type, endian });

describe('the ELF reader on 32- and 64-bit, little- and big-endian files', () => {
  it.each(kinds)('$bits-bit $type, $endian-endian: the same table as nm and objdump', async (kind) => {
    const file = binary(kind, kind.endian);
    const raw = await readElfSymbols(file);
    expect('error' in raw ? raw.error : raw.source).toBe('.symtab');
    const elf = await readSymbolTable(file);
    const tools = await readSymbolTable(file, { nm: 'nm', objdump: 'objdump' });
    expect(elf.source).toBe('elf');
    expect(tools.source).toBe('nm');
    expect(elf.warnings).toEqual([]);
    expect(tools.warnings).toEqual([]);
    expect(elf.elfType).toBe(kind.type);
    expect(tools.elfType).toBe(kind.type);
    expect(elf.textOffsetMinusVma).toBe(tools.textOffsetMinusVma);
    // The shared object's .text is linked at 0x10000, away from its file offset.
    if (kind.type === 'dyn') expect(elf.textOffsetMinusVma).toBeLessThan(0);
    else expect(elf.textOffsetMinusVma).toBe(0);

    const table = listed(elf);
    expect(table).toEqual(listed(tools));
    // Code only (no data_value); `alias` and `use` share an address and size: the first name
    // wins; `label` has no size and reaches the next symbol.
    expect(table.map((entry) => entry[0])).toEqual(['add', 'hidden', 'maybe', 'label', 'alias']);
    const at = (name: string) =>
      defined(
        table.find((entry) => entry[0] === name),
        name,
      );
    const [add, hidden, label, alias] = [at('add'), at('hidden'), at('label'), at('alias')];
    expect(add[2] - add[1]).toBe(3);
    expect(hidden[1]).toBe(add[2]);
    expect(label[2]).toBe(alias[1]);
    expect(alias[2] - alias[1]).toBe(4);
  });

  it.each([
    { bits: 32, type: 'dyn', endian: 'little' },
    { bits: 64, type: 'dyn', endian: 'big' },
  ] as const)('$bits-bit $endian-endian stripped shared object: .dynsym, as nm -D lists it', async (kind) => {
    const file = binary(kind, kind.endian, true);
    const raw = await readElfSymbols(file);
    expect('error' in raw ? raw.error : raw.source).toBe('.dynsym');
    const elf = await readSymbolTable(file);
    const tools = await readSymbolTable(file, { nm: 'nm', objdump: 'objdump' });
    expect(elf.warnings).toEqual([]);
    expect(elf.textOffsetMinusVma).toBe(tools.textOffsetMinusVma);
    expect(listed(elf)).toEqual(listed(tools));
    // Only exported functions are dynamic symbols.
    expect(listed(elf).map((entry) => entry[0])).toEqual(['add', 'maybe', 'alias']);
  });
});
