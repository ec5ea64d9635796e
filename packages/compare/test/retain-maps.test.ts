import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETAIN_MAPS_FOR_GCS } from '../src/measure/probe-memory.js';
import { probePath } from '../src/measure/probe-path.js';
import { runRound } from '../src/measure/round.js';
import { resolveSettings } from '../src/settings/schema.js';
import { levelled } from './helpers/levelled.js';

// With memory on, the probe's bursts of full collections would free the hidden classes of
// request-scoped objects and throw away the optimized code that embeds them (see
// RETAIN_MAPS_FOR_GCS): the probe raises V8's --retain-maps-for-n-gc in the server when it
// activates, unless the server set it itself, and leaves it alone with memory off. A preloaded
// recorder writes every V8 flag the server's process is given at run time to a file; real rounds.
const RECORDER = `const v8 = require('node:v8');
const set = v8.setFlagsFromString;
v8.setFlagsFromString = function recorded(flags) {
  require('node:fs').appendFileSync(process.env.FLAGS_FILE, flags + '\\n');
  return set.call(this, flags);
};
`;
const SERVER = `require('node:http').createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');
`;

describe("the probe keeps the server's hidden classes through its collections", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-retain-maps-'));
    writeFileSync(join(dir, 'recorder.cjs'), RECORDER);
    writeFileSync(join(dir, 'server.cjs'), SERVER);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The V8 flags the server's process set at run time, one round with `memory` and `nodeFlags`. */
  const flagsOf = async (
    memory: 'on' | 'off',
    nodeFlags = '',
  ): Promise<{ flags: string[]; edges: boolean }> => {
    const file = join(dir, `flags-${memory}-${nodeFlags ? 'own' : 'default'}.txt`);
    writeFileSync(file, '');
    const settings = resolveSettings({
      config: { scenarios: [{ name: 'GET /', requests: [{ path: '/' }] }] },
      overrides: { start: 'x', duration: '0.5', warmup: '1', connections: '2', profiler: 'none', memory },
    });
    const result = await runRound(
      { side: 'head', command: `node ${nodeFlags} -r ./recorder.cjs server.cjs`, cwd: dir, root: dir },
      1,
      levelled(settings),
      { probePath: probePath(), env: { ...process.env, FLAGS_FILE: file } },
    );
    expect(result.scenarios[0]?.load.requests.total).toBeGreaterThan(0);
    const edges = result.scenarios[0]?.monitors.some((m) => m.memory !== undefined) ?? false;
    return { flags: readFileSync(file, 'utf8').split('\n').filter(Boolean), edges };
  };

  it('raises --retain-maps-for-n-gc with memory on, not with memory off', async () => {
    const on = await flagsOf('on');
    // the first flag the probe sets, at activation, before any collection of its own
    expect(on.flags[0]).toBe(`--retain-maps-for-n-gc=${RETAIN_MAPS_FOR_GCS}`);
    expect(on.edges).toBe(true);
    const off = await flagsOf('off');
    expect(off.flags.filter((f) => f.includes('retain-maps'))).toEqual([]);
    expect(off.edges).toBe(false);
  });

  it("leaves the server's own setting alone", async () => {
    const own = await flagsOf('on', '--retain-maps-for-n-gc=5');
    expect(own.flags.filter((f) => f.includes('retain-maps'))).toEqual([]);
    // the memory edges ran all the same
    expect(own.edges).toBe(true);
  });
});
