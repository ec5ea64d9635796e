import {
  loadSymbolNames,
  lookupSymbols,
  SymbolCache,
  type SymbolTable,
  type SymbolToolOptions,
  symbolName,
} from './binary-symbols.js';
import { type CodeDescription, describeCode } from './code-description.js';
import { DynamicCodeMap } from './code-map.js';
import { demangle } from './demangle.js';
import { readDemangled, writeDemangled } from './demangle-cache.js';
import { type Library, LibraryMap, type PendingFrame, type Region } from './library-map.js';
import { describeSkipped, type LogCounts, newLogCounts } from './log-counts.js';
import {
  fieldEquals,
  findByte,
  parseHexField,
  parseIntField,
  splitFields,
  stringField,
} from './log-fields.js';
import {
  CODE_CREATION,
  CODE_DELETE,
  CODE_MOVE,
  CODE_RANGE,
  CODE_SOURCE_INFO,
  IGNORED_KINDS,
  NEW,
  SCRIPT_SOURCE,
  SFI_MOVE,
  SHARED_LIBRARY,
  TICK,
  V8_VERSION,
} from './log-kinds.js';
import { type LineSink, LineSplitter } from './log-lines.js';
import type { Profile, ProfileMeta } from './model.js';
import { ProfileBuilder } from './profile-builder.js';
import { RemappedBuiltins } from './remapped-builtins.js';
import { FRAME_LIMIT, StackTrie } from './stack-trie.js';
import { sortOrder } from './symbol-table.js';

export interface TickLogOptions extends SymbolToolOptions {
  /** Resolve C++ frames with nm/objdump (default true). */
  resolveSymbols?: boolean;
  /** Share symbol tables between calls (e.g. base and head logs of the same node binary). */
  symbolCache?: SymbolCache;
  /** Longer lines are skipped with a warning (default 64 MiB). */
  maxLineBytes?: number;
  /** Bound on the call tree's size; beyond it samples keep only their top frame (default 2,000,000). */
  maxStackNodes?: number;
  /** The C++ demangler, fed the sampled symbols' names on stdin (default `c++filt`). */
  demangler?: string;
}

const MAX_FIELDS = 6 + 256 + 8;
const MAX_CODE_SIZE = 16 * 1024 * 1024;
const MAX_UNKNOWN_KINDS = 64;
const VM_STATE_GC = 1;
const PENDING_BASE = FRAME_LIMIT / 2;
/** `resolve`'s answer for a bytecode handler at its logged address (left out of stacks). */
const HANDLER = -2;
/** Addresses of one library looked up together once its symbols are read (the rest at the end). */
const LOOKUP_BATCH = 8192;
/** Bound on the addresses whose frame is remembered between two code events (see `remember`). */
const MAX_REMEMBERED = 1 << 16;

/** Reads V8 `--prof` log lines into a Profile: the state machine behind `parseTickLog`. */
export class TickLogReader implements LineSink {
  private readonly splitter: LineSplitter;
  private readonly builder = new ProfileBuilder();
  private readonly code = new DynamicCodeMap();
  private readonly libraries: LibraryMap;
  private readonly trie: StackTrie;
  /** One description per distinct code-creation (type, name, tier), shared by the code entries. */
  private readonly descriptions = new Map<string, CodeDescription>();
  /** Sampled library addresses whose symbol is looked up later, in batches: frame id PENDING_BASE + index. */
  private readonly pending: PendingFrame[] = [];
  private readonly starts = new Int32Array(MAX_FIELDS);
  private readonly ends = new Int32Array(MAX_FIELDS);
  private readonly scratch = new Int32Array(MAX_FIELDS + 2);
  private readonly counts: LogCounts = newLogCounts();
  private readonly blob = new RemappedBuiltins();
  private readonly mangled = new Map<number, string>();
  /**
   * `resolve`'s answers since the last event that changed the code or library maps: samples
   * mostly repeat the same few hundred return addresses, and a map lookup is cheaper than the
   * search through code pages and libraries.
   */
  private readonly remembered = new Map<number, number>();
  private readonly demangler: string;
  private readonly toolTimeoutMs: number;
  private readonly symbolCacheDir: string | undefined;
  private unknownFn = -1;
  private overflowFn = -1;
  private v8Version: string | undefined;

  constructor(options: TickLogOptions = {}) {
    this.splitter = new LineSplitter(this, options.maxLineBytes ?? 64 * 1024 * 1024);
    this.libraries = new LibraryMap(
      options.resolveSymbols ?? true,
      options.symbolCache ?? new SymbolCache(),
      options,
    );
    this.trie = new StackTrie(options.maxStackNodes ?? 2_000_000);
    this.demangler = options.demangler ?? 'c++filt';
    this.toolTimeoutMs = options.toolTimeoutMs ?? 60_000;
    this.symbolCacheDir = options.symbolCacheDir;
  }

  push(chunk: Buffer): void {
    this.splitter.push(chunk);
  }

  oversized(bytes: number): void {
    this.counts.lines++;
    this.counts.oversizedLines++;
    if (this.counts.firstBadLines.length < 5)
      this.counts.firstBadLines.push(`line ${this.counts.lines}: ${bytes} bytes, over the line limit`);
  }

  line(buf: Buffer, start: number, end: number): void {
    this.counts.lines++;
    if (end > start && buf[end - 1] === 13) end--; // CRLF
    if (end <= start) return;
    const comma = findByte.call(buf, 44, start);
    const kindEnd = comma === -1 || comma > end ? end : comma;
    // By the kind's length first: one comparison of bytes for the common kinds.
    switch (kindEnd - start) {
      case 4:
        if (fieldEquals(buf, start, kindEnd, TICK)) {
          this.tick(buf, start, end);
          return;
        }
        break;
      case 13:
        if (buf[start] === 99 && fieldEquals(buf, start, kindEnd, CODE_CREATION)) {
          this.codeCreation(buf, start, end);
          return;
        }
        if (fieldEquals(buf, start, kindEnd, SCRIPT_SOURCE)) return;
        break;
      case 16:
        if (fieldEquals(buf, start, kindEnd, CODE_SOURCE_INFO)) return;
        break;
    }
    if (fieldEquals(buf, start, kindEnd, CODE_MOVE)) this.codeMove(buf, start, end);
    else if (fieldEquals(buf, start, kindEnd, CODE_DELETE)) this.codeDelete(buf, start, end);
    else if (fieldEquals(buf, start, kindEnd, SHARED_LIBRARY)) this.sharedLibrary(buf, start, end);
    else if (fieldEquals(buf, start, kindEnd, SFI_MOVE)) return;
    else if (fieldEquals(buf, start, kindEnd, V8_VERSION)) this.version(buf, start, end);
    else if (fieldEquals(buf, start, kindEnd, NEW)) this.memoryChunk(buf, start, end);
    else {
      const kind = buf.toString('latin1', start, Math.min(kindEnd, start + 64));
      if (IGNORED_KINDS.has(kind)) return;
      const key =
        this.counts.unknownKinds.has(kind) || this.counts.unknownKinds.size < MAX_UNKNOWN_KINDS
          ? kind
          : '(other)';
      this.counts.unknownKinds.set(key, (this.counts.unknownKinds.get(key) ?? 0) + 1);
    }
  }

  private bad(buf: Buffer, start: number, end: number, why: string): void {
    this.counts.badLines++;
    if (this.counts.firstBadLines.length < 5) {
      const text = buf.toString('utf8', start, Math.min(end, start + 80)).replace(/[^\x20-\x7e]/g, '?');
      this.counts.firstBadLines.push(
        `line ${this.counts.lines} (${why}): ${text}${end - start > 80 ? '…' : ''}`,
      );
    }
  }

  // Fields of the line last split into `starts` and `ends`, for the less common lines. Callers
  // check the number of fields first; a field past the end of those arrays would read as missing.

  /** Field i as an integer (see parseIntField); NaN when missing. */
  private intField(buf: Buffer, i: number): number {
    const start = this.starts[i];
    const end = this.ends[i];
    return start === undefined || end === undefined ? Number.NaN : parseIntField(buf, start, end);
  }

  /** At most the first `max` bytes of field i as latin1 text; '' when missing. */
  private latin1Field(buf: Buffer, i: number, max: number): string {
    const start = this.starts[i];
    const end = this.ends[i];
    return start === undefined || end === undefined
      ? ''
      : buf.toString('latin1', start, Math.min(end, start + max));
  }

  /** Field i unquoted and unescaped (see stringField), at most its first `max` bytes; '' when missing. */
  private unescapedField(buf: Buffer, i: number, max: number): string {
    const start = this.starts[i];
    const end = this.ends[i];
    return start === undefined || end === undefined
      ? ''
      : stringField(buf, start, Math.min(end, start + max));
  }

  /** Whether field i is `word`; false when missing. */
  private fieldIs(buf: Buffer, i: number, word: Buffer): boolean {
    const start = this.starts[i];
    const end = this.ends[i];
    return start !== undefined && end !== undefined && fieldEquals(buf, start, end, word);
  }

  private tick(buf: Buffer, start: number, end: number): void {
    const { starts, ends, scratch } = this;
    const n = splitFields(buf, start, end, starts, ends);
    if (n < 6) {
      this.bad(buf, start, end, 'tick with fewer than 6 fields');
      return;
    }
    // The two most common lines read their fields inline: a field past the arrays (there is
    // none, n was checked) would read as an empty one at the line's end, NaN.
    const pc = parseIntField(buf, starts[1] ?? end, ends[1] ?? end);
    const external = parseIntField(buf, starts[3] ?? end, ends[3] ?? end);
    let tos = parseIntField(buf, starts[4] ?? end, ends[4] ?? end);
    const vmState = parseIntField(buf, starts[5] ?? end, ends[5] ?? end);
    if (Number.isNaN(pc) || Number.isNaN(vmState)) {
      this.bad(buf, start, end, 'tick with a bad number');
      return;
    }
    this.counts.ticks++;
    if (vmState === VM_STATE_GC) this.counts.gcTicks++;
    let depth = 0;
    /** The bytecode handler the pc is in, left out as V8's tick processor does. */
    let handler: CodeDescription | undefined;
    if (external !== 0 && !Number.isNaN(external) && !Number.isNaN(tos) && tos !== 0) {
      // In an external (C++ API) callback V8 logs the callback's address. V8's tick processor
      // replaces the pc by it; we keep the real pc as the sampled frame (e.g. SHA-512 inside the
      // PBKDF2 callback) with the callback as its caller, unless both are the same function.
      const callback = this.resolve(tos);
      const leaf = this.resolve(pc);
      if (leaf >= 0 && leaf !== callback) scratch[depth++] = leaf;
      if (callback >= 0) scratch[depth++] = callback;
      if (depth === 0) {
        this.counts.unaccounted++;
        scratch[depth++] = this.unknownFunction();
      }
    } else {
      if (tos !== 0 && !Number.isNaN(tos)) {
        // Top of stack inside a JS function: a frameless call; keep that function as the caller.
        if (this.code.find(tos)?.desc.kind !== 'js') tos = 0;
      } else tos = 0;
      const top = this.remembered.get(pc) ?? this.remember(pc);
      if (top === HANDLER) handler = this.code.find(pc)?.desc;
      else if (top < 0) {
        this.counts.unaccounted++;
        scratch[depth++] = this.unknownFunction();
      } else scratch[depth++] = top;
      if (tos !== 0) {
        const frame = this.resolve(tos);
        if (frame >= 0) scratch[depth++] = frame;
      }
    }
    let previous = pc;
    for (let i = 6; i < n; i++) {
      const s = starts[i];
      const e = ends[i];
      if (s === undefined || e === undefined || e <= s) continue; // (n <= starts.length)
      const first = buf[s];
      let addr: number;
      if (first === 43 || first === 45) {
        // '+' / '-': an offset from the previous relative frame, as V8's log reader reads it.
        const offset = parseHexField(buf, s, e);
        if (Number.isNaN(offset)) {
          this.counts.badFrames++;
          continue;
        }
        previous += offset;
        addr = previous;
      } else if (first === 111) {
        this.counts.droppedFrames++; // "overflow"
        continue;
      } else {
        addr = parseHexField(buf, s, e);
        if (Number.isNaN(addr)) {
          this.counts.badFrames++;
          continue;
        }
      }
      const frame = this.remembered.get(addr) ?? this.remember(addr);
      if (frame >= 0) scratch[depth++] = frame;
    }
    // Only a handler on an otherwise empty stack stays, so that every tick has a sampled frame.
    if (depth === 0 && handler) scratch[depth++] = this.functionOfCode(handler);
    this.trie.add(scratch, depth);
  }

  /**
   * `resolve(addr)` for an address not in `remembered`, kept there until the code or library
   * maps change (see `forget`). Callers look in `remembered` first.
   */
  private remember(addr: number): number {
    const frame = this.resolve(addr);
    if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
    this.remembered.set(addr, frame);
    return frame;
  }

  /** Forgets remembered frames: the code or library maps have changed. */
  private forget(): void {
    if (this.remembered.size > 0) this.remembered.clear();
  }

  /**
   * Frame id of the code at `addr`: a function id, a pending library address, -1 (nothing), or
   * HANDLER for a bytecode handler logged outside the binary. V8's tick processor leaves those
   * out of every stack (its default, without --separate-bytecodes), so a sample in the
   * interpreter counts for the interpreted function below it. Node 24 logs the handlers where
   * they run, in the code range. Node 20 and 22 log them at the binary's addresses, and there
   * (sampled in the binary or in the remapped copy) they stay frames: `--prof-process` resolves
   * such addresses to the binary or not at all, never to the interpreted function, and JS self
   * ticks are meant to equal its.
   */
  private resolve(addr: number): number {
    const entry = this.code.find(addr);
    if (entry) return entry.desc.bytecodeHandler ? HANDLER : this.functionOfCode(entry.desc);
    const frame = this.resolveLibrary(addr);
    if (frame >= 0 || !this.blob.mayContain(addr)) return frame;
    const original = this.blob.toOriginal(addr);
    if (original < 0) return -1;
    const copied = this.code.find(original);
    return copied ? this.functionOfCode(copied.desc) : this.resolveLibrary(original);
  }

  private resolveLibrary(addr: number): number {
    const region = this.libraries.find(addr);
    if (!region) return -1;
    const library = region.library;
    if (!library.resolvable) return this.libraryFunction(region);
    const known = library.frames.get(addr);
    if (known !== undefined) return known;
    if (this.pending.length >= PENDING_BASE) return this.libraryFunction(region);
    this.libraries.request(library);
    // Looked up in a batch (see lookupSymbols): once enough have gathered, or at the end.
    const frame = PENDING_BASE + this.pending.length;
    const pending: PendingFrame = { addr, region, fn: -1 };
    this.pending.push(pending);
    library.frames.set(addr, frame);
    library.waiting.push(pending);
    if (library.symbols && library.waiting.length >= LOOKUP_BATCH) this.lookUpWaiting(library);
    return frame;
  }

  /**
   * Looks up the symbols of a library's waiting addresses in one pass over its table. Called once
   * its symbols are read (at a batch, or after `settled()` at the end); a library whose symbols
   * never came has its addresses counted under its name.
   */
  private lookUpWaiting(library: Library): void {
    const waiting = library.waiting;
    library.waiting = [];
    const symbols = library.symbols;
    if (!symbols) {
      for (const pending of waiting) this.settle(library, pending, this.libraryFunction(pending.region));
      return;
    }
    const { table, fns } = symbols;
    const fileAddrs = Float64Array.from(waiting, (p) => LibraryMap.fileAddress(table, p.region, p.addr));
    const byAddress: PendingFrame[] = [];
    const sorted: number[] = [];
    for (const k of sortOrder(fileAddrs, waiting.length)) {
      const pending = waiting[k];
      const fileAddr = fileAddrs[k];
      if (pending === undefined || fileAddr === undefined) continue; // (the order is of their indices)
      byAddress.push(pending);
      sorted.push(fileAddr);
    }
    const found = lookupSymbols(table, Float64Array.from(sorted));
    // Names not in memory (a table from the cache directory) are read in one go.
    if (table.nameFile) {
      const unnamed: number[] = [];
      for (const symbol of found) if (symbol >= 0 && (fns[symbol] ?? -1) < 0) unnamed.push(symbol);
      loadSymbolNames(table, unnamed);
    }
    for (const [k, pending] of byAddress.entries()) {
      const symbol = found[k] ?? -1;
      let fn: number;
      if (symbol < 0) fn = this.libraryFunction(pending.region);
      else {
        fn = fns[symbol] ?? -1; // -1: the symbol has no function yet
        if (fn < 0) fn = fns[symbol] = this.cppFunction(library, table, symbol);
      }
      this.settle(library, pending, fn);
    }
  }

  /** A pending address has its function: later samples there find it in the library's frames. */
  private settle(library: Library, pending: PendingFrame, fn: number): void {
    pending.fn = fn;
    library.frames.set(pending.addr, fn);
  }

  private functionOfCode(d: CodeDescription): number {
    if (d.fn < 0) {
      d.fn = this.intern(d.name, d.file, d.kind, d.line, d.column);
      if (d.tier && d.fn !== this.overflowFn) this.builder.addTier(d.fn, d.tier);
    }
    return d.fn;
  }

  /** Function id of a C++ symbol; its (mangled) name is demangled in one batch at the end. */
  private cppFunction(library: Library, table: SymbolTable, symbol: number): number {
    const name = symbolName(table, symbol);
    const fn = this.intern(name, library.path, 'cpp');
    if (name.startsWith('_Z') && !this.mangled.has(fn)) this.mangled.set(fn, name);
    return fn;
  }

  private libraryFunction(region: Region): number {
    const library = region.library;
    if (library.libraryFn < 0) library.libraryFn = this.intern(library.path, library.path, 'shared');
    return library.libraryFn;
  }

  private unknownFunction(): number {
    if (this.unknownFn < 0) this.unknownFn = this.intern('(unknown)', '', 'unknown');
    return this.unknownFn;
  }

  private intern(name: string, file: string, kind: CodeDescription['kind'], line = 0, column = 0): number {
    const id = this.builder.internFunction({ name, file, line, column, kind });
    if (id < PENDING_BASE) return id;
    if (this.overflowFn < 0)
      this.overflowFn = this.builder.internFunction({
        name: '(other functions)',
        file: '',
        line: 0,
        column: 0,
        kind: 'meta',
      });
    return this.overflowFn;
  }

  private codeCreation(buf: Buffer, start: number, end: number): void {
    const { starts, ends } = this;
    const n = splitFields(buf, start, end, starts, ends);
    if (n < 6) {
      this.bad(buf, start, end, 'code-creation with fewer than 6 fields');
      return;
    }
    // Fields inline, as in `tick`: one past the arrays would read as empty, at the line's end.
    // Since V8 ~7 a timestamp sits before the address; older logs have the address third.
    const third = starts[3] ?? end;
    const hasTimestamp = !((ends[3] ?? end) - third > 2 && buf[third] === 48 && buf[third + 1] === 120);
    const at = hasTimestamp ? 4 : 3;
    if (n < at + 3) {
      this.bad(buf, start, end, 'code-creation with too few fields');
      return;
    }
    const addr = parseIntField(buf, starts[at] ?? end, ends[at] ?? end);
    const size = parseIntField(buf, starts[at + 1] ?? end, ends[at + 1] ?? end);
    if (Number.isNaN(addr) || Number.isNaN(size) || size < 0 || addr < 0) {
      this.bad(buf, start, end, 'code-creation with a bad address or size');
      return;
    }
    if (size > MAX_CODE_SIZE) {
      this.counts.hugeCode++;
      this.bad(buf, start, end, `code-creation of ${size} bytes`);
      return;
    }
    const typeStart = starts[1] ?? end;
    const type = buf.toString('latin1', typeStart, Math.min(ends[1] ?? end, typeStart + 64));
    const hasFunction = n > at + 3 && (ends[at + 3] ?? end) > (starts[at + 3] ?? end);
    const stateStart = starts[at + 4] ?? end;
    const state =
      hasFunction && n > at + 4
        ? buf.toString('latin1', stateStart, Math.min(ends[at + 4] ?? end, stateStart + 4))
        : '';
    const rawName = stringField(buf, starts[at + 2] ?? end, ends[at + 2] ?? end);
    const builtin = type === 'Builtin' || type === 'BytecodeHandler';
    const inBinary = builtin && this.libraries.find(addr) !== undefined;
    // A bytecode handler outside the binary (Node 24 logs them where they run, in the code range)
    // is left out of stacks, as V8's tick processor does; inside the binary (Node 20 and 22) that
    // processor resolves its address to the binary, so the handler stays a frame (see `resolve`).
    const skipped = type === 'BytecodeHandler' && !inBinary;
    const key = `${type}\u0000${rawName}\u0000${hasFunction ? state : '-'}${skipped ? '\u0000skip' : ''}`;
    let desc = this.descriptions.get(key);
    if (desc === undefined) {
      desc = describeCode(type, rawName, hasFunction, state);
      if (skipped) desc.bytecodeHandler = true;
      this.descriptions.set(key, desc);
    }
    this.code.add(addr, size, desc);
    if (inBinary) this.blob.addBuiltin(addr, size);
    this.forget();
  }

  private memoryChunk(buf: Buffer, start: number, end: number): void {
    const n = splitFields(buf, start, end, this.starts, this.ends);
    if (n < 4 || !this.fieldIs(buf, 1, CODE_RANGE)) return;
    const addr = this.intField(buf, 2);
    const size = this.intField(buf, 3);
    if (!Number.isNaN(addr) && addr > 0) this.blob.setCodeRange(addr, Number.isNaN(size) ? 0 : size);
    this.forget();
  }

  private codeMove(buf: Buffer, start: number, end: number): void {
    const n = splitFields(buf, start, end, this.starts, this.ends);
    if (n < 3) {
      this.bad(buf, start, end, 'code-move with fewer than 3 fields');
      return;
    }
    const from = this.intField(buf, 1);
    const to = this.intField(buf, 2);
    if (Number.isNaN(from) || Number.isNaN(to) || to < 0) {
      this.bad(buf, start, end, 'code-move with a bad address');
      return;
    }
    if (!this.code.move(from, to)) this.counts.unknownMoves++;
    this.forget();
  }

  private codeDelete(buf: Buffer, start: number, end: number): void {
    const n = splitFields(buf, start, end, this.starts, this.ends);
    if (n < 2) {
      this.bad(buf, start, end, 'code-delete without an address');
      return;
    }
    const addr = this.intField(buf, 1);
    if (Number.isNaN(addr)) {
      this.bad(buf, start, end, 'code-delete with a bad address');
      return;
    }
    if (!this.code.delete(addr)) this.counts.unknownDeletes++;
    this.forget();
  }

  private sharedLibrary(buf: Buffer, start: number, end: number): void {
    const n = splitFields(buf, start, end, this.starts, this.ends);
    if (n < 4) {
      this.bad(buf, start, end, 'shared-library with fewer than 4 fields');
      return;
    }
    const path = this.unescapedField(buf, 1, 4096);
    const from = this.intField(buf, 2);
    const to = this.intField(buf, 3);
    const slide = n > 4 ? this.intField(buf, 4) : 0;
    if (Number.isNaN(from) || Number.isNaN(to) || to <= from || from < 0) {
      this.bad(buf, start, end, 'shared-library with a bad address range');
      return;
    }
    this.libraries.add(path, from, to, Number.isNaN(slide) ? 0 : slide);
    this.forget();
  }

  private version(buf: Buffer, start: number, end: number): void {
    const n = splitFields(buf, start, end, this.starts, this.ends);
    const parts: string[] = [];
    for (let i = 1; i < Math.min(n, 6); i++) parts.push(this.latin1Field(buf, i, 32));
    const [major, minor, build, patch, candidate] = parts;
    this.v8Version = `${major ?? '?'}.${minor ?? '?'}.${build ?? '?'}.${patch ?? '?'}${candidate && candidate !== '0' ? candidate : ''}`;
  }

  /** Ends the input, waits for symbol tables, and builds the Profile. */
  async finish(): Promise<Profile> {
    const warnings: string[] = [];
    const incomplete = this.splitter.end();
    if (incomplete > 0) {
      warnings.push(
        `the log ends in an incomplete line of ${incomplete} bytes (the process was stopped while writing?); skipped`,
      );
    }
    await this.libraries.settled();
    for (const w of this.libraries.warnings()) warnings.push(w);
    for (const library of this.libraries.all()) if (library.waiting.length > 0) this.lookUpWaiting(library);
    const pending = this.pending;
    // Every pending address is looked up by now; one that were not would count as unknown code.
    if (pending.length > 0) {
      this.trie.remapFrames((frame) => {
        if (frame < PENDING_BASE) return frame;
        const fn = pending[frame - PENDING_BASE]?.fn ?? -1;
        return fn >= 0 ? fn : this.unknownFunction();
      });
    }
    await this.demangleCppNames(warnings);
    const builder = this.builder;
    this.trie.forEachStack((frames, length, count) => builder.addStack(frames, length, count));
    warnings.push(...describeSkipped(this.counts, this.libraries.droppedRegions, this.trie.truncated));
    const meta: ProfileMeta = {
      gcTicks: this.counts.gcTicks,
      unaccountedTicks: this.counts.unaccounted,
      lines: this.counts.lines,
      badLines: this.counts.badLines + this.counts.oversizedLines,
    };
    if (this.v8Version) meta.v8Version = this.v8Version;
    if (this.counts.unknownKinds.size > 0) meta.unknownLines = Object.fromEntries(this.counts.unknownKinds);
    const profile = builder.build('tick-log', warnings, meta);
    if (profile.totalTicks !== this.counts.ticks) {
      warnings.push(`internal: ${this.counts.ticks} ticks read but ${profile.totalTicks} in stacks`);
    }
    return profile;
  }

  /**
   * Replaces mangled C++ names (`_ZN4node6crypto...`) by readable ones, merging functions that
   * become equal. With a symbol cache directory and the default demangler, names demangled by an
   * earlier run come from there and c++filt only sees new ones (or does not run at all).
   */
  private async demangleCppNames(warnings: string[]): Promise<void> {
    if (this.mangled.size === 0) return;
    const dir = this.demangler === 'c++filt' ? this.symbolCacheDir : undefined;
    const known = dir ? await readDemangled(dir) : new Map<string, string>();
    const missing = [...this.mangled.values()].filter((name) => !known.has(name));
    const result = await demangle(missing, this.demangler, this.toolTimeoutMs);
    // demangle answers one name per name asked (on failure the names themselves, and an error)
    const fresh = new Map(missing.map((name, i): [string, string] => [name, result.names[i] ?? name]));
    if (result.error) warnings.push(result.error);
    else if (dir && missing.length > 0) await writeDemangled(dir, known, fresh);
    const remap = new Map<number, number>();
    for (const [id, name] of this.mangled) {
      const readable = known.get(name) ?? fresh.get(name) ?? name;
      const old = this.builder.fieldsOf(id);
      if (!old || readable === old.name) continue;
      remap.set(id, this.builder.internFunction({ ...old, name: readable }));
    }
    if (remap.size > 0) this.trie.remapFrames((frame) => remap.get(frame) ?? frame);
  }
}
