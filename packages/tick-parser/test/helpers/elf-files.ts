import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Assembly for small binaries: global, local and weak functions with sizes, a label without a
 * type or size, an alias at the same address as `use`, and a data object (not code).
 */
const SOURCE = `
	.text
	.globl	add
	.type	add, @function
add:	nop
	nop
	ret
	.size	add, .-add
	.type	hidden, @function
hidden:	nop
	ret
	.size	hidden, .-hidden
	.weak	maybe
	.type	maybe, @function
maybe:	nop
	ret
	.size	maybe, .-maybe
label:	nop
	.globl	use
	.type	use, @function
use:	nop
	nop
	nop
	ret
	.size	use, .-use
	.globl	alias
	.type	alias, @function
	.set	alias, use
	.data
	.globl	data_value
	.type	data_value, @object
data_value:
	.long	5
	.size	data_value, 4
`;

export type ElfKind = { bits: 32 | 64; type: 'exec' | 'dyn' };

/**
 * Assembles and links SOURCE with GNU as and ld (i386 or x86-64) into an executable (ET_EXEC)
 * or a shared object (ET_DYN, its .text placed away from its file offset) and returns its path.
 */
export function linkElf(dir: string, { bits, type }: ElfKind): string {
  const base = join(dir, `f${bits}-${type}`);
  writeFileSync(`${base}.s`, SOURCE);
  execFileSync('as', [bits === 32 ? '--32' : '--64', '-o', `${base}.o`, `${base}.s`]);
  const emulation = bits === 32 ? 'elf_i386' : 'elf_x86_64';
  const kind = type === 'exec' ? ['-e', 'use'] : ['-shared', '--section-start=.text=0x10000', '-z', 'notext'];
  execFileSync('ld', ['-m', emulation, '--build-id=none', ...kind, '-o', base, `${base}.o`]);
  return base;
}

/**
 * A big-endian copy of a little-endian ELF file: every field that nm and the reader look at
 * (ELF header, program headers, section headers, symbol table entries) byte-swapped, EI_DATA
 * set to ELFDATA2MSB. Other section contents (code, hash tables) stay as they were.
 */
export function bigEndianCopy(file: Buffer): Buffer {
  const b = Buffer.from(file);
  if (b[5] !== 1) throw new Error('bigEndianCopy expects a little-endian ELF file');
  const is64 = b[4] === 2;
  const swap = (offset: number, width: number) => {
    b.subarray(offset, offset + width).reverse();
  };
  const w = is64 ? 8 : 4;
  // Read with the little-endian layout before swapping.
  const word = (o: number) => (is64 ? Number(b.readBigUInt64LE(o)) : b.readUInt32LE(o));
  const phoff = word(is64 ? 32 : 28);
  const shoff = word(is64 ? 40 : 32);
  const phentsize = b.readUInt16LE(is64 ? 54 : 42);
  const phnum = b.readUInt16LE(is64 ? 56 : 44);
  const shentsize = b.readUInt16LE(is64 ? 58 : 46);
  const shnum = b.readUInt16LE(is64 ? 60 : 48);

  const sections: { type: number; offset: number; size: number; entsize: number }[] = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    sections.push(
      is64
        ? {
            type: b.readUInt32LE(o + 4),
            offset: word(o + 24),
            size: word(o + 32),
            entsize: word(o + 56),
          }
        : {
            type: b.readUInt32LE(o + 4),
            offset: b.readUInt32LE(o + 16),
            size: b.readUInt32LE(o + 20),
            entsize: b.readUInt32LE(o + 36),
          },
    );
  }

  b[5] = 2;
  // e_type, e_machine, e_version, e_entry, e_phoff, e_shoff, e_flags, then six 16-bit fields.
  swap(16, 2);
  swap(18, 2);
  swap(20, 4);
  let o = 24;
  for (let k = 0; k < 3; k++, o += w) swap(o, w);
  swap(o, 4);
  o += 4;
  for (let k = 0; k < 6; k++, o += 2) swap(o, 2);

  for (let i = 0; i < phnum; i++) {
    const p = phoff + i * phentsize;
    // 64: type, flags (4 each), then six 8-byte fields; 32: eight 4-byte fields.
    const widths = is64 ? [4, 4, 8, 8, 8, 8, 8, 8] : [4, 4, 4, 4, 4, 4, 4, 4];
    let at = p;
    for (const width of widths) {
      swap(at, width);
      at += width;
    }
  }
  // 64: name, type (4), flags, addr, offset, size (8), link, info (4), addralign, entsize (8).
  const sectionWidths = is64 ? [4, 4, 8, 8, 8, 8, 4, 4, 8, 8] : [4, 4, 4, 4, 4, 4, 4, 4, 4, 4];
  for (let i = 0; i < shnum; i++) {
    let at = shoff + i * shentsize;
    for (const width of sectionWidths) {
      swap(at, width);
      at += width;
    }
  }
  // Symbols. 64: name (4), info, other (1), shndx (2), value, size (8); 32: name, value, size (4), info, other, shndx (2).
  const symbolWidths = is64 ? [4, 1, 1, 2, 8, 8] : [4, 4, 4, 1, 1, 2];
  for (const section of sections) {
    if (section.type !== 2 && section.type !== 11) continue;
    for (let s = section.offset; s + section.entsize <= section.offset + section.size; s += section.entsize) {
      let at = s;
      for (const width of symbolWidths) {
        swap(at, width);
        at += width;
      }
    }
  }
  return b;
}
