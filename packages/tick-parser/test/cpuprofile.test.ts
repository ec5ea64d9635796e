import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HotpathTicksError, parseCpuProfile, toFolded } from '../src/index.js';
import { defined } from './helpers/defined.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-cpuprofile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A small recorded-style profile: root → main → (hot → leaf, cold). 0-based positions. */
export const smallProfile = {
  startTime: 0,
  endTime: 1000,
  nodes: [
    {
      id: 1,
      callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 },
      children: [2, 5],
    },
    {
      id: 2,
      callFrame: { functionName: 'main', url: 'file:///app.js', lineNumber: 0, columnNumber: 0 },
      children: [3, 4],
    },
    {
      id: 3,
      callFrame: { functionName: 'hot', url: 'file:///app.js', lineNumber: 9, columnNumber: 4 },
      children: [6],
    },
    { id: 4, callFrame: { functionName: 'cold', url: 'file:///app.js', lineNumber: 19, columnNumber: 2 } },
    { id: 5, callFrame: { functionName: '(garbage collector)', url: '', lineNumber: -1, columnNumber: -1 } },
    { id: 6, callFrame: { functionName: 'hot', url: 'file:///app.js', lineNumber: 9, columnNumber: 4 } },
  ],
  samples: [3, 3, 3, 6, 6, 4, 5, 2, 3, 3],
};

describe('parseCpuProfile', () => {
  it('builds functions and stacks from the node tree and samples, 1-based positions', () => {
    const profile = parseCpuProfile(smallProfile);
    expect(profile.source).toBe('cpuprofile');
    expect(profile.totalTicks).toBe(10);
    const hot = defined(profile.functions[0], 'a function');
    expect(hot).toMatchObject({ name: 'hot', file: 'file:///app.js', line: 10, column: 5, kind: 'js' });
    // hot is sampled 5 times directly and twice as its own (recursive) callee: self 7, total 7.
    expect(hot.self).toBe(7);
    expect(hot.total).toBe(7);
    const main = defined(
      profile.functions.find((f) => f.name === 'main'),
      'main',
    );
    expect(main.self).toBe(1);
    expect(main.total).toBe(9);
    expect(profile.functions.find((f) => f.kind === 'gc')?.self).toBe(1);
    expect(profile.meta?.gcTicks).toBe(1);
    // Stacks are root first and never contain (root).
    const names = (frames: number[]) => frames.map((i) => profile.functions[i]?.name).join(';');
    const byPath = Object.fromEntries(profile.stacks.map((s) => [names(s.frames), s.count]));
    expect(byPath).toEqual({
      'main;hot': 5,
      'main;hot;hot': 2,
      'main;cold': 1,
      '(garbage collector)': 1,
      main: 1,
    });
    expect(profile.stacks.reduce((n, s) => n + s.count, 0)).toBe(profile.totalTicks);
    expect(profile.functions.reduce((n, f) => n + f.self, 0)).toBe(profile.totalTicks);
  });

  it('falls back to hitCount and reads the nested head format of older profilers', () => {
    const nested = {
      startTime: 0,
      endTime: 5,
      head: {
        id: 1,
        callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 },
        hitCount: 0,
        children: [
          {
            id: 2,
            callFrame: { functionName: 'work', url: '/srv/a.js', lineNumber: 4, columnNumber: 0 },
            hitCount: 3,
            children: [],
          },
        ],
      },
    };
    const profile = parseCpuProfile(nested);
    expect(profile.totalTicks).toBe(3);
    expect(profile.functions[0]).toMatchObject({ name: 'work', line: 5, column: 1, self: 3, total: 3 });
    expect(toFolded(profile)).toBe('work /srv/a.js:5:1 3\n');
  });

  it('names the hot loop of a real `node --cpu-prof` run with its 1-based line', () => {
    const script = join(dir, 'hot.js');
    writeFileSync(
      script,
      [
        'function cold() { return 1; }',
        'function hotLoop() {',
        '  let x = 0;',
        '  for (let i = 0; i < 2e8; i++) x = (x + i * 7) % 1000003;',
        '  return x;',
        '}',
        'cold(); console.log(hotLoop());',
      ].join('\n'),
    );
    execFileSync(process.execPath, [
      '--cpu-prof',
      '--cpu-prof-dir',
      dir,
      '--cpu-prof-interval',
      '500',
      script,
    ]);
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    const profile = parseCpuProfile(readFileSync(join(dir, defined(file, 'a .cpuprofile')), 'utf8'));

    const top = profile.functions.find((f) => f.kind === 'js');
    expect(top?.name).toBe('hotLoop');
    expect(top?.line).toBe(2);
    expect(defined(top, 'a JS function').self / profile.totalTicks).toBeGreaterThan(0.5);
    expect(profile.functions.reduce((sum, f) => sum + f.self, 0)).toBe(profile.totalTicks);
    const folded = toFolded(profile);
    const sum = folded
      .trim()
      .split('\n')
      .reduce((n, line) => n + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    expect(sum).toBe(profile.totalTicks);
    expect(folded).toMatch(/hotLoop [^;]*hot\.js:2:\d+ \d+\n/);
  });

  it('rejects JSON that is not a cpuprofile, saying what it expected', () => {
    expect(() => parseCpuProfile('{"foo": 1}')).toThrow(/not a \.cpuprofile: expected .*"nodes"/);
    try {
      parseCpuProfile('{not json');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(HotpathTicksError);
      expect((error as HotpathTicksError).code).toBe('HP_TICKS_BAD_CPUPROFILE');
    }
  });
});
