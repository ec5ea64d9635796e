import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseTickLog, SymbolCache } from '../src/index.js';
import { findOnPath } from '../src/record-plan.js';

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
      const real = findOnPath('c++filt', process.env.PATH)!;
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
