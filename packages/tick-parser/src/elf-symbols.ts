import { open } from 'node:fs/promises';

/** Code symbols of an ELF file as read from its section headers and symbol table, unsorted. */
export interface ElfSymbols {
  /** 'exec': ET_EXEC (fixed addresses); 'dyn': ET_DYN (PIE executable or shared library). */
  elfType: 'exec' | 'dyn';
  /** `.text`'s file offset minus its address (what `objdump -h` prints as File off − VMA); 0 without `.text`. */
  textOffsetMinusVma: number;
  /** The table the symbols came from: `.symtab`, or `.dynsym` in a stripped file. */
  source: '.symtab' | '.dynsym';
  count: number;
  starts: Float64Array;
  sizes: Float64Array;
  /** Symbol i's name starts at names[nameStarts[i]] and ends at a NUL; nameEnds is all 0 (found on use). */
  names: Buffer;
  nameStarts: Int32Array;
  nameEnds: Int32Array;
  /** Where `names` (the string table) lies in the file: for reading names later without it. */
  namesOffset: number;
  /** The GNU build id (hex), '' when the file has none. */
  buildId: string;
}

/** What the headers of an ELF file say, without its symbol tables (see readElfHeaders). */
export interface ElfHeaders {
  elfType: 'exec' | 'dyn';
  textOffsetMinusVma: number;
  buildId: string;
  /** The string table of `.symtab` and of `.dynsym` (file offset and size), when present. */
  stringTables: Partial<Record<'.symtab' | '.dynsym', { offset: number; size: number }>>;
}

const SHT_SYMTAB = 2;
const SHT_NOTE = 7;
const SHT_DYNSYM = 11;
const NT_GNU_BUILD_ID = 3;
/** Larger notes are not build ids. */
const MAX_NOTE_BYTES = 1024;
const SHF_EXECINSTR = 0x4;
const SHN_LORESERVE = 0xff00;
const STT_SECTION = 3;
const STT_FILE = 4;
const STT_TLS = 6;
/** Refuse symbol or string tables above this (node's are 2.6 and 7.5 MB): a corrupt header, not a binary. */
const MAX_TABLE_BYTES = 1 << 30;

class ElfError extends Error {}

interface Section {
  type: number;
  flags: number;
  addr: number;
  offset: number;
  size: number;
  link: number;
  entsize: number;
}

/** Positioned reads of one open file, checked against its size. */
type ReadAt = (offset: number, length: number, what: string) => Promise<Buffer>;

/** The parsed headers of an open ELF file: its type, sections and how to read its fields. */
interface Layout {
  elfType: 'exec' | 'dyn';
  textOffsetMinusVma: number;
  buildId: string;
  is64: boolean;
  le: boolean;
  sections: Section[];
}

/** Opens `path` and runs `use` with checked positioned reads; ElfErrors and I/O errors become text. */
async function withElfFile<T>(
  path: string,
  use: (read: ReadAt, fileSize: number) => Promise<T>,
): Promise<T | { error: string }> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, 'r');
    const fileSize = (await handle.stat()).size;
    const fh = handle;
    const read: ReadAt = async (offset, length, what) => {
      if (!Number.isSafeInteger(offset) || offset < 0 || length < 0 || offset + length > fileSize) {
        throw new ElfError(
          `${what} (offset ${offset}, ${length} bytes) lies outside the ${fileSize}-byte file`,
        );
      }
      if (length > MAX_TABLE_BYTES) throw new ElfError(`${what} claims ${length} bytes`);
      const buffer = Buffer.allocUnsafe(length);
      const { bytesRead } = await fh.read(buffer, 0, length, offset);
      if (bytesRead !== length) throw new ElfError(`${what} is cut short`);
      return buffer;
    };
    return await use(read, fileSize);
  } catch (error) {
    if (error instanceof ElfError) return { error: error.message };
    return { error: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  } finally {
    await handle?.close();
  }
}

/**
 * The headers of an ELF file (type, `.text` offset, build id, where the symbol tables' strings
 * are), from a few small reads: what decides whether a cached symbol listing still fits the file.
 */
export async function readElfHeaders(path: string): Promise<ElfHeaders | { error: string }> {
  return withElfFile(path, async (read, fileSize) => {
    const layout = await readLayout(read, fileSize);
    const stringTables: ElfHeaders['stringTables'] = {};
    for (const [kind, source] of SYMBOL_TABLES) {
      const symtab = layout.sections.find((s) => s.type === kind);
      const strtab = symtab && layout.sections[symtab.link];
      if (strtab) stringTables[source] = { offset: strtab.offset, size: strtab.size };
    }
    const { elfType, textOffsetMinusVma, buildId } = layout;
    return { elfType, textOffsetMinusVma, buildId, stringTables };
  });
}

const SYMBOL_TABLES = [
  [SHT_SYMTAB, '.symtab'],
  [SHT_DYNSYM, '.dynsym'],
] as const;

/**
 * Reads the code symbols of an ELF file the way `nm -n --defined-only` lists them as t/T/w/W/i:
 * defined symbols (not section or file symbols) in an executable section, with their sizes,
 * from `.symtab`, or from `.dynsym` when the file is stripped. Only the headers and those two
 * tables are read, with positioned reads. Every offset, size and count is checked against the
 * file, so a malformed file gives an error text, never a throw, a hang or a huge allocation.
 */
export async function readElfSymbols(path: string): Promise<ElfSymbols | { error: string }> {
  return withElfFile(path, async (read, fileSize) => {
    const { elfType, textOffsetMinusVma, buildId, is64, le, sections } = await readLayout(read, fileSize);
    let symbols: ElfSymbols | undefined;
    for (const [kind, source] of SYMBOL_TABLES) {
      const symtab = sections.find((s) => s.type === kind);
      if (symtab === undefined) continue;
      const strtab = sections[symtab.link];
      if (strtab === undefined) throw new ElfError(`${source} links to missing section ${symtab.link}`);
      const entsize = symtab.entsize === 0 ? (is64 ? 24 : 16) : symtab.entsize;
      if (entsize < (is64 ? 24 : 16)) throw new ElfError(`${source} entry size ${entsize} is too small`);
      if (entsize % 4 !== 0) throw new ElfError(`${source} entry size ${entsize} is not a multiple of 4`);
      const data = await read(symtab.offset, symtab.size, source);
      const strings = await read(strtab.offset, strtab.size, `${source}'s string table`);
      const found = collect(data, strings, entsize, is64, le, sections);
      symbols = { elfType, textOffsetMinusVma, source, ...found, namesOffset: strtab.offset, buildId };
      if (found.count > 0) break;
    }
    return (
      symbols ?? {
        elfType,
        textOffsetMinusVma,
        source: '.dynsym',
        count: 0,
        starts: new Float64Array(0),
        sizes: new Float64Array(0),
        names: Buffer.alloc(0),
        nameStarts: new Int32Array(0),
        nameEnds: new Int32Array(0),
        namesOffset: 0,
        buildId,
      }
    );
  });
}

/** Reads the ELF header, the section headers and the section names; finds `.text` and the build id. */
async function readLayout(read: ReadAt, fileSize: number): Promise<Layout> {
  const ident = await read(0, Math.min(64, fileSize), 'the ELF header');
  if (ident.length < 4 || ident.readUInt32BE(0) !== 0x7f454c46) throw new ElfError('not an ELF file');
  if (ident.length < 52) throw new ElfError('too short for an ELF header');
  const is64 = ident[4] === 2;
  if (ident[4] !== 1 && ident[4] !== 2) throw new ElfError(`unknown ELF class ${ident[4]}`);
  if (ident[5] !== 1 && ident[5] !== 2) throw new ElfError(`unknown ELF data encoding ${ident[5]}`);
  const le = ident[5] === 1;
  if (is64 && ident.length < 64) throw new ElfError('too short for a 64-bit ELF header');
  const u16 = (b: Buffer, o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (b: Buffer, o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const u64 = (b: Buffer, o: number) =>
    le
      ? b.readUInt32LE(o) + b.readUInt32LE(o + 4) * 2 ** 32
      : b.readUInt32BE(o) * 2 ** 32 + b.readUInt32BE(o + 4);
  const word = is64 ? u64 : u32;

  const type = u16(ident, 16);
  if (type !== 2 && type !== 3)
    throw new ElfError(`ELF type ${type} is neither an executable nor a shared object`);
  const shoff = word(ident, is64 ? 0x28 : 0x20);
  const shentsize = u16(ident, is64 ? 0x3a : 0x2e);
  let shnum = u16(ident, is64 ? 0x3c : 0x30);
  let shstrndx = u16(ident, is64 ? 0x3e : 0x32);
  const minEntry = is64 ? 64 : 40;
  if (shoff === 0) throw new ElfError('no section headers');
  if (shentsize < minEntry) throw new ElfError(`section header size ${shentsize} is below ${minEntry}`);

  const parse = (b: Buffer, o: number): Section =>
    is64
      ? {
          type: u32(b, o + 4),
          flags: u64(b, o + 8),
          addr: u64(b, o + 16),
          offset: u64(b, o + 24),
          size: u64(b, o + 32),
          link: u32(b, o + 40),
          entsize: u64(b, o + 56),
        }
      : {
          type: u32(b, o + 4),
          flags: u32(b, o + 8),
          addr: u32(b, o + 12),
          offset: u32(b, o + 16),
          size: u32(b, o + 20),
          link: u32(b, o + 24),
          entsize: u32(b, o + 36),
        };
  if (shnum === 0 || shstrndx === 0xffff) {
    // Extended numbering: the real values are in section 0.
    const first = parse(await read(shoff, shentsize, 'section header 0'), 0);
    if (shnum === 0) shnum = first.size;
    if (shstrndx === 0xffff) shstrndx = first.link;
  }
  if (shnum > Math.floor((fileSize - shoff) / shentsize)) {
    throw new ElfError(`${shnum} section headers do not fit in the file`);
  }
  const table = await read(shoff, shnum * shentsize, 'the section header table');
  const sections: Section[] = [];
  for (let i = 0; i < shnum; i++) sections.push(parse(table, i * shentsize));

  let textOffsetMinusVma = 0;
  const names = sections[shstrndx];
  if (names !== undefined && names.size > 0) {
    const strings = await read(names.offset, names.size, 'the section name table');
    const nameOffset = (i: number) => u32(table, i * shentsize);
    for (const [i, section] of sections.entries()) {
      const at = nameOffset(i);
      if (at < strings.length && strings.toString('latin1', at, strings.indexOf(0, at)) === '.text') {
        textOffsetMinusVma = section.offset - section.addr;
        break;
      }
    }
  }
  let buildId = '';
  for (const note of sections) {
    if (note.type !== SHT_NOTE || note.size < 16 || note.size > MAX_NOTE_BYTES) continue;
    if (note.offset + note.size > fileSize) continue; // a bad note costs only the build id
    const bytes = await read(note.offset, note.size, 'a note section');
    buildId = findBuildId(bytes, u32);
    if (buildId) break;
  }
  const elfType = type === 2 ? 'exec' : 'dyn';
  return { elfType, textOffsetMinusVma, buildId, is64, le, sections };
}

/** The GNU build id in a note section's bytes (hex), or ''. */
function findBuildId(bytes: Buffer, u32: (b: Buffer, o: number) => number): string {
  for (let at = 0; at + 12 <= bytes.length; ) {
    const nameSize = u32(bytes, at);
    const descSize = u32(bytes, at + 4);
    const type = u32(bytes, at + 8);
    const desc = at + 12 + Math.ceil(nameSize / 4) * 4;
    const next = desc + Math.ceil(descSize / 4) * 4;
    if (nameSize > bytes.length || descSize > bytes.length || desc + descSize > bytes.length) return '';
    if (type === NT_GNU_BUILD_ID && nameSize === 4 && bytes.toString('latin1', at + 12, at + 15) === 'GNU') {
      return bytes.toString('hex', desc, desc + descSize);
    }
    at = next;
  }
  return '';
}

/**
 * The code symbols of one symbol table (see readElfSymbols), read through 32-bit words: a
 * big-endian table is first turned little-endian field by field. (Typed-array reads keep this
 * loop over 100 000 entries fast from its first iteration, unlike DataView calls.)
 */
function collect(
  table: Buffer,
  strings: Buffer,
  entsize: number,
  is64: boolean,
  le: boolean,
  sections: Section[],
): Pick<ElfSymbols, 'count' | 'starts' | 'sizes' | 'names' | 'nameStarts' | 'nameEnds'> {
  const total = Math.floor(table.length / entsize);
  // Own, aligned bytes when the table must be rewritten or cannot be viewed as 32-bit words.
  const data = !le || table.byteOffset % 4 !== 0 ? Buffer.from(table) : table;
  if (!le) toLittleEndian(data, total, entsize, is64);
  const words = new Uint32Array(data.buffer, data.byteOffset, data.length >>> 2);
  const executable = Uint8Array.from(sections, (section) => (section.flags & SHF_EXECINSTR ? 1 : 0));
  // Elf64_Sym: name, info, other, shndx, value, size; Elf32_Sym: name, value, size, info, other, shndx.
  const infoAt = is64 ? 4 : 12;
  const shndxWord = is64 ? 1 : 3;
  const valueWord = is64 ? 2 : 1;
  const sizeWord = is64 ? 4 : 2;
  const stride = entsize >>> 2;
  const starts = new Float64Array(total);
  const sizes = new Float64Array(total);
  const nameStarts = new Int32Array(total);
  const nameEnds = new Int32Array(total);
  const sectionCount = Math.min(sections.length, SHN_LORESERVE);
  // Every word of the `total` whole entries lies in `words` (entsize was checked by the caller); a
  // word outside would read as 0, which is no section and no name: the entry would be skipped.
  let n = 0;
  for (let e = 0, w = 0; e < total; e++, w += stride) {
    const shndx = (words[w + shndxWord] ?? 0) >>> 16;
    if (shndx === 0 || shndx >= sectionCount || executable[shndx] === 0) continue;
    const kind = (data[w * 4 + infoAt] ?? 0) & 0xf;
    if (kind === STT_SECTION || kind === STT_FILE || kind === STT_TLS) continue;
    const name = words[w] ?? 0;
    if (name === 0 || name >= strings.length || strings[name] === 0) continue;
    if (strings[name] === 36 && isMappingSymbol(strings, name)) continue;
    // 64-bit fields as numbers: exact below 2^53, which addresses and sizes are.
    starts[n] = (words[w + valueWord] ?? 0) + (is64 ? (words[w + valueWord + 1] ?? 0) * 2 ** 32 : 0);
    sizes[n] = (words[w + sizeWord] ?? 0) + (is64 ? (words[w + sizeWord + 1] ?? 0) * 2 ** 32 : 0);
    nameStarts[n] = name;
    n++;
  }
  return {
    count: n,
    starts: starts.subarray(0, n),
    sizes: sizes.subarray(0, n),
    names: strings,
    nameStarts: nameStarts.subarray(0, n),
    nameEnds: nameEnds.subarray(0, n),
  };
}

/** Reverses the bytes of every multi-byte field of big-endian symbol entries, in place. */
function toLittleEndian(data: Buffer, total: number, entsize: number, is64: boolean): void {
  // [offset, bytes] of the name, shndx, value and size fields.
  const fields: [number, number][] = is64
    ? [
        [0, 4],
        [6, 2],
        [8, 8],
        [16, 8],
      ]
    : [
        [0, 4],
        [4, 4],
        [8, 4],
        [14, 2],
      ];
  for (let e = 0; e < total; e++) {
    for (const [at, bytes] of fields) data.subarray(e * entsize + at, e * entsize + at + bytes).reverse();
  }
}

/** ARM and AArch64 mapping symbols (`$a`, `$d`, `$t`, `$x`, optionally `.suffix`), which nm hides. */
function isMappingSymbol(strings: Buffer, start: number): boolean {
  const c = strings[start + 1];
  const after = strings[start + 2];
  return (
    (c === 97 || c === 100 || c === 116 || c === 120) && (after === 0 || after === 46 || after === undefined)
  );
}
