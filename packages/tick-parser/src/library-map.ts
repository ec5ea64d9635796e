import { loadSymbols, type SymbolCache, type SymbolTable, type SymbolToolOptions } from './binary-symbols.js';

/** A library's symbol table, once read, and the function id of each of its symbols. */
export interface LibrarySymbols {
  table: SymbolTable;
  /** Function id per symbol index (-1 until first sampled). */
  fns: Int32Array;
}

/** A binary named by `shared-library` events, with its symbols once `nm` has read them. */
export interface Library {
  path: string;
  symbols?: LibrarySymbols;
  /** Function id of "somewhere in this library, no symbol" (-1 until needed). */
  libraryFn: number;
  /** False when symbols will never come (disabled, pseudo file like [vdso], load failed). */
  resolvable: boolean;
  /** True once reading its symbols has started (on the first sample inside it). */
  requested: boolean;
  /** Frame id per sampled process address: a pending id until its symbol is looked up, then a function id. */
  frames: Map<number, number>;
  /** Sampled addresses whose symbol is not looked up yet. */
  waiting: PendingFrame[];
}

/** A sampled library address whose symbol is looked up later, in a batch with others. */
export interface PendingFrame {
  addr: number;
  region: Region;
  /** Its function id once looked up, -1 before. */
  fn: number;
}

/** One executable mapping of a library: [start, end) in the process, and how to get file addresses. */
export interface Region {
  start: number;
  end: number;
  slide: number;
  library: Library;
}

const MAX_REGIONS = 4096;

/** The process's executable mappings from `shared-library` events, and their symbol tables. */
export class LibraryMap {
  private readonly regions: Region[] = [];
  private readonly libraries = new Map<string, Library>();
  private readonly loads: Promise<void>[] = [];
  droppedRegions = 0;

  constructor(
    private readonly resolveSymbols: boolean,
    private readonly cache: SymbolCache,
    private readonly tools: SymbolToolOptions,
  ) {}

  /** Records a mapping; starts reading the library's symbols (in parallel with parsing) on first sight. */
  add(path: string, start: number, end: number, slide: number): void {
    if (this.regions.length >= MAX_REGIONS) {
      this.droppedRegions++;
      return;
    }
    let library = this.libraries.get(path);
    if (!library) {
      const resolvable = this.resolveSymbols && path.startsWith('/');
      library = { path, libraryFn: -1, resolvable, requested: false, frames: new Map(), waiting: [] };
      this.libraries.set(path, library);
    }
    const region: Region = { start, end, slide, library };
    let i = this.regions.length;
    while (i > 0) {
      const before = this.regions[i - 1];
      if (before === undefined || before.start <= start) break;
      i--;
    }
    this.regions.splice(i, 0, region);
  }

  /** The mapping containing `addr` (the last one added wins where they overlap), or undefined. */
  find(addr: number): Region | undefined {
    const regions = this.regions;
    let lo = 0;
    let hi = regions.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const region = regions[mid];
      if (region !== undefined && region.start <= addr) lo = mid + 1;
      else hi = mid - 1;
    }
    for (let i = hi; i >= 0; i--) {
      const region = regions[i];
      if (region === undefined) break;
      if (addr < region.end) return region;
      if (hi - i > 8) break; // overlapping mappings are few; do not scan far
    }
    return undefined;
  }

  /** File address of `addr` inside `region`, for symbol lookup in `table`, its library's symbols. */
  static fileAddress(table: SymbolTable, region: Region, addr: number): number {
    if (table.elfType === 'exec') return addr - region.slide;
    return addr - region.start - region.slide + table.textOffsetMinusVma;
  }

  /**
   * Starts reading a library's symbols (in parallel with parsing). Called on the first sample inside
   * it, so libraries nobody sampled cost nothing.
   */
  request(library: Library): void {
    if (library.requested || !library.resolvable) return;
    library.requested = true;
    this.loads.push(this.load(library));
  }

  /** Resolves once every symbol table asked for is read (or has failed). */
  async settled(): Promise<void> {
    await Promise.all(this.loads);
  }

  /** Every library named so far. */
  all(): IterableIterator<Library> {
    return this.libraries.values();
  }

  /** Warnings of all symbol tables, once each. */
  warnings(): string[] {
    const out = new Set<string>();
    for (const library of this.libraries.values())
      for (const w of library.symbols?.table.warnings ?? []) out.add(w);
    return [...out];
  }

  private async load(library: Library): Promise<void> {
    const table = await loadSymbols(library.path, this.cache, this.tools);
    library.symbols = { table, fns: new Int32Array(table.count).fill(-1) };
    if (table.count === 0) library.resolvable = false;
  }
}
