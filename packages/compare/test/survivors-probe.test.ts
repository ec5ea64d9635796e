import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crossProfileKey } from '@hotpath/tick-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SAMPLES_PER_CPU_SECOND,
  SAMPLING_INTERVAL,
  windowSamplingInterval,
} from '../src/measure/probe-heap-sampling.js';
import { probePath } from '../src/measure/probe-path.js';
import { runRound } from '../src/measure/round.js';
import type { ScenarioRound } from '../src/model.js';
import { resolveSettings } from '../src/settings/schema.js';
import { roundAllocations, roundSurvivors } from '../src/verdict/allocation-diff.js';
import { defined } from './helpers/defined.js';
import { levelled } from './helpers/levelled.js';

// What the warm-up leaves alive, by allocation site, from a real server with the probe: one route
// keeps a ~300-byte array per request in a module-level list (a request log kept forever), the
// other allocates 8 KiB per request and drops it. The survivors profile must name the first and
// not the second, while the window's allocation profile (collected objects kept) sees both — so
// the second's absence is the profile dropping garbage, not the profiler missing the function.
// V8's sampling heap profiler names the frames on the machine stack: both functions are larger than
// TurboFan's inlining budget (460 bytes of bytecode), so neither is counted in the request handler.
const FIELDS = Array.from({ length: 60 }, (_, i) => `  note.f${i} = (served * ${i + 1}) % 97;`);
const SERVER = `const kept = [];
function recordRequest(served) {
  const note = {};
${FIELDS.join('\n')}
  kept.push(new Array(36).fill(served));
  return note.f1;
}
function buildGarbage(served) {
  const note = {};
${FIELDS.join('\n')}
  return new Array(1024).fill(served).length + note.f1;
}
let served = 0;
require('node:http').createServer((req, res) => {
  served++;
  const n = req.url === '/leak' ? recordRequest(served) : buildGarbage(served);
  res.end(String(n));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

describe('the survivors profile of a real server (the load after the first round’s window)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-survivors-'));
    writeFileSync(join(dir, 'server.cjs'), SERVER);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const round = async (overrides: Record<string, string>): Promise<ScenarioRound> => {
    const settings = resolveSettings({
      config: { scenarios: [{ name: 'mixed', requests: [{ path: '/leak' }, { path: '/garbage' }] }] },
      overrides: {
        start: 'x',
        duration: '0.5',
        warmup: '1.5',
        connections: '4',
        profiler: 'none',
        ...overrides,
      },
    });
    const result = await runRound(
      { side: 'head', command: 'node server.cjs', cwd: dir, root: dir },
      1,
      levelled(settings),
      {
        probePath: probePath(),
        env: process.env,
      },
    );
    return defined(result.scenarios[0], 'the scenario');
  };
  const key = (name: string) => crossProfileKey({ name, file: 'server.cjs' });

  it('names the function whose objects stay alive, not the one that allocates garbage', async () => {
    const measured = await round({});
    const survivors = defined(measured.survivors, 'a survivors profile');
    // Half the warm-up's requests leak: an array of 36 small integers, 16 + 36 × 8 bytes of
    // elements and its 32-byte header (less with pointer compression), ~170 bytes per request.
    expect(survivors.warmupRequests).toBeGreaterThan(500);
    const alive = defined(roundSurvivors(measured), 'survivors per request');
    const leaked = alive.perRequest.get(key('recordRequest')) ?? 0;
    const garbage = alive.perRequest.get(key('buildGarbage')) ?? 0;
    console.log(
      `survivors: recordRequest ${leaked.toFixed(1)} B, buildGarbage ${garbage.toFixed(1)} B per request of the load after the window (${survivors.warmupRequests} requests)`,
    );
    expect(leaked).toBeGreaterThan(60);
    expect(leaked).toBeLessThan(600);
    // At most one sample of the garbage left (an object alive at the edge by chance: one sampled
    // 8 KiB array stands for ~36 KiB), where a profile that kept garbage would hold ~8 KiB a request.
    expect(garbage * survivors.warmupRequests).toBeLessThan(40_000);
    // recordRequest is the largest allocation site of what survived, hotpath's probe left aside.
    const top = survivors.profile.functions.find((f) => f.file !== 'hotpath:probe');
    expect(top).toMatchObject({ name: 'recordRequest', file: 'server.cjs', line: 2 });
    // The window's profile keeps collected objects: there buildGarbage allocates ~8 KiB a request.
    const allocated = defined(roundAllocations(measured), 'the allocation profile');
    expect(allocated.perRequest.get(key('buildGarbage')) ?? 0).toBeGreaterThan(2_000);
  });

  it("samples the window at an interval set by the warm-up's rate of allocation", async () => {
    const measured = await round({});
    const interval = defined(measured.allocations, 'the allocation profile').samplingInterval;
    // What the window itself allocated per second of CPU time: the warm-up's rate was near it.
    let bytes = 0;
    let micros = 0;
    for (const m of measured.monitors) {
      bytes += m.memory?.allocatedBytes ?? 0;
      micros += m.cpuMicros;
    }
    const aimed = bytes / (micros / 1e6) / SAMPLES_PER_CPU_SECOND;
    console.log(`window sampling interval ${interval} B; the window's own rate gives ${aimed.toFixed(0)} B`);
    expect(interval).not.toBe(SAMPLING_INTERVAL);
    // Within a factor of 4 (the window pays for its opening collection, the warm-up does not),
    // and far from the fixed interval: this server allocates ~0.3–0.7 GB per CPU second.
    expect(interval).toBeGreaterThan(aimed / 4);
    expect(interval).toBeLessThan(aimed * 4);
  });

  it('keeps the window to a bounded number of samples, within its interval bounds', () => {
    expect(windowSamplingInterval(undefined)).toBe(SAMPLING_INTERVAL);
    expect(windowSamplingInterval(Number.NaN)).toBe(SAMPLING_INTERVAL);
    expect(windowSamplingInterval(0)).toBe(SAMPLING_INTERVAL);
    expect(windowSamplingInterval(150 * 1024 * 1024)).toBe(1024 * 1024);
    expect(windowSamplingInterval(1000)).toBe(16_384);
    expect(windowSamplingInterval(1e15)).toBe(16 * 1024 * 1024);
  });

  it('is absent with memory: off and without a warm-up', async () => {
    const off = await round({ memory: 'off' });
    expect(off.load.requests.total).toBeGreaterThan(0);
    expect(off.survivors).toBeUndefined();
    const cold = await round({ warmup: '0' });
    // Without a warm-up there is no rate to go by: the window samples at the fixed interval.
    expect(cold.allocations?.samplingInterval).toBe(SAMPLING_INTERVAL);
    expect(cold.survivors).toBeUndefined();
  });
});
