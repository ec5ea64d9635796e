import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandLine, usage } from '../src/cli/args.js';
import { HotpathCompareError } from '../src/errors.js';
import { loadConfig } from '../src/settings/config-file.js';
import { parseDuration } from '../src/settings/duration.js';
import { configJsonSchema } from '../src/settings/json-schema.js';
import { resolveSettings } from '../src/settings/schema.js';
import { flagOf, SETTINGS, type SettingSpec } from '../src/settings/table.js';

const fromFlags = (overrides: Record<string, unknown>) =>
  resolveSettings({ overrides, overridesSource: 'flag' });
const fromInputs = (overrides: Record<string, unknown>) =>
  resolveSettings({ overrides, overridesSource: 'input' });

function failure(run: () => unknown): HotpathCompareError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(HotpathCompareError);
    return err as HotpathCompareError;
  }
  throw new Error('expected a HotpathCompareError');
}

describe('resolveSettings (one table for flags, inputs, config and API)', () => {
  it('applies the documented defaults, in the table units, as one unnamed scenario', () => {
    const s = fromFlags({ start: 'node server.js' });
    expect(s).toMatchObject({
      cwd: '.',
      duration: 5,
      warmup: 2,
      rounds: 'auto',
      maxTime: 180,
      maxRounds: 30,
      metrics: [
        'requestsPerSecond',
        'p50',
        'errorRate',
        'cpuPerRequest',
        'mainThreadCpuPerRequest',
        'retainedBytesPerRequest',
        'allocatedBytesPerRequest',
        'downstreamCallsPerRequest',
        'waitingPerRequest',
      ],
      failOnInconclusive: false,
      failOn: 'metrics',
      profiler: 'cpuprofile',
      threshold: 5,
      hotThreshold: 5,
      retainedThreshold: 64,
      failOnRegression: false,
      readyTimeout: 30,
      out: 'hotpath-report',
    });
    expect(s.scenarios).toEqual([
      {
        name: 'GET /',
        url: '/',
        method: 'GET',
        headers: {},
        connections: 50,
        pipelining: 1,
        http2: false,
        grpc: false,
      },
    ]);
  });

  it('treats empty strings (unset Action inputs) as defaults', () => {
    const s = fromInputs({ start: 'x', rate: '', duration: '', headers: '' });
    expect(s.duration).toBe(5);
    expect(s.scenarios[0]?.rate).toBeUndefined();
  });

  it('an SLO with no budget set gets one that holds six pairs; a budget set, even short, stays', () => {
    // one pair: 2 × (2 + 5) s × 1.5 + 40 s of capacity searches = 61 s; six in whole minutes
    expect(fromInputs({ start: 'x', slo: 'p99<=50ms', maxTime: '' }).maxTime).toBe(420);
    expect(resolveSettings({ config: { start: 'x', slo: 'p99<=50ms' } }).maxTime).toBe(420);
    // a second scenario without an SLO adds its 21 s: 6 × 82 s
    const two = {
      start: 'x',
      scenarios: [
        { name: 'a', url: '/a', slo: 'p99<=50ms' },
        { name: 'b', url: '/b' },
      ],
    };
    expect(resolveSettings({ config: two }).maxTime).toBe(540);
    // shorter windows, a shorter pair: 2 × (1 + 2) × 1.5 + 40 = 49 s
    expect(
      resolveSettings({ config: { start: 'x', slo: 'p99<=50ms', warmup: 1, duration: 2 } }).maxTime,
    ).toBe(300);
    expect(resolveSettings({ config: { start: 'x', slo: 'p99<=50ms', maxTime: 120 } }).maxTime).toBe(120);
    expect(fromInputs({ start: 'x', slo: 'p99<=50ms', maxTime: '90' }).maxTime).toBe(90);
    expect(resolveSettings({ config: { start: 'x' } }).maxTime).toBe(180);
  });

  it('parses durations, headers, booleans and percentages from text', () => {
    const s = fromInputs({
      start: 'x',
      headers: 'Authorization: Bearer t\nX-Id:  42 ',
      failOnRegression: 'true',
      threshold: '7.5',
      rate: '200',
      duration: '500ms',
      warmup: '2m',
      url: 'http://127.0.0.1:$PORT/x',
    });
    expect(s.scenarios[0]).toMatchObject({ headers: { Authorization: 'Bearer t', 'X-Id': '42' }, rate: 200 });
    expect(s).toMatchObject({ failOnRegression: true, threshold: 7.5, duration: 0.5, warmup: 120 });
  });

  it.each([
    ['10', 10],
    ['10s', 10],
    ['500ms', 0.5],
    ['2m', 120],
    [' 1.5 s ', 1.5],
    [3, 3],
    ['ten', undefined],
    ['10 sec', undefined],
    ['-1s', undefined],
  ] as const)('parseDuration(%j) = %j', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each([
    [
      { start: 'x', duration: 'abc' },
      'input',
      /^invalid input "duration": expected a duration such as 10, 10s, 500ms or 2m \(seconds\) > 0 and <= 3600, got "abc"$/,
    ],
    [{ start: 'x', duration: '3000000' }, 'flag', /^invalid --duration: .*<= 3600, got "3000000"$/],
    [{ start: 'x', connections: '0' }, 'input', /input "connections".*>= 1 .*got "0"/],
    [
      { start: 'x', rounds: '2.5' },
      'flag',
      /^invalid --rounds: expected auto or a whole number >= 1 and <= 1000, got "2.5"$/,
    ],
    [
      { start: 'x', metrics: 'p99,p95' },
      'flag',
      /^invalid --metrics: expected a comma-separated list of requestsPerSecond, .*got "p99,p95"$/,
    ],
    [{ start: 'x', profiler: 'perf' }, 'flag', /--profiler: expected cpuprofile, prof, none, got "perf"/],
    [
      { start: 'x', failOnRegression: 'maybe' },
      'input',
      /input "fail-on-regression": expected true or false, got "maybe"/,
    ],
    [
      { start: 'x', headers: 'no colon here' },
      'input',
      /input "headers": expected "Name: value" \(or name=value\) lines/,
    ],
    [{ start: 'x', url: 'api/items' }, 'input', /input "url": expected a path starting with "\/"/],
    [
      { start: 'x', cwd: 'a', hotThreshold: '101' },
      'input',
      /input "hot-threshold": expected percentage points/,
    ],
  ] as const)('rejects %j with one readable line', (raw, source, message) => {
    const err = failure(() => resolveSettings({ overrides: raw, overridesSource: source }));
    expect(err.code).toBe('HP_COMPARE_INVALID_SETTING');
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain('\n');
  });

  it('lets flags win over the config and the config over the defaults; scenarios inherit the top-level load', () => {
    const s = resolveSettings({
      config: {
        start: 'node a.js',
        connections: 20,
        duration: '4s',
        headers: { 'x-api': '1' },
        scenarios: [
          { name: 'list', url: '/items' },
          { name: 'create', url: '/items', method: 'post', body: '{}', connections: 5 },
          { name: 'mixed', requests: [{ path: '/a' }, { method: 'DELETE', path: '/b' }] },
        ],
      },
      overrides: { duration: '2' },
    });
    expect(s.duration).toBe(2);
    expect(s.scenarios.map((x) => [x.name, x.method, x.url, x.connections, x.body])).toEqual([
      ['list', 'GET', '/items', 20, undefined],
      ['create', 'POST', '/items', 5, '{}'],
      ['mixed', 'GET', '/', 20, undefined],
    ]);
    expect(s.scenarios[0]?.headers).toEqual({ 'x-api': '1' });
    expect(s.scenarios[2]?.requests).toEqual([{ path: '/a' }, { method: 'DELETE', path: '/b' }]);
  });

  it.each([
    [{ conections: 5 }, /unknown setting "conections"/],
    [{ scenarios: [{ name: 'a', url: '/a', wat: 1 }] }, /unknown setting "scenarios\[0\]\.wat"/],
    [{ scenarios: [{ url: '/a' }] }, /invalid "scenarios\[0\]\.name"/],
    [{ scenarios: [{ name: 'a', url: 'nope' }] }, /invalid "scenarios\[0\]\.url": expected a path/],
    [{ scenarios: [{ name: 'a' }, { name: 'a' }] }, /the name "a" is used twice/],
    [{ scenarios: [] }, /at least one scenario/],
    [{ duration: true }, /invalid "duration": expected a duration/],
    [{ scenarios: [{ name: 'a', requests: [{ path: 'x' }] }] }, /scenarios\[0\]\.requests\[0\]\.path/],
  ])('names the bad config value: %j', (config, message) => {
    const err = failure(() => resolveSettings({ config, configName: 'hotpath.config.json' }));
    expect(err.message).toMatch(message);
    expect(err.message).toContain('hotpath.config.json');
  });
});

describe('config files', () => {
  it('loads .json and .mjs (default export, or a function returning it) and says what is wrong with a bad one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hotpath-config-'));
    try {
      writeFileSync(join(dir, 'a.json'), JSON.stringify({ start: 'node s.js' }));
      writeFileSync(join(dir, 'b.mjs'), "export default async () => ({ start: 'node m.js' });");
      writeFileSync(join(dir, 'c.json'), '{ nope');
      expect((await loadConfig(join(dir, 'a.json'))).config).toEqual({ start: 'node s.js' });
      expect((await loadConfig(join(dir, 'b.mjs'))).config).toEqual({ start: 'node m.js' });
      await expect(loadConfig(join(dir, 'c.json'))).rejects.toThrow(/c\.json is not valid JSON/);
      await expect(loadConfig(join(dir, 'missing.json'))).rejects.toThrow(/does not exist/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the committed JSON Schema is the one the table gives', () => {
    const committed = JSON.parse(
      readFileSync(new URL('../hotpath.config.schema.json', import.meta.url), 'utf8'),
    );
    expect(committed).toEqual(configJsonSchema());
  });
});

describe('the CLI flags come from the same table', () => {
  it('has a flag and a --help line for every setting with a flag, with the shared short forms', () => {
    const help = usage();
    for (const spec of SETTINGS as readonly SettingSpec[]) {
      const flag = flagOf(spec);
      if (flag) expect(help).toContain(`--${flag}`);
    }
    const shorts = Object.fromEntries(
      (SETTINGS as readonly SettingSpec[]).filter((s) => s.short).map((s) => [s.short, s.key]),
    );
    expect(shorts).toMatchObject({
      c: 'connections',
      d: 'duration',
      p: 'pipelining',
      R: 'rate',
      m: 'method',
      H: 'headers',
      b: 'body',
      W: 'warmup',
    });
  });

  it('parses short forms and repeated headers', () => {
    const parsed = parseCommandLine([
      'compare',
      '-c',
      '5',
      '-d',
      '2s',
      '-W',
      '0',
      '-H',
      'a: 1',
      '-H',
      'b: 2',
      '--fail-on-regression',
    ]);
    expect(parsed.overrides).toEqual({
      connections: '5',
      duration: '2s',
      warmup: '0',
      headers: ['a: 1', 'b: 2'],
      failOnRegression: true,
    });
    const s = fromFlags({ start: 'x', ...parsed.overrides });
    expect(s.scenarios[0]?.headers).toEqual({ a: '1', b: '2' });
  });

  it.each([
    [['compare', '--foo'], 'unknown option --foo (see --help)'],
    [['compare', '-Z'], 'unknown option -Z (see --help)'],
    [['compare', '--rounds'], 'option --rounds needs a value (see --help)'],
    [['compare', 'extra'], 'unexpected argument "extra" (see --help)'],
    [
      ['bench'],
      'unknown command "bench": expected compare, profile, report, drift, history, bisect, schema or init (see --help)',
    ],
  ])('%j → one line', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(message);
  });
});

describe('the README documents every setting', () => {
  it('has a row per setting of the table (node scripts/readme-settings.mjs rewrites it)', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const spec of SETTINGS as readonly SettingSpec[]) expect(readme).toContain(`| \`${spec.key}\``);
  });
});
