import { describe, expect, it } from 'vitest';
import {
  HotpathTicksError,
  type Profile,
  parseCpuProfile,
  parseTickLog,
  renderFlameGraph,
  renderTextReport,
  toFolded,
} from '../src/index.js';
import { prng } from './helpers/prng.js';

const FIXED_SEED = 0x5eed1234;
const RANDOM_SEED = (Math.random() * 2 ** 32) >>> 0;

function makeLog(seed: number): Buffer {
  const rnd = prng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const int = (n: number) => Math.floor(rnd() * n);
  // Few distinct addresses so events collide: moves onto each other, cycles, deletes of moved code.
  const addr = () => `0x${(0x100000 + int(16) * 0x40).toString(16)}`;
  const badNumber = () =>
    pick(['0xZZ', '-', '', '1e400', '9'.repeat(40), '0x', '--5', 'NaN', '0x-1', '\u0000']);
  const num = () => (rnd() < 0.1 ? badNumber() : addr());
  const lines: string[] = [];
  const count = 20 + int(300);
  for (let i = 0; i < count; i++) {
    const r = rnd();
    if (r < 0.2)
      lines.push(
        `code-creation,${pick(['JS', 'Builtin', 'RegExp', 'Eval', 'Weird'])},10,${int(1000)},${num()},${rnd() < 0.05 ? '99999999999999' : int(300)},${pick(['f /a.js:1:2', '"q,\\"x" /b.js:3', ' /anon.js:1:1', 'noloc', '\\x2C\\u00e9\\n'])},${num()},${pick(['~', '^', '*', '+', '', '?'])}`,
      );
    else if (r < 0.3)
      lines.push(`code-move,${num()},${num()}`); // includes A→B, B→A, A→A cycles
    else if (r < 0.35) lines.push(`code-delete,${num()}`);
    else if (r < 0.38) lines.push(`sfi-move,${num()},${num()}`);
    else if (r < 0.4)
      lines.push(
        `shared-library,${pick(['/nonexistent/lib.so', '-rf', '[vdso]', '"/x, y"'])},${num()},${num()},0`,
      );
    else if (r < 0.75) {
      const frames = Array.from({ length: int(rnd() < 0.05 ? 600 : 12) }, () =>
        pick([num(), `+${int(99)}`, `-${int(99)}`, 'overflow', badNumber()]),
      );
      lines.push(
        [
          'tick',
          num(),
          int(1e6),
          pick(['0', '1', 'x']),
          pick(['0x0', num()]),
          pick(['0', '1', '6', 'x']),
          ...frames,
        ].join(','),
      );
    } else if (r < 0.8) lines.push(`unknown-kind-${int(200)},1,2`);
    else if (r < 0.85)
      lines.push(Array.from({ length: int(40) }, () => String.fromCharCode(int(256))).join(''));
    else if (r < 0.87)
      lines.push('x'.repeat(int(3) * 40_000)); // over the 64 KiB line limit set below
    else if (r < 0.9) lines.push(','.repeat(int(50)));
    else if (r < 0.92) lines.push(`v8-version,${num()},${badNumber()}`);
    else if (r < 0.94) lines.push(`tick,${addr()}`);
    else lines.push(`new,CodeRange,${num()},${num()}`);
  }
  const bytes = Buffer.from(lines.join(pick(['\n', '\r\n'])), 'utf8');
  // Sometimes cut anywhere, like a log of a killed process.
  return rnd() < 0.5 ? bytes.subarray(0, int(bytes.length + 1)) : bytes;
}

function checkProfile(profile: Profile): void {
  expect(profile.source).toBe('tick-log');
  const stackSum = profile.stacks.reduce((n, s) => n + s.count, 0);
  expect(stackSum).toBe(profile.totalTicks);
  expect(profile.functions.reduce((n, f) => n + f.self, 0)).toBe(profile.totalTicks);
  for (const s of profile.stacks) for (const f of s.frames) expect(profile.functions[f]).toBeDefined();
  expect(Array.isArray(profile.warnings)).toBe(true);
  // Everything downstream copes too.
  renderTextReport(profile);
  renderFlameGraph(profile, { format: 'html' });
  toFolded(profile);
}

async function fuzzTickLogs(seed: number, cases: number): Promise<void> {
  const seeds = prng(seed);
  for (let i = 0; i < cases; i++) {
    const caseSeed = (seeds() * 2 ** 32) >>> 0;
    const log = makeLog(caseSeed);
    const chunked = (async function* () {
      for (let p = 0; p < log.length; p += 4096) yield log.subarray(p, p + 4096);
    })();
    let profile: Profile;
    try {
      profile = await parseTickLog(chunked as unknown as NodeJS.ReadableStream, {
        resolveSymbols: false,
        maxLineBytes: 64 * 1024,
      });
    } catch (error) {
      throw new Error(`case seed ${caseSeed}: parseTickLog threw ${(error as Error).stack}`);
    }
    checkProfile(profile);
  }
}

function fuzzCpuProfiles(seed: number, cases: number): void {
  const rnd = prng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const junk = (): unknown =>
    pick([null, 1, -1, 'x', 'constructor', '__proto__', [], {}, [1, 2], { id: 1 }, true, 1e300, Number.NaN]);
  for (let i = 0; i < cases; i++) {
    const ids = Array.from({ length: 1 + Math.floor(rnd() * 8) }, (_, k) => (rnd() < 0.1 ? junk() : k + 1));
    const nodes = ids.map((id) =>
      rnd() < 0.1
        ? junk()
        : {
            id,
            callFrame:
              rnd() < 0.1
                ? junk()
                : {
                    functionName: rnd() < 0.2 ? junk() : pick(['f', '(root)', 'constructor', '']),
                    url: rnd() < 0.1 ? junk() : '/a.js',
                    lineNumber: rnd() < 0.1 ? junk() : 3,
                    columnNumber: 1,
                  },
            children: rnd() < 0.1 ? junk() : ids.filter(() => rnd() < 0.3), // cycles included
            hitCount: rnd() < 0.5 ? Math.floor(rnd() * 5) : junk(),
          },
    );
    const input = {
      startTime: 0,
      endTime: 1,
      nodes,
      samples: rnd() < 0.2 ? junk() : ids.filter(() => rnd() < 0.7),
    };
    try {
      const profile = parseCpuProfile(
        rnd() < 0.1 ? JSON.stringify(input).slice(0, Math.floor(rnd() * 50)) : input,
      );
      expect(profile.stacks.reduce((n, s) => n + s.count, 0)).toBe(profile.totalTicks);
      renderTextReport(profile);
    } catch (error) {
      if (!(error instanceof HotpathTicksError))
        throw new Error(`cpuprofile case ${i} of seed ${seed}: ${(error as Error).stack}`);
    }
  }
}

describe('fuzz: hostile and broken inputs always end in a Profile with warnings', () => {
  it(`tick logs, fixed seed ${FIXED_SEED}`, async () => {
    await fuzzTickLogs(FIXED_SEED, 150);
  }, 60_000);

  it(`tick logs, random seed ${RANDOM_SEED} (replay: set it as FIXED_SEED)`, async () => {
    console.log(`fuzz random seed: ${RANDOM_SEED}`);
    await fuzzTickLogs(RANDOM_SEED, 150);
  }, 60_000);

  it('cpuprofiles, fixed and random seed', () => {
    fuzzCpuProfiles(FIXED_SEED, 400);
    fuzzCpuProfiles(RANDOM_SEED, 400);
  });

  it('a huge line, a 1000-frame stack and a code-move cycle stay bounded', async () => {
    const lines = [
      'code-creation,JS,10,1,0x1000,16,a /a.js:1:1,0x9000,~',
      'code-creation,JS,10,1,0x2000,16,b /b.js:1:1,0x9100,~',
      ...Array.from({ length: 2000 }, (_, i) =>
        i % 2 ? 'code-move,0x2000,0x1000' : 'code-move,0x1000,0x2000',
      ),
      `tick,0x1004,1,0,0x0,0,${Array(1000).fill('0x1004').join(',')}`,
      `code-creation,Builtin,2,1,0x3000,16,${'n'.repeat(5_000_000)}`,
      'tick,0x1004,2,0,0x0,0',
      '',
    ];
    const profile = await parseTickLog(
      (async function* () {
        yield Buffer.from(lines.join('\n'));
      })() as unknown as NodeJS.ReadableStream,
      { resolveSymbols: false, maxLineBytes: 1024 * 1024 },
    );
    checkProfile(profile);
    expect(profile.totalTicks).toBe(2);
    expect(profile.warnings.join('\n')).toMatch(/1 lines over the line limit skipped/);
    expect(profile.meta?.badLines).toBe(1);
    // The deep stack is kept, bounded by the field limit.
    expect(Math.max(...profile.stacks.map((s) => s.frames.length))).toBeGreaterThan(200);
  });
});
