import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  loadSymbolNames,
  lookupSymbols,
  readSymbolTable,
  type SymbolTable,
  sortedSymbols,
  symbolName,
} from '../src/binary-symbols.js';
import { parseTickLog, SymbolCache } from '../src/index.js';
import { findOnPath } from '../src/record-plan.js';
import { defined } from './helpers/defined.js';
import { prng } from './helpers/prng.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-symcache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A real nm behind a wrapper that counts its runs.
const counter = join(dir, 'nm-runs');
const nm = join(dir, 'nm');
writeFileSync(nm, `#!/bin/sh\necho run >> '${counter}'\nexec nm "$@"\n`);
chmodSync(nm, 0o755);
const runs = () => (existsSync(counter) ? readFileSync(counter, 'utf8').trim().split('\n').length : 0);

// Samples inside the node executable (non-PIE on this machine, PIE elsewhere: both handled).
const log = join(dir, 'node.log');
writeFileSync(
  log,
  [
    `shared-library,${process.execPath},0x400000,0x2600000,0`,
    'tick,0x1000000,1,0,0x0,6',
    'tick,0x1200000,2,0,0x0,6',
    '',
  ].join('\n'),
);

describe('symbol tables', () => {
  it('are read once per binary within a SymbolCache, and once across runs with a cache directory', async () => {
    const cacheDir = join(dir, 'cache');
    const shared = new SymbolCache();
    const first = await parseTickLog(log, { nm, symbolCache: shared, symbolCacheDir: cacheDir });
    expect(runs()).toBe(1);
    await parseTickLog(log, { nm, symbolCache: shared, symbolCacheDir: cacheDir });
    expect(runs()).toBe(1); // same process, same SymbolCache
    const fresh = await parseTickLog(log, { nm, symbolCache: new SymbolCache(), symbolCacheDir: cacheDir });
    expect(runs()).toBe(1); // a new "run": from the directory, nm not started
    expect(fresh.functions.map((f) => [f.name, f.kind, f.self])).toEqual(
      first.functions.map((f) => [f.name, f.kind, f.self]),
    );
    expect(readdirSync(cacheDir).every((f) => f.endsWith('.symbols') || f === 'demangled-v1.txt')).toBe(true);
  });

  it.skipIf(!findOnPath('c++filt', process.env.PATH))(
    'keep demangled names too: a later run with the cache directory starts no c++filt',
    async () => {
      const real = defined(
        findOnPath('c++filt', process.env.PATH),
        'c++filt (the test is skipped without it)',
      );
      const bin = join(dir, 'bin');
      mkdirSync(bin);
      const filtRuns = join(dir, 'c++filt-runs');
      writeFileSync(join(bin, 'c++filt'), `#!/bin/sh\necho run >> '${filtRuns}'\nexec '${real}' "$@"\n`, {
        mode: 0o755,
      });
      const count = () =>
        existsSync(filtRuns) ? readFileSync(filtRuns, 'utf8').trim().split('\n').length : 0;
      const path = process.env.PATH;
      process.env.PATH = `${bin}:${path}`;
      try {
        const cacheDir = join(dir, 'names');
        const first = await parseTickLog(log, { symbolCacheDir: cacheDir });
        const mangledFirst = first.functions.filter((f) => f.name.startsWith('_Z'));
        expect(first.functions.some((f) => f.name.includes('::'))).toBe(true); // demangled
        expect(count()).toBe(1);
        const again = await parseTickLog(log, { symbolCacheDir: cacheDir });
        expect(count()).toBe(1);
        expect(again.functions.map((f) => f.name)).toEqual(first.functions.map((f) => f.name));
        expect(again.functions.filter((f) => f.name.startsWith('_Z'))).toEqual(mangledFirst);
        const uncached = await parseTickLog(log, {});
        expect(count()).toBe(2);
        expect(uncached.functions.map((f) => f.name)).toEqual(first.functions.map((f) => f.name));
      } finally {
        process.env.PATH = path;
      }
    },
  );

  it('ignores a cache directory others can write to, and says so', async () => {
    const open = join(dir, 'world-writable');
    mkdirSync(open, { mode: 0o777 });
    chmodSync(open, 0o777);
    const before = runs();
    const profile = await parseTickLog(log, { nm, symbolCacheDir: open });
    expect(runs()).toBe(before + 1);
    expect(profile.warnings.join('\n')).toMatch(
      /symbol cache .*world-writable is not private to this user; not used/,
    );
    expect(readdirSync(open)).toEqual([]);
  });
});

describe('ELF symbol listings in the cache directory', () => {
  it('are written by the first run and read by later ones (names from the binary), with the same answers', async () => {
    const cacheDir = join(dir, 'elf-cache');
    const binary = join(dir, 'node-copy');
    copyFileSync(process.execPath, binary);
    const info = statSync(binary);
    const key = `${binary}\u0000${info.size}\u0000${info.mtimeMs}`;
    const plain = await readSymbolTable(binary);
    const first = await readSymbolTable(binary, { symbolCacheDir: cacheDir }, key);
    expect(first.listed).toBe(true);
    expect(first.nameFile).toBeUndefined(); // names still in memory
    const files = readdirSync(cacheDir).filter((f) => f.startsWith('elf-') && f.endsWith('.symbols'));
    expect(files).toHaveLength(1);
    expect(statSync(join(cacheDir, defined(files[0], 'a cache file'))).mode & 0o077).toBe(0);
    const again = await readSymbolTable(binary, { symbolCacheDir: cacheDir }, key);
    expect(again.listed).toBe(true);
    expect(again.nameFile).toBeDefined(); // from the cache file
    expect(again.warnings).toEqual([]);
    expect(again.elfType).toBe(plain.elfType);
    expect(again.textOffsetMinusVma).toBe(plain.textOffsetMinusVma);
    // The listing equals sortedSymbols of the plain table, names included.
    const sorted = sortedSymbols(plain);
    expect(Array.from(again.starts)).toEqual(Array.from(sorted.starts));
    expect(Array.from(again.starts, (s, i) => s + defined(again.sizes[i], 'a size'))).toEqual(
      Array.from(sorted.ends),
    );
    const rand = prng(7);
    const picks = Array.from({ length: 300 }, () => Math.floor(rand() * sorted.starts.length));
    loadSymbolNames(again, picks);
    for (const k of picks)
      expect(symbolName(again, k)).toBe(symbolName(plain, defined(sorted.symbols[k], 'a symbol')));
    // Batch lookups answer as in the plain table, inside, at the ends and between symbols.
    const addrs = new Float64Array(
      picks.flatMap((k) => {
        const start = defined(sorted.starts[k], 'a start');
        const end = defined(sorted.ends[k], 'an end');
        return [start, end - 1, end, start - 1];
      }),
    ).sort();
    const named = (table: SymbolTable, symbol: number | undefined) =>
      symbol === undefined || symbol < 0 ? undefined : symbolName(table, symbol);
    const want = lookupSymbols(plain, addrs);
    const got = lookupSymbols(again, addrs);
    addrs.forEach((addr, j) => {
      expect(named(again, got[j]), addr.toString(16)).toBe(named(plain, want[j]));
    });
  });

  it('are not used for another build of the binary, a changed file or a damaged cache file', async () => {
    const cacheDir = join(dir, 'elf-stale');
    const binary = join(dir, 'node-stale');
    copyFileSync(process.execPath, binary);
    const keyOf = () => {
      const info = statSync(binary);
      return `${binary}\u0000${info.size}\u0000${info.mtimeMs}`;
    };
    await readSymbolTable(binary, { symbolCacheDir: cacheDir }, keyOf());
    const [file] = readdirSync(cacheDir).filter((f) => f.startsWith('elf-'));
    // Damaged: cut short, then garbage in the header.
    const cached = join(cacheDir, defined(file, 'a cache file'));
    const good = readFileSync(cached);
    writeFileSync(cached, good.subarray(0, good.length - 8), { mode: 0o600 });
    expect((await readSymbolTable(binary, { symbolCacheDir: cacheDir }, keyOf())).nameFile).toBeUndefined();
    writeFileSync(cached, Buffer.concat([Buffer.from('{nonsense\n'), good]), { mode: 0o600 });
    expect((await readSymbolTable(binary, { symbolCacheDir: cacheDir }, keyOf())).nameFile).toBeUndefined();
    // Rewritten by the runs above: used again.
    expect((await readSymbolTable(binary, { symbolCacheDir: cacheDir }, keyOf())).nameFile).toBeDefined();
    // Same path, new content (another build id) and mtime: read afresh, not from the old listing.
    const bytes = readFileSync(binary);
    const id = bytes.indexOf(Buffer.from('GNU\u0000'));
    expect(id).toBeGreaterThan(0); // node has a GNU build id note
    bytes[id + 4] = (bytes[id + 4] ?? 0) ^ 0xff;
    writeFileSync(binary, bytes);
    utimesSync(binary, new Date(), new Date(Date.now() + 5000));
    const changed = await readSymbolTable(binary, { symbolCacheDir: cacheDir }, keyOf());
    expect(changed.nameFile).toBeUndefined();
    expect(changed.count).toBeGreaterThan(10_000);
  });

  it('make the report of a later run equal to the first one', async () => {
    const cacheDir = join(dir, 'elf-report');
    const first = await parseTickLog(log, { symbolCacheDir: cacheDir });
    const again = await parseTickLog(log, { symbolCacheDir: cacheDir });
    const uncached = await parseTickLog(log, {});
    expect(first.functions.some((f) => f.kind === 'cpp')).toBe(true);
    expect(again.functions).toEqual(first.functions);
    expect(uncached.functions).toEqual(first.functions);
  });
});
