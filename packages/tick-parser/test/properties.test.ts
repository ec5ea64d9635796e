import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HotpathTicksError, type Profile, parseCpuProfile, parseTickLog } from '../src/index.js';

// Property-based tests (fast-check) of the two readers: the `--prof` log reader and the
// .cpuprofile reader. Fixed seeds and bounded runs (a few seconds); a failure prints its seed and
// shrunk counterexample, which then becomes a regression test. fuzz.test.ts checks exact tick
// counts of generated logs; these check what must hold for any input at all.
const SEED = 0x28_71c5;

/** What any profile the readers return must satisfy. */
function expectConsistent(profile: Profile): void {
  expect(profile.stacks.reduce((n, s) => n + s.count, 0)).toBe(profile.totalTicks);
  expect(profile.functions.reduce((n, f) => n + f.self, 0)).toBe(profile.totalTicks);
  for (const s of profile.stacks) {
    expect(s.count).toBeGreaterThan(0);
    for (const f of s.frames) expect(profile.functions[f]).toBeDefined();
  }
}

const hex = fc.integer({ min: 0x1000, max: 0x1400 }).map((n) => `0x${n.toString(16)}`);
const field = fc.oneof(
  hex,
  fc.nat(500).map(String),
  fc.constantFrom('', '~', '*', '-1', '0xZZ', 'x,y', '"a,\\"b"', '1e400'),
);
/** Lines that look like a V8 log, well- and ill-formed, and plain noise. */
const logLine = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('JS', 'Builtin', 'RegExp', 'Eval', 'Weird'),
      hex,
      fc.nat(400),
      fc.constantFrom('f /a.js:1:2', '"q,\\"x" /b.js:3', 'noloc', ''),
      fc.constantFrom('~', '^', '*', ''),
    )
    .map(([kind, at, size, name, tier]) => `code-creation,${kind},10,1,${at},${size},${name},${at},${tier}`),
  fc.tuple(hex, hex).map(([a, b]) => `code-move,${a},${b}`),
  hex.map((a) => `code-delete,${a}`),
  fc
    .tuple(
      hex,
      fc.nat(1_000_000),
      fc.constantFrom('0', '1', '6', 'x'),
      fc.array(fc.oneof(hex, field), { maxLength: 8 }),
    )
    .map(([pc, time, vm, frames]) => ['tick', pc, time, '0', '0x0', vm, ...frames].join(',')),
  fc.array(field, { maxLength: 6 }).map((fs) => fs.join(',')),
  fc.string({ maxLength: 40 }),
);
const logText = fc
  .tuple(fc.array(logLine, { maxLength: 60 }), fc.constantFrom('\n', '\r\n'))
  .map(([lines, nl]) => lines.join(nl));

async function* chunks(bytes: Buffer, points: number[]) {
  const at = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const p of at) {
    yield bytes.subarray(from, p);
    from = p;
  }
  yield bytes.subarray(from);
}

async function readLog(bytes: Buffer, points: number[]): Promise<Profile | HotpathTicksError> {
  try {
    return await parseTickLog(chunks(bytes, points) as unknown as NodeJS.ReadableStream, {
      resolveSymbols: false,
      maxLineBytes: 4096,
    });
  } catch (error) {
    // Only the package's own error, never a TypeError or a RangeError from inside.
    expect(error).toBeInstanceOf(HotpathTicksError);
    return error as HotpathTicksError;
  }
}

describe('parseTickLog properties (fast-check, fixed seed)', () => {
  it('reads any bytes into a consistent profile or its own error', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          logText.map((t) => Buffer.from(t, 'utf8')),
          fc.uint8Array({ maxLength: 600 }).map((b) => Buffer.from(b)),
        ),
        async (bytes) => {
          const result = await readLog(bytes, []);
          if (!(result instanceof HotpathTicksError)) expectConsistent(result);
        },
      ),
      { seed: SEED, numRuns: 150 },
    );
  });

  it('gives the same profile for the same bytes however the stream cuts them', async () => {
    await fc.assert(
      fc.asyncProperty(logText, fc.array(fc.nat(), { maxLength: 10 }), async (text, points) => {
        const bytes = Buffer.from(text, 'utf8');
        const whole = await readLog(bytes, []);
        const cut = await readLog(bytes, points);
        expect(cut).toEqual(whole);
      }),
      { seed: SEED + 1, numRuns: 150 },
    );
  });
});

/** A well-formed .cpuprofile: a tree of nodes (each a child of an earlier one) and samples of them. */
const cpuProfile = fc
  .array(fc.tuple(fc.nat(), fc.constantFrom('f', 'g', '(garbage collector)', '(program)', ''), fc.nat(3)), {
    minLength: 1,
    maxLength: 12,
  })
  .chain((specs) =>
    fc.record({
      specs: fc.constant(specs),
      samples: fc.array(fc.integer({ min: 1, max: specs.length + 1 }), { maxLength: 50 }),
    }),
  )
  .map(({ specs, samples }) => {
    const nodes = [
      {
        id: 1,
        callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 },
        children: [] as number[],
      },
      ...specs.map(([, name, line], i) => ({
        id: i + 2,
        callFrame: { functionName: name, url: `/app/${name.length}.js`, lineNumber: line, columnNumber: 0 },
        children: [] as number[],
      })),
    ];
    specs.forEach(([parent], i) => {
      nodes[parent % (i + 1)]?.children.push(i + 2);
    });
    return { startTime: 0, endTime: samples.length, nodes, samples, timeDeltas: samples.map(() => 1) };
  });

describe('parseCpuProfile properties (fast-check, fixed seed)', () => {
  it('counts one tick per sample of a well-formed profile, as text or as an object', () => {
    fc.assert(
      fc.property(cpuProfile, fc.boolean(), (input, asText) => {
        const profile = parseCpuProfile(asText ? JSON.stringify(input) : input);
        expectConsistent(profile);
        expect(profile.totalTicks).toBe(input.samples.length);
      }),
      { seed: SEED + 2, numRuns: 200 },
    );
  });

  it('reads any JSON value, or a well-formed profile with any field replaced, into a profile or its own error', () => {
    const replaced = fc
      .tuple(
        cpuProfile,
        fc.constantFrom('nodes', 'samples', 'startTime', 'timeDeltas', 'endTime'),
        fc.jsonValue(),
      )
      .map(([p, key, value]) => ({ ...p, [key]: value }));
    const nodeReplaced = fc.tuple(cpuProfile, fc.nat(), fc.jsonValue()).map(([p, i, value]) => {
      const nodes = [...p.nodes] as unknown[];
      nodes[i % nodes.length] = value;
      return { ...p, nodes };
    });
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.string(), replaced, nodeReplaced), (input) => {
        let profile: Profile | undefined;
        try {
          profile = parseCpuProfile(input);
        } catch (error) {
          expect(error).toBeInstanceOf(HotpathTicksError);
        }
        if (profile) expectConsistent(profile);
      }),
      { seed: SEED + 3, numRuns: 300 },
    );
  });
});
