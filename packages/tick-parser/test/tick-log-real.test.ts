import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionLabel, type Profile, parseTickLog, toFolded } from '../src/index.js';
import { defined } from './helpers/defined.js';
import {
  checkSelfTicks,
  checkTotalTicks,
  profilePbkdf2Server,
  profProcess,
  readProfProcessText,
  SELF_TICK_SLACK,
  TOTAL_TICK_SLACK,
} from './helpers/prof-run.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-prof-'));
let log: string;
let profile: Profile;
let reference: ReturnType<typeof readProfProcessText>;
let referenceText: string;
/** Whether this node binary still has its .symtab (official builds do; stripped ones only have .dynsym). */
const hasSymbolTable = (() => {
  try {
    const out = execFileSync('nm', ['--defined-only', '--', process.execPath], {
      maxBuffer: 512 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return out.length > 0;
  } catch {
    return false; // "no symbols"
  }
})();

beforeAll(async () => {
  log = await profilePbkdf2Server(dir, 2);
  const [parsed, text] = await Promise.all([parseTickLog(log), profProcess(log)]);
  profile = parsed;
  referenceText = text;
  reference = readProfProcessText(text);
}, 90_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parseTickLog on a real `node --prof` run of a pbkdf2Sync server under load', () => {
  it('counts the total ticks node --prof-process counts (within TOTAL_TICK_SLACK; a difference is printed and its log kept)', () => {
    expect(reference.total).toBeGreaterThan(100);
    const total = checkTotalTicks(profile, reference.total, log, referenceText);
    expect(Math.abs(total.difference), total.summary).toBeLessThanOrEqual(TOTAL_TICK_SLACK);
  });

  it('gives every JS function the self ticks --prof-process gives it (tiers summed)', () => {
    const mine = new Map<string, number>();
    for (const fn of profile.functions) {
      if (fn.kind === 'js' && fn.self > 0) mine.set(functionLabel(fn), fn.self);
    }
    expect(reference.js.size).toBeGreaterThan(0);
    const { moved, summary } = checkSelfTicks(mine, reference.js, log, referenceText);
    expect(moved, summary).toBeLessThanOrEqual(SELF_TICK_SLACK);
  });

  it('holds the slack to a single racy sample: two ticks pass, a systematic difference fails', () => {
    const theirs = new Map([
      ['a x.js:1:1', 40],
      ['b x.js:2:1', 10],
    ]);
    const text = 'reference text';
    expect(checkSelfTicks(new Map(theirs), theirs, log, text).moved).toBe(0);
    const racy = checkSelfTicks(
      new Map([
        ['a x.js:1:1', 41],
        ['b x.js:2:1', 9],
      ]),
      theirs,
      log,
      text,
    );
    expect(racy.moved).toBe(2);
    expect(racy.keptIn && readFileSync(join(racy.keptIn, 'prof-process.txt'), 'utf8')).toBe(text);
    const systematic = checkSelfTicks(new Map([['a x.js:1:1', 50]]), theirs, log, text);
    expect(systematic.moved).toBeGreaterThan(SELF_TICK_SLACK);
    expect([...systematic.deviations.keys()].sort()).toEqual(['a x.js:1:1', 'b x.js:2:1']);
    for (const kept of [racy.keptIn, systematic.keptIn])
      if (kept) rmSync(kept, { recursive: true, force: true });
    // totals: one tick passes, and says where the log was kept; many fail
    const ours = { totalTicks: 1886, warnings: [] };
    expect(checkTotalTicks(ours, 1886, log, text).difference).toBe(0);
    const one = checkTotalTicks(ours, 1887, log, text);
    expect(Math.abs(one.difference)).toBeLessThanOrEqual(TOTAL_TICK_SLACK);
    const keptTotal = /log kept in (\S+)\)/.exec(one.summary)?.[1];
    expect(keptTotal && readFileSync(join(keptTotal, 'prof-process.txt'), 'utf8')).toBe(text);
    if (keptTotal) rmSync(keptTotal, { recursive: true, force: true });
    const many = checkTotalTicks(ours, 1906, log, text);
    expect(Math.abs(many.difference)).toBeGreaterThan(TOTAL_TICK_SLACK);
    const keptMany = /log kept in (\S+)\)/.exec(many.summary)?.[1];
    if (keptMany) rmSync(keptMany, { recursive: true, force: true });
  });

  it('leaves fewer than 5 % of ticks unaccounted', () => {
    const unknown = profile.functions.find((f) => f.kind === 'unknown')?.self ?? 0;
    expect(profile.meta?.unaccountedTicks).toBe(unknown);
    expect(unknown / profile.totalTicks).toBeLessThan(0.05);
  });

  it('shows the PBKDF2 and SHA-512 C++ frames with their real share', () => {
    expect(profile.functions.some((f) => f.kind === 'cpp' && /sha512/i.test(f.name) && f.self > 0)).toBe(
      true,
    );
    const pbkdf2 = defined(
      profile.functions.filter((f) => /PBKDF2/.test(f.name)).sort((a, b) => b.total - a.total)[0],
      'a PBKDF2 function',
    );
    expect(pbkdf2.file).toBe(process.execPath);
    expect(pbkdf2.name).toMatch(/^node::crypto::\w+<node::crypto::PBKDF2Traits>::/); // demangled
    expect(pbkdf2.total / profile.totalTicks).toBeGreaterThan(0.25);
    // The JS caller is on the same stacks.
    const hash = profile.functions.find((f) => f.name === 'hashPassword');
    expect(hash?.file).toBe(join(dir, 'server.js'));
    expect(hash?.line).toBe(3);
    expect(defined(hash, 'hashPassword').total).toBeGreaterThanOrEqual(pbkdf2.total * 0.9);
  });

  // With a full symbol table (not a stripped node) the hashing leaves themselves are named.
  it.skipIf(!hasSymbolTable)(
    'names the hashing leaves, over a quarter of the ticks (needs a node with .symtab)',
    () => {
      const crypto = profile.functions.filter(
        (f) => f.kind === 'cpp' && /sha512|SHA512|PBKDF2|HMAC|EVP_|OPENSSL_cleanse|CRYPTO_/.test(f.name),
      );
      expect(crypto.reduce((n, f) => n + f.self, 0) / profile.totalTicks).toBeGreaterThan(0.25);
    },
  );

  it('keeps mangled C++ names, with a warning, when the demangler is missing', async () => {
    const raw = await parseTickLog(log, { demangler: '/nonexistent/c++filt' });
    expect(raw.totalTicks).toBe(profile.totalTicks);
    expect(raw.warnings.join('\n')).toMatch(/\/nonexistent\/c\+\+filt is not available.*stay mangled/);
    expect(raw.functions.some((f) => f.name.startsWith('_ZN4node6crypto'))).toBe(true);
  });

  it('writes folded stacks whose counts sum to the total', () => {
    const sum = toFolded(profile)
      .trim()
      .split('\n')
      .reduce((n, line) => n + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    expect(sum).toBe(profile.totalTicks);
    expect(profile.meta?.v8Version).toMatch(/^\d+\.\d+\.\d+/);
  });
});
