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

/** A generated log and what parsing it must give: the ticks and GC ticks of its complete, well-formed tick lines. */
interface GeneratedLog {
  bytes: Buffer;
  ticks: number;
  gcTicks: number;
}

function makeLog(seed: number): GeneratedLog {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly [T, ...T[]]): T => xs[Math.floor(rnd() * xs.length)] ?? xs[0];
  const int = (n: number) => Math.floor(rnd() * n);
  // Few distinct addresses so events collide: moves onto each other, cycles, deletes of moved code.
  const addr = () => `0x${(0x100000 + int(16) * 0x40).toString(16)}`;
  // None of these is an integer field: each makes its tick line a bad line.
  const badNumber = () =>
    pick(['0xZZ', '-', '', '1e400', '9'.repeat(40), '0x', '--5', 'NaN', '0x-1', '\u0000'] as const);
  const num = () => (rnd() < 0.1 ? { text: badNumber(), ok: false } : { text: addr(), ok: true });
  const lines: string[] = [];
  /** Per line: 0 not a counted tick, 1 a tick, 2 a tick in the GC state (vm state 1). */
  const tickKind: number[] = [];
  const count = 20 + int(300);
  for (let i = 0; i < count; i++) {
    const r = rnd();
    let kind = 0;
    if (r < 0.2)
      lines.push(
        `code-creation,${pick(['JS', 'Builtin', 'RegExp', 'Eval', 'Weird'])},10,${int(1000)},${num().text},${rnd() < 0.05 ? '99999999999999' : int(300)},${pick(['f /a.js:1:2', '"q,\\"x" /b.js:3', ' /anon.js:1:1', 'noloc', '\\x2C\\u00e9\\n'])},${num().text},${pick(['~', '^', '*', '+', '', '?'])}`,
      );
    else if (r < 0.3)
      lines.push(`code-move,${num().text},${num().text}`); // includes A→B, B→A, A→A cycles
    else if (r < 0.35) lines.push(`code-delete,${num().text}`);
    else if (r < 0.38) lines.push(`sfi-move,${num().text},${num().text}`);
    else if (r < 0.4)
      lines.push(
        `shared-library,${pick(['/nonexistent/lib.so', '-rf', '[vdso]', '"/x, y"'])},${num().text},${num().text},0`,
      );
    else if (r < 0.75) {
      const frames = Array.from({ length: int(rnd() < 0.05 ? 600 : 12) }, () =>
        pick([num().text, `+${int(99)}`, `-${int(99)}`, 'overflow', badNumber()]),
      );
      const pc = num();
      const vmState = pick(['0', '1', '6', 'x'] as const);
      lines.push(
        [
          'tick',
          pc.text,
          int(1e6),
          pick(['0', '1', 'x']),
          pick(['0x0', num().text]),
          vmState,
          ...frames,
        ].join(','),
      );
      // Bad frames are skipped and counted; only a bad pc or vm state makes the whole line bad.
      if (pc.ok && vmState !== 'x') kind = vmState === '1' ? 2 : 1;
    } else if (r < 0.8) lines.push(`unknown-kind-${int(200)},1,2`);
    else if (r < 0.85)
      // Random characters, line breaks included (a piece starting "tick," is 1 in 2^40 or so).
      lines.push(Array.from({ length: int(40) }, () => String.fromCharCode(int(256))).join(''));
    else if (r < 0.87)
      lines.push('x'.repeat(int(3) * 40_000)); // over the 64 KiB line limit set below
    else if (r < 0.9) lines.push(','.repeat(int(50)));
    else if (r < 0.92) lines.push(`v8-version,${num().text},${badNumber()}`);
    else if (r < 0.94)
      lines.push(`tick,${addr()}`); // too few fields: a bad line
    else lines.push(`new,CodeRange,${num().text},${num().text}`);
    tickKind.push(kind);
  }
  const separator = pick(['\n', '\r\n'] as const);
  const whole = Buffer.from(lines.join(separator), 'utf8');
  // Sometimes cut anywhere, like a log of a killed process.
  const kept = rnd() < 0.5 ? int(whole.length + 1) : whole.length;
  // A line is read once its newline is; the last line has none (the log does not end in one).
  let ticks = 0;
  let gcTicks = 0;
  let lineEnd = 0;
  for (const [i, line] of lines.entries()) {
    lineEnd += Buffer.byteLength(line) + separator.length;
    if (lineEnd > kept) break;
    if (tickKind[i] !== 0) ticks++;
    if (tickKind[i] === 2) gcTicks++;
  }
  return { bytes: whole.subarray(0, kept), ticks, gcTicks };
}

function checkProfile(profile: Profile): void {
  expect(profile.source).toBe('tick-log');
  const stackSum = profile.stacks.reduce((n, s) => n + s.count, 0);
  expect(stackSum).toBe(profile.totalTicks);
  expect(profile.functions.reduce((n, f) => n + f.self, 0)).toBe(profile.totalTicks);
  for (const s of profile.stacks) for (const f of s.frames) expect(profile.functions[f]).toBeDefined();
  expect(profile.warnings.filter((w) => w.startsWith('internal'))).toEqual([]);
  // Everything downstream reads it with the same totals.
  expect(renderTextReport(profile)).toContain(`(${profile.totalTicks} ticks,`);
  expect(renderFlameGraph(profile, { format: 'html' })).toContain(`${profile.totalTicks} samples`);
  const folded = toFolded(profile).split('\n').filter(Boolean);
  expect(folded).toHaveLength(profile.stacks.length);
  expect(folded.reduce((n, line) => n + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)).toBe(
    profile.totalTicks,
  );
}

async function fuzzTickLogs(seed: number, cases: number): Promise<void> {
  const seeds = prng(seed);
  for (let i = 0; i < cases; i++) {
    const caseSeed = (seeds() * 2 ** 32) >>> 0;
    const log = makeLog(caseSeed);
    const chunked = (async function* () {
      for (let p = 0; p < log.bytes.length; p += 4096) yield log.bytes.subarray(p, p + 4096);
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
    expect({ seed: caseSeed, ticks: profile.totalTicks, gcTicks: profile.meta?.gcTicks }).toEqual({
      seed: caseSeed,
      ticks: log.ticks,
      gcTicks: log.gcTicks,
    });
    checkProfile(profile);
  }
}

/** A generated .cpuprofile input and what parseCpuProfile must do with it. */
type CpuCase =
  | { input: unknown; valid: false }
  | {
      input: unknown;
      valid: true;
      ticks: number;
      gcTicks: number;
      skippedNodes: number;
      unknownSamples: number;
    };

/**
 * What parseCpuProfile makes of `nodes` and `samples`, by the rules it documents: a node counts
 * when it is an object with a numeric id and an object callFrame (a later node with the same id
 * replaces an earlier one); a non-empty samples array gives one tick per sample naming a node,
 * otherwise each node's hitCount (whole, when positive) does; every tick is in one stack.
 */
function expectedCpu(input: unknown, nodes: unknown[], samples: unknown): CpuCase {
  const byId = new Map<unknown, unknown>();
  let skippedNodes = 0;
  for (const node of nodes) {
    const n = node as { id?: unknown; callFrame?: unknown; hitCount?: unknown } | null;
    if (typeof n !== 'object' || n === null || typeof n.id !== 'number') skippedNodes++;
    else if (typeof n.callFrame !== 'object' || n.callFrame === null) skippedNodes++;
    else byId.set(n.id, n);
  }
  const isGc = (id: unknown) =>
    (byId.get(id) as { callFrame: { functionName?: unknown } }).callFrame.functionName ===
    '(garbage collector)';
  let ticks = 0;
  let gcTicks = 0;
  let unknownSamples = 0;
  if (Array.isArray(samples) && samples.length > 0) {
    for (const id of samples) {
      if (typeof id !== 'number' || !byId.has(id)) unknownSamples++;
      else {
        ticks++;
        if (isGc(id)) gcTicks++;
      }
    }
  } else {
    for (const [id, node] of byId) {
      const hits = (node as { hitCount?: unknown }).hitCount;
      if (typeof hits !== 'number' || !(hits > 0)) continue;
      ticks += Math.floor(hits);
      if (isGc(id)) gcTicks += Math.floor(hits);
    }
  }
  return { input, valid: true, ticks, gcTicks, skippedNodes, unknownSamples };
}

function makeCpuProfile(rnd: () => number): CpuCase {
  const pick = <T>(xs: readonly [T, ...T[]]): T => xs[Math.floor(rnd() * xs.length)] ?? xs[0];
  const junk = (): unknown =>
    pick([null, 1, -1, 'x', 'constructor', '__proto__', [], {}, [1, 2], { id: 1 }, true, 1e300, Number.NaN]);
  // Not a .cpuprofile at all: no object, no numeric startTime, neither nodes nor head.
  const shape = rnd();
  if (shape < 0.03) return { input: pick([null, 1, 'x', true, [], [{ startTime: 0 }]]), valid: false };
  if (shape < 0.06) return { input: { startTime: pick<unknown>(['0', null, {}]), nodes: [] }, valid: false };
  if (shape < 0.09) return { input: { startTime: 0, nodes: pick<unknown>([5, 'nodes', {}]) }, valid: false };
  if (shape < 0.12) return { input: { startTime: 0, endTime: 1 }, valid: false };
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
                  functionName:
                    rnd() < 0.2 ? junk() : pick(['f', '(root)', 'constructor', '', '(garbage collector)']),
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
  const text = JSON.stringify(input);
  const form = rnd();
  // Cut short: a strict prefix of a JSON object is never JSON.
  if (form < 0.1)
    return { input: text.slice(0, Math.floor(rnd() * Math.min(50, text.length))), valid: false };
  if (form < 0.3) {
    // As text: what JSON makes of it (NaN becomes null) is what is read.
    const parsed = JSON.parse(text) as typeof input;
    return expectedCpu(text, parsed.nodes, parsed.samples);
  }
  return expectedCpu(input, nodes, input.samples);
}

function fuzzCpuProfiles(seed: number, cases: number): { valid: number; invalid: number } {
  const rnd = prng(seed);
  const seen = { valid: 0, invalid: 0 };
  for (let i = 0; i < cases; i++) {
    const generated = makeCpuProfile(rnd);
    const where = `cpuprofile case ${i} of seed ${seed}`;
    let outcome: { profile: Profile } | { error: unknown };
    try {
      outcome = { profile: parseCpuProfile(generated.input) };
    } catch (error) {
      outcome = { error };
    }
    if (!generated.valid) {
      seen.invalid++;
      // Rejected with the package's own error and code, never anything else.
      if (!('error' in outcome)) throw new Error(`${where}: accepted input that is not a .cpuprofile`);
      if (!(outcome.error instanceof HotpathTicksError))
        throw new Error(`${where}: threw ${(outcome.error as Error).stack}`);
      expect(outcome.error.code).toBe('HP_TICKS_BAD_CPUPROFILE');
      continue;
    }
    seen.valid++;
    if ('error' in outcome)
      throw new Error(`${where}: rejected a .cpuprofile: ${(outcome.error as Error).stack}`);
    const { profile } = outcome;
    expect({ where, ticks: profile.totalTicks, gcTicks: profile.meta?.gcTicks }).toEqual({
      where,
      ticks: generated.ticks,
      gcTicks: generated.gcTicks,
    });
    expect(profile.source).toBe('cpuprofile');
    expect(profile.stacks.reduce((n, s) => n + s.count, 0)).toBe(profile.totalTicks);
    expect(profile.functions.reduce((n, f) => n + f.self, 0)).toBe(profile.totalTicks);
    const warnings = profile.warnings.join('\n');
    if (generated.skippedNodes > 0)
      expect(warnings).toContain(
        `${generated.skippedNodes} nodes without a numeric id or a callFrame skipped`,
      );
    if (generated.unknownSamples > 0)
      expect(warnings).toContain(`${generated.unknownSamples} samples name node ids that are not in "nodes"`);
    expect(renderTextReport(profile)).toContain(`(${profile.totalTicks} ticks,`);
  }
  return seen;
}

describe('fuzz: hostile and broken inputs give a Profile with the expected totals, or HP_TICKS_* errors', () => {
  it(`tick logs, fixed seed ${FIXED_SEED}`, async () => {
    await fuzzTickLogs(FIXED_SEED, 150);
  }, 60_000);

  it(`tick logs, random seed ${RANDOM_SEED} (replay: set it as FIXED_SEED)`, async () => {
    console.log(`fuzz random seed: ${RANDOM_SEED}`);
    await fuzzTickLogs(RANDOM_SEED, 150);
  }, 60_000);

  it('cpuprofiles, fixed and random seed: valid ones give their totals, others HP_TICKS_BAD_CPUPROFILE', () => {
    for (const seed of [FIXED_SEED, RANDOM_SEED]) {
      const seen = fuzzCpuProfiles(seed, 400);
      // both halves are exercised on every seed
      expect(seen.valid).toBeGreaterThan(200);
      expect(seen.invalid).toBeGreaterThan(40);
    }
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
