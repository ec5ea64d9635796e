import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compare } from '../src/compare.js';
import { RESULTS_LIMITS } from '../src/limits.js';
import { readHeapProfiles } from '../src/measure/allocation-profiles.js';
import {
  checkHeapSampling,
  startHeapSampling,
  stopHeapSampling,
} from '../src/measure/probe-heap-sampling.js';
import type {
  AllocationProfile,
  Measurements,
  MemoryWindow,
  RoundResult,
  ScenarioRound,
} from '../src/model.js';
import { type FlameNode, flameData, MIN_FRAME_SHARE } from '../src/render/flame-data.js';
import { renderMarkdown } from '../src/render/markdown.js';
import { render } from '../src/render/render.js';
import { allocationFlameProfile } from '../src/report/allocation-flames.js';
import { report as makeReport } from '../src/report/report.js';
import { resolveSettings } from '../src/settings/schema.js';
import { readShard, writeShard } from '../src/shard/file.js';
import { allocationProfileSchema } from '../src/shard/schema.js';
import { diffAllocations } from '../src/verdict/allocation-diff.js';
import { allocationProfile, thousandRequests } from './helpers/allocation-profile.js';
import { defined } from './helpers/defined.js';
import { expectSafeMarkdown, renderGfm } from './helpers/gfm.js';
import { shardOf } from './helpers/shards.js';

// Which functions allocate more: V8's sampling heap profiler in the probe, each round's profile as
// bytes per request by function, and the diff base → head.

const memory = (allocatedBytes: number): MemoryWindow => ({
  heapStart: 0,
  heapEnd: 0,
  externalStart: 0,
  externalEnd: 0,
  arrayBuffersStart: 0,
  arrayBuffersEnd: 0,
  allocatedBytes,
  gcMicros: 0,
  gcMaxMicros: 0,
  gcCount: 0,
});

/** One window of 1 000 requests whose processes allocated `allocated` bytes in all (undefined: no memory edges). */
function window(
  profile: AllocationProfile | undefined,
  allocated?: number,
  scenario = 'GET /',
): ScenarioRound {
  return {
    scenario,
    load: thousandRequests(),
    ...(profile ? { allocations: profile } : {}),
    monitors:
      allocated === undefined
        ? []
        : [
            {
              pid: 1,
              durationMs: 1000,
              cpuMicros: 1000,
              mainThreadCpuMicros: 1000,
              delayMean: 0,
              delayP99: 0,
              delayMax: 0,
              utilization: 0.5,
              heapStart: 0,
              heapEnd: 0,
              heapMax: 0,
              rssStart: 0,
              rssEnd: 0,
              heapSeries: [],
              memory: memory(allocated),
            },
          ],
    profilers: ['none'],
  };
}

describe('allocated bytes per request by function (recorded data)', () => {
  it('scales each round to its measured allocated bytes, diffs base → head and leaves the probe out', () => {
    // Sampled 100 + 300 bytes in base, measured 2 000 000 B over 1 000 requests: 2 000 B per request,
    // a quarter in parse (500 B). Head adds buildPayload: measured 6 000 B per request.
    const base = [1, 2, 3].map((n) =>
      window(allocationProfile({ parse: 100 + n, render: 300 - n }), 2_000_000),
    );
    const head = [1, 2, 3].map((n) =>
      window(allocationProfile({ parse: 100, render: 300, buildPayload: 800 + n }), 6_000_000),
    );
    // The probe's own frames (50 sampled bytes in one base round) count in the total, never as a row.
    const withProbe = defined(base[0]?.allocations);
    withProbe.functions.push({
      name: 'openWindow',
      file: 'hotpath:probe',
      line: 1,
      column: 1,
      selfBytes: 50,
    });
    withProbe.sampledBytes += 50;
    const diff = defined(diffAllocations(base, head, 0.05), 'a diff');
    const top = defined(diff.rows[0]);
    expect(top).toMatchObject({ name: 'buildPayload', status: 'new', base: 0, file: 'src/app.js', line: 12 });
    const expected = [801, 802, 803].reduce((sum, b) => sum + (6000 * b) / (400 + b), 0) / 3;
    expect(top.head).toBeCloseTo(expected, 6);
    expect(defined(top.ci)[0]).toBeGreaterThan(3000);
    expect(diff.baseTotal).toBeCloseTo(2000, 6);
    expect(diff.headTotal).toBeCloseTo(6000, 6);
    expect(diff).toMatchObject({ pairs: 3, rounds: { base: 3, head: 3 } });
    expect(diff.rows.map((r) => r.name)).not.toContain('openWindow');
    // main allocated nothing itself: no row.
    expect(diff.rows.map((r) => r.name)).not.toContain('main');
  });

  it('uses the sampled bytes over the requests without memory edges, and gives no interval under two pairs', () => {
    const diff = defined(
      diffAllocations(
        [window(allocationProfile({ f: 4_000 }))],
        [window(allocationProfile({ f: 8_000 }))],
        0.05,
      ),
    );
    expect(diff.rows[0]).toMatchObject({ name: 'f', base: 4, head: 8, change: 4, status: 'changed' });
    expect(diff.rows[0]?.ci).toBeUndefined();
    expect(
      diffAllocations([window(undefined, 1000)], [window(allocationProfile({ f: 1 }))], 0.05),
    ).toBeUndefined();
  });
});

describe('the allocation flame graphs (recorded data)', () => {
  it('merge each side into bytes per request by stack, the mean over its rounds, the probe left out', () => {
    // base: two rounds of 2 000 B per request, a quarter in parse; the probe's stack in one of them
    const base = [
      window(allocationProfile({ parse: 100, render: 300 }), 2_000_000),
      window(allocationProfile({ parse: 100, render: 300 }), 2_000_000),
    ];
    const probed = defined(base[1]?.allocations);
    probed.functions.push({ name: 'openWindow', file: 'hotpath:probe', line: 1, column: 1, selfBytes: 40 });
    probed.stacks.push({ frames: [probed.functions.length - 1], bytes: 40 });
    const profile = defined(allocationFlameProfile(base), 'a profile');
    expect(profile.functions.map((f) => f.name)).not.toContain('openWindow');
    expect(profile.functions.map((f) => [f.name, Math.round(f.self)])).toEqual([
      ['render', Math.round((1500 + (2000 * 300) / 440) / 2)],
      ['parse', Math.round((500 + (2000 * 100) / 440) / 2)],
      ['main', 0],
    ]);
    expect(profile.totalTicks).toBeCloseTo(
      profile.stacks.reduce((n, s) => n + s.count, 0),
      9,
    );
    expect(defined(profile.functions[2]).total).toBeCloseTo(profile.totalTicks, 9);
    expect(allocationFlameProfile([window(undefined, 1000)])).toBeUndefined();
  });

  it("diff in bytes per request as they are: head's 1 000 B more in render is +1 000 B, not a share", () => {
    const base = allocationFlameProfile([window(allocationProfile({ parse: 500, render: 500 }), 1_000_000)]);
    const head = allocationFlameProfile([window(allocationProfile({ parse: 500, render: 1500 }), 2_000_000)]);
    const data = flameData({ base, head }, MIN_FRAME_SHARE, 'bytes');
    expect(data.unit).toBe('bytes');
    const name = (n: FlameNode) => data.names[n.n];
    const main = defined(defined(data.diff?.c)[0]);
    expect(name(main)).toMatch(/^main /);
    const byName = Object.fromEntries((main.c ?? []).map((n) => [name(n)?.split(' ')[0], n]));
    expect(byName.render).toMatchObject({ v: 1500, d: 1000 });
    expect(byName.parse?.v).toBe(500);
    expect(byName.parse?.d).toBeUndefined();
    // CPU samples keep the scaled differential: base scaled to head's count (2 000 / 1 000)
    const cpu = flameData({ base, head });
    const parse = cpu.diff?.c?.[0]?.c?.find((n) => cpu.names[n.n]?.startsWith('parse '));
    expect(parse?.d).toBe(-500);
  });
});

describe('the sampling heap profiler in the probe', () => {
  it('keeps collected objects and names the function that allocated them', async () => {
    expect(await checkHeapSampling()).toBeUndefined();
    const sampling = defined(await startHeapSampling(), 'a running sampler');
    function buildPayload(i: number): number {
      return new Array(2048).fill(i).length;
    }
    let n = 0;
    for (let i = 0; i < 2000; i++) n += buildPayload(i);
    const profile = defined(await stopHeapSampling(sampling), 'a profile');
    expect(await stopHeapSampling(sampling)).toBeUndefined();
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-heap-'));
    try {
      writeFileSync(join(dir, '1-1.heapprofile'), JSON.stringify(profile));
      const read = readHeapProfiles([join(dir, '1-1.heapprofile')], { probePath: '/nowhere/probe.cjs' });
      const fn = defined(
        read.allocations?.functions.find((f) => f.name === 'buildPayload'),
        'buildPayload',
      );
      // 2 000 arrays of 2 048 slots, 8 or 4 bytes each (all garbage by now): 16 or 32 MB.
      expect(fn.selfBytes).toBeGreaterThan(n * 2);
      expect(fn.file).toMatch(/allocation-sites\.test\.ts$/);
      writeFileSync(join(dir, 'bad.heapprofile'), JSON.stringify({ head: { callFrame: {}, children: [] } }));
      const bad = readHeapProfiles([join(dir, '1-1.heapprofile'), join(dir, 'bad.heapprofile')], {
        probePath: '/x',
      });
      expect(bad.allocations).toBeUndefined();
      expect(bad.warnings[0]).toMatch(/bad\.heapprofile: .*expected shape/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const settings = resolveSettings({ config: { start: 'node server.js', rounds: 3 } });
const SCENARIO = defined(settings.scenarios[0], 'the default scenario').name;

function round(side: 'base' | 'head', n: number, profile: AllocationProfile): RoundResult {
  return { side, round: n, scenarios: [window(profile, 4_000_000, SCENARIO)], pids: [1], warnings: [] };
}

function measurements(base: AllocationProfile, head: AllocationProfile): Measurements {
  return {
    base: [1, 2, 3].map((n) => round('base', n, base)),
    head: [1, 2, 3].map((n) => round('head', n, head)),
    order: ['base', 'head', 'base', 'head', 'base', 'head'],
    scenarios: [SCENARIO],
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:00.000Z',
  };
}

describe('allocation profiles in results files', () => {
  const good = allocationProfile({ parse: 1000 });
  it('are written beside the results and read back; a malformed one is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-alloc-shard-'));
    try {
      const folder = writeShard(dir, shardOf(measurements(good, good), settings));
      const results = readFileSync(join(folder, 'hotpath-results.json'), 'utf8');
      expect(results).not.toContain('"allocations"');
      const path = join(folder, 'profiles/base-1-1.alloc.json');
      const shard = readShard(join(folder, 'hotpath-results.json'));
      expect(shard.measurements.base[0]?.scenarios[0]?.allocations).toEqual(good);
      // A results file that names the allocation profile as a CPU profile too: each kind is checked.
      const data = JSON.parse(results);
      data.base[0].scenarios[0].profile = data.base[0].scenarios[0].allocationProfile;
      writeFileSync(join(folder, 'hotpath-results.json'), JSON.stringify(data));
      expect(() => readShard(join(folder, 'hotpath-results.json'))).toThrow(
        /^profile .*base-1-1\.alloc\.json.* does not have the expected shape/,
      );
      writeFileSync(join(folder, 'hotpath-results.json'), results);
      writeFileSync(path, JSON.stringify({ ...good, stacks: [{ frames: [7], bytes: 1 }] }));
      expect(() => readShard(join(folder, 'hotpath-results.json'))).toThrow(
        /allocation profile .*base-1-1\.alloc\.json.* does not have the expected shape: a stack names a function/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are bounded like the CPU profiles: one over the per-file limit is refused by its size, unread', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-alloc-limit-'));
    try {
      const folder = writeShard(dir, shardOf(measurements(good, good), settings));
      truncateSync(join(folder, 'profiles/head-2-1.alloc.json'), RESULTS_LIMITS.fileBytes + 1);
      expect(() => readShard(join(folder, 'hotpath-results.json'))).toThrow(
        /^the size of profile .*head-2-1\.alloc\.json is 268435457 bytes: expected at most 268435456 bytes$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the schema refuses negative bytes, a sum that is not the total, and frames out of range', () => {
    expect(allocationProfileSchema.safeParse(good).success).toBe(true);
    const fn = defined(good.functions[0]);
    for (const bad of [
      { ...good, functions: [{ ...fn, selfBytes: -1 }, ...good.functions.slice(1)], sampledBytes: -1 },
      { ...good, sampledBytes: good.sampledBytes * 2 },
      { ...good, stacks: [{ frames: [2], bytes: 1 }] },
      { ...good, functions: [{ ...fn, name: 'x'.repeat(3000) }] },
      { ...good, stacks: [{ frames: [], bytes: 1 }] },
    ])
      expect(allocationProfileSchema.safeParse(bad).success).toBe(false);
  });
});

const HOSTILE = [
  '<img src=x onerror=alert(1)>',
  '@octocat',
  '`code` ``` x ```',
  '[x](http://evil.example)',
  'www.evil.example #123 | a |',
];

describe('allocating functions with hostile names', () => {
  it('render as text in the comment: no markup, link or mention from them', () => {
    for (const text of HOSTILE) {
      const head = allocationProfile({ [text]: 3000, parse: 1000 }, text);
      const base = allocationProfile({ parse: 1000, render: 1000 }, text);
      const made = makeReport([shardOf(measurements(base, head), settings)], {
        links: { repositoryUrl: 'https://github.com/o/r', sha: 'abc1234' },
      });
      const top = defined(made.scenarios[0]?.allocations?.rows[0], 'a row');
      expect(top.name).toBe(text);
      const markdown = renderMarkdown(made);
      expect(markdown).toContain('Allocating function');
      expectSafeMarkdown(markdown, { repositoryUrl: 'https://github.com/o/r' });
      // The name is still there for the reader (inside a code span).
      expect(renderGfm(markdown)).toContain('<code>');
      const { terminal } = render(made);
      expect(terminal).toContain('allocating functions');
    }
  });
});

// A real server whose head (--extra) allocates an extra array of 2 048 elements (16 KiB with
// 8-byte slots, 8 KiB with pointer compression) per request in buildPayload: the plain server
// allocates a few KiB per request in all, so buildPayload's change is far above sampling noise.
// V8's sampling heap profiler names the frames on the machine stack: a function TurboFan inlined
// into its caller has its bytes counted in the caller. buildPayload is larger than the inlining
// budget (460 bytes of bytecode), as a real payload builder is, so it keeps its own frame.
const FIELDS = Array.from({ length: 60 }, (_, i) => `  payload.f${i} = (served * ${i + 1}) % 97;`);
const SERVER = `const extra = process.argv.includes('--extra');
function buildPayload(served) {
  const payload = { ok: true, served };
  if (extra) payload.checksum = new Array(2048).fill(served).length;
${FIELDS.join('\n')}
  return payload;
}
let served = 0;
require('node:http').createServer((req, res) => {
  res.end(JSON.stringify(buildPayload(++served)));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

describe('allocating functions of a real server', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-alloc-'));
    writeFileSync(join(dir, 'server.cjs'), SERVER);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('puts the function that allocates more at the top, with a positive change and interval', async () => {
    const made = await compare({
      baseStart: 'node server.cjs',
      headStart: 'node server.cjs --extra',
      cwd: dir,
      url: '/',
      rounds: 3,
      duration: 1,
      warmup: 0.5,
      connections: 2,
      profiler: 'none',
      out: join(dir, 'out'),
    });
    const diff = defined(made.scenarios[0]?.allocations, 'the allocation diff');
    const top = defined(diff.rows[0], 'a row');
    expect(top).toMatchObject({ name: 'buildPayload', file: 'server.cjs', line: 2, status: 'changed' });
    expect(top.change).toBeGreaterThan(4_000);
    expect(defined(top.ci, 'an interval')[0]).toBeGreaterThan(0);
    expect(diff.pairs).toBe(3);
    const json = JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8'));
    expect(json.scenarios[0].allocations.rows[0].name).toBe('buildPayload');
    expect(readFileSync(join(dir, 'out', 'report.md'), 'utf8')).toContain('`buildPayload`');
    expect(readFileSync(join(dir, 'out', 'report.html'), 'utf8')).toContain('<code>buildPayload</code>');
  });
});
