import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The built package, through its own name and exports map (dist/, not src/).
import * as built from '@hotpath/compare';
import * as internal from '@hotpath/compare/internal';
import { afterAll, describe, expect, it } from 'vitest';
import { defined } from './helpers/defined.js';

/** A shard recorded with `hotpath compare --results` (async vs sync pbkdf2, 3 rounds × 1 s). */
const RECORDED = new URL('./fixtures/recorded-shard/', import.meta.url).pathname;

const PUBLIC_API = [
  'compare',
  'runCompare',
  'runMeasure',
  'runReport',
  'runProfile',
  'runDrift',
  'runDriftMeasure',
  'runDriftRecord',
  'runHistory',
  'bisect',
  'runBisect',
  'historyFile',
  'measure',
  'report',
  'render',
  'writeReport',
  'writeShard',
  'readShards',
  'parseShard',
  'resolveSettings',
  'loadConfig',
  'findConfig',
  'HotpathCompareError',
  'ERROR_CODES',
];

const dir = mkdtempSync(join(tmpdir(), 'hotpath-exports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the built package through its exports map', () => {
  it('exposes exactly the designed public API at runtime', () => {
    expect(Object.keys(built).sort()).toEqual([...PUBLIC_API].sort());
    for (const [name, value] of Object.entries(built))
      expect(typeof value, name).toBe(name === 'ERROR_CODES' ? 'object' : 'function');
  });

  it('keeps the internal subpath apart from the public API', () => {
    const names = Object.keys(internal);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((n) => PUBLIC_API.includes(n))).toEqual([]);
    expect(internal.commentMarker()).toBe('<!-- hotpath-report -->');
  });

  it('reports and renders a recorded shard', () => {
    const shards = built.readShards([RECORDED]);
    expect(shards).toHaveLength(1);
    const shard = defined(shards[0], 'the recorded shard');
    expect(shard.measurements.base).toHaveLength(3);
    expect(shard.measurements.head).toHaveLength(3);

    const report = built.report(shards);
    expect(report.scenarios.map((s) => s.name)).toEqual(['GET /auth']);
    const scenario = defined(report.scenarios[0], 'the scenario');
    const rps = defined(
      scenario.metrics.find((m) => m.metric === 'requestsPerSecond'),
      'the requests/s metric',
    );
    // Recorded: about 1190 req/s with pbkdf2 in the thread pool, about 350 with pbkdf2Sync.
    expect(rps.base).toBeGreaterThan(1000);
    expect(rps.head).toBeLessThan(500);
    expect(rps.change).toBeLessThan(-0.5);
    const run = defined(
      scenario.hotFunctions?.rows.find((f) => f.name === 'run'),
      'the native run frame of pbkdf2',
    );
    expect(run.headShare).toBeGreaterThan(run.baseShare);

    const text = built.render(report);
    expect(text.terminal).toContain('Requests/s');
    expect(text.markdown).toContain('/auth');
    expect(text.summary.length).toBeGreaterThan(0);
    const json = JSON.parse(text.json);
    expect(json.schema).toMatch(/^hotpath-report\/\d+$/);
    expect(json.scenarios[0].name).toBe('GET /auth');

    const files = built.writeReport(join(dir, 'report'), report);
    expect(JSON.parse(readFileSync(files.report, 'utf8'))).toEqual(json);
    expect(existsSync(files.markdown)).toBe(true);
  });

  it('writes a shard that reads back to the same report', () => {
    const [shard] = built.readShards([RECORDED]);
    built.writeShard(join(dir, 'results'), defined(shard, 'the recorded shard'));
    expect(built.report(built.readShards([join(dir, 'results')]))).toEqual(
      built.report(built.readShards([RECORDED])),
    );
  });

  it('throws its own error class with a stable code', () => {
    const error = (() => {
      try {
        built.readShards([join(dir, 'empty')]);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(built.HotpathCompareError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'HotpathCompareError', code: 'HP_COMPARE_RESULTS' });
    expect(Object.keys(built.ERROR_CODES)).toContain('HP_COMPARE_RESULTS');
    expect(built.parseShard('2/3')).toEqual({ index: 2, total: 3 });
    expect(() => built.parseShard('4/3')).toThrow(built.HotpathCompareError);
    expect(built.findConfig(dir)).toBeUndefined();
    expect(built.resolveSettings({ config: { start: 'node server.js' } }).scenarios).toHaveLength(1);
  });
});
