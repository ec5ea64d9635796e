import { cpus } from 'node:os';
import type { Side } from '../errors.js';
import type { Measurements } from '../measure/measure.js';
import { merge, type Profile } from '../measure/profiles.js';
import type { ScenarioRound } from '../measure/round.js';
import { functionLabel } from '../render/format.js';
import type { Scenario, Settings } from '../settings/schema.js';
import { type Diagnosis, diagnose } from './diagnosis.js';
import { diffHotFunctions, flagOf, type HotFunctionDiff } from './hot-functions.js';
import { pairedDifference, tQuantile } from './statistics.js';
import { judgeMetrics, type MetricVerdict, type RoundMetrics, type RoundPair } from './verdict.js';

export interface RoundRow extends RoundMetrics {
  side: Side;
  round: number;
  requests: number;
  errors: number;
  non2xx: number;
  profilers: string[];
}

/** Where the source links of the report point (head's commit on GitHub). */
export interface SourceLinks {
  /** e.g. https://github.com/owner/repo */
  repositoryUrl: string;
  sha: string;
}

export interface SideInfo {
  /** What was run: the start command, and ref/sha when known. */
  command: string;
  cwd: string;
  ref?: string;
  sha?: string;
}

/** The verdict and details of one scenario. */
export interface ScenarioReport {
  name: string;
  /** What the scenario loads: `GET /path`, or the requests in turn. */
  target: string;
  regressed: boolean;
  improved: boolean;
  /** One line: this scenario's verdict. */
  summary: string;
  /** Base/head round pairs the statistics are built on (all shards). */
  pairs: number;
  metrics: MetricVerdict[];
  /** Relative change of requests per second, head vs base, as a fraction (-0.1 = −10 %). */
  throughputChange: number;
  hotFunctions?: HotFunctionDiff;
  diagnosis: Diagnosis;
  rounds: RoundRow[];
}

/** Settings as the report echoes them: in the table's units, headers by name, body as a flag. */
export type ReportSettings = Omit<Settings, 'scenarios'> & {
  scenarios: (Omit<Scenario, 'headers' | 'body' | 'requests'> & {
    headers: string[];
    body: boolean;
    requests?: number;
  })[];
};

export interface Report {
  schema: 'hotpath-report/2';
  /** Some scenario regressed. */
  regressed: boolean;
  /** Some scenario improved and none regressed. */
  improved: boolean;
  /** One line: the verdict of the run. */
  summary: string;
  scenarios: ScenarioReport[];
  /** The lowest throughput change over the scenarios, as a fraction. */
  throughputChange: number;
  /** How the intervals were made: paired log-ratios, Bonferroni over `tests` at family level 95 %. */
  statistics: { method: 'paired-t'; tests: number; alpha: number; familyLevel: 0.95 };
  /** Shards merged (1 without a matrix) and rounds per side over all shards. */
  shards: number;
  rounds: number;
  order: Side[];
  sides: { base: SideInfo; head: SideInfo };
  settings: ReportSettings;
  environment: {
    /** Node running hotpath itself. */
    node: string;
    /** Node running the servers (from the probe). */
    serverNode?: string;
    platform: string;
    cpus: number;
    cpuModel: string;
    profilers: Record<Side, string[]>;
  };
  links?: SourceLinks;
  warnings: string[];
  startedAt: string;
  finishedAt: string;
}

export function roundMetrics(round: ScenarioRound): RoundMetrics {
  const { load } = round;
  const failed = load.errors + load.non2xx;
  const attempts = load.requests.total + load.errors;
  const cpu = round.monitors.reduce((sum, m) => sum + m.cpuMicros, 0);
  return {
    requestsPerSecond: load.requests.mean,
    p50: load.latency.p50,
    p90: load.latency.p90,
    p99: load.latency.p99,
    errorRate: attempts > 0 ? failed / attempts : 0,
    cpuPerRequest:
      round.monitors.length > 0 && load.requests.total > 0 ? cpu / load.requests.total : Number.NaN,
  };
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

/** The one-line verdict of a scenario. */
export function summarise(
  metrics: readonly MetricVerdict[],
  hot?: HotFunctionDiff,
  functionsRegressed = false,
): string {
  const regressed = metrics.filter((m) => m.inVerdict && m.status === 'regressed');
  const improved = metrics.filter((m) => m.inVerdict && m.status === 'improved');
  const hotNames = (hot?.flagged ?? []).slice(0, 3).map((f) => functionLabel(f));
  const hotText = hotNames.length ? `; hotter: ${hotNames.join(', ')}` : '';
  const describe = (ms: MetricVerdict[]) =>
    ms
      .map(
        (m) =>
          `${m.label} ${m.metric === 'errorRate' ? `${(m.change * 100).toFixed(1)} pts` : pct(m.change)}`,
      )
      .join(', ');
  if (regressed.length > 0) return `Regression: ${describe(regressed)}${hotText}`;
  if (functionsRegressed) return `Regression: hotter functions: ${hotNames.join(', ')}`;
  if (improved.length > 0) return `Improvement: ${describe(improved)}${hotText}`;
  return `No significant change beyond the threshold${hotText}`;
}

/** The one-line verdict of the run over its scenarios. */
export function summariseRun(scenarios: readonly ScenarioReport[]): string {
  if (scenarios.length === 1) return scenarios[0]!.summary;
  const regressed = scenarios.filter((s) => s.regressed);
  const improved = scenarios.filter((s) => s.improved && !s.regressed);
  const names = (list: ScenarioReport[]) => list.map((s) => s.name).join(', ');
  if (regressed.length > 0)
    return `Regression in ${regressed.length} of ${scenarios.length} scenarios: ${names(regressed)}`;
  if (improved.length > 0)
    return `Improvement in ${improved.length} of ${scenarios.length} scenarios: ${names(improved)}`;
  return `No significant change beyond the threshold in ${scenarios.length} scenarios`;
}

export interface AnalyseOptions {
  settings: Settings;
  /** Shards the measurements were merged from. */
  shards?: number;
  sides: { base: SideInfo; head: SideInfo };
  links?: SourceLinks;
  warnings?: string[];
}

function describeTarget(scenario: Scenario): string {
  if (scenario.requests?.length) {
    const first = scenario.requests.map((r) => `${r.method ?? scenario.method} ${r.path ?? scenario.url}`);
    return first.length > 3
      ? `${first.slice(0, 3).join(', ')} … (${first.length} requests in turn)`
      : first.join(', ');
  }
  return `${scenario.method} ${scenario.url}`;
}

/**
 * Base round k of a shard with head round k of the same shard: in the interleaved order B H B H
 * they ran next to each other, so what the machine did in between (drift, a faster runner for a
 * whole shard) cancels in the pair's ratio.
 */
export function roundPairs<T>(
  base: readonly (T & { shard?: number })[],
  head: readonly (T & { shard?: number })[],
): [T, T][] {
  const byShard = (list: readonly (T & { shard?: number })[]) => {
    const map = new Map<number, T[]>();
    for (const r of list) {
      const key = r.shard ?? 0;
      map.set(key, [...(map.get(key) ?? []), r]);
    }
    return map;
  };
  const b = byShard(base);
  const h = byShard(head);
  const pairs: [T, T][] = [];
  for (const [shard, list] of b) {
    const other = h.get(shard) ?? [];
    for (let i = 0; i < Math.min(list.length, other.length); i++) pairs.push([list[i]!, other[i]!]);
  }
  return pairs;
}

/** The rounds of one scenario, in the order they ran. */
function scenarioRounds(measurements: Measurements, name: string): Record<Side, ScenarioRound[]> {
  const pick = (side: Side) =>
    measurements[side].map((r) => {
      const found = r.scenarios.find((s) => s.scenario === name);
      if (!found)
        throw new Error(`round ${side} ${r.round} has no result for scenario ${JSON.stringify(name)}`);
      return found;
    });
  return { base: pick('base'), head: pick('head') };
}

/** Per-pair change of each hot function's self-time share, to tell growth from sampling noise. */
function functionIntervals(
  diff: HotFunctionDiff,
  pairs: [ScenarioRound, ScenarioRound][],
  alpha: number,
): void {
  const share = (r: ScenarioRound, name: string, file: string) => {
    const p = r.profile;
    if (!p || p.totalTicks === 0) return 0;
    let self = 0;
    for (const f of p.functions) if (f.name === name && f.file === file) self += f.self;
    return self / p.totalTicks;
  };
  const candidates = [...new Set([...diff.rows, ...diff.flagged])];
  const tested = candidates.filter((f) => f.reason === 'grew');
  const perTest = tested.length > 0 ? alpha / tested.length : alpha;
  for (const f of candidates) {
    if (pairs.length < 2) continue;
    const d = pairedDifference(
      pairs.map(([b, h]) => share(h, f.name, f.file) - share(b, f.name, f.file)),
      f.reason === 'grew' ? perTest : alpha,
    );
    f.ci = d.ci;
    f.significant = d.ci[0] > 0 || d.ci[1] < 0;
    // Growth past the threshold in the merged profiles is flagged only when the per-pair
    // interval is above zero too: otherwise it is sampling noise, and a report that marks it
    // hotter (🔥, the summary's hot functions) raises a false alarm even while the verdict passes.
    if (f.reason === 'grew' && !(d.ci[0] > 0)) Object.assign(f, flagOf(false, f));
  }
  diff.flagged = diff.flagged.filter((f) => f.flagged);
}

function analyseScenario(
  measurements: Measurements,
  scenario: Scenario,
  settings: Settings,
  alpha: number,
): ScenarioReport {
  const rounds = scenarioRounds(measurements, scenario.name);
  const pairs = roundPairs(rounds.base, rounds.head);
  const metrics = judgeMetrics(
    pairs.map(([b, h]): RoundPair => ({ base: roundMetrics(b), head: roundMetrics(h) })),
    { threshold: settings.threshold / 100, metrics: settings.metrics, alpha },
  );
  const profileOf = (list: ScenarioRound[]) =>
    merge(list.flatMap((r) => (r.profile ? [r.profile] : [])) as Profile[]);
  const baseProfile = profileOf(rounds.base);
  const headProfile = profileOf(rounds.head);
  const hotFunctions =
    baseProfile && headProfile
      ? diffHotFunctions(baseProfile, headProfile, settings.hotThreshold / 100)
      : undefined;
  if (hotFunctions) functionIntervals(hotFunctions, pairs, 0.05 / settings.scenarios.length);
  const metricRegressed = metrics.some((m) => m.inVerdict && m.status === 'regressed');
  const functionRegressed = (hotFunctions?.flagged ?? []).some(
    (f) => f.reason === 'grew' && f.significant === true,
  );
  const regressed =
    settings.failOn === 'metrics'
      ? metricRegressed
      : settings.failOn === 'functions'
        ? functionRegressed
        : metricRegressed || functionRegressed;
  const diagnosis = diagnose(
    rounds.base.flatMap((r) => r.monitors),
    rounds.head.flatMap((r) => r.monitors),
  );
  const throughput = metrics.find((m) => m.metric === 'requestsPerSecond');
  const rows = measurements.order.map((side, i) => {
    const index = measurements.order.slice(0, i).filter((s) => s === side).length;
    const r = rounds[side][index]!;
    return {
      side,
      round: index + 1,
      ...roundMetrics(r),
      requests: r.load.requests.total,
      errors: r.load.errors,
      non2xx: r.load.non2xx,
      profilers: r.profilers,
    };
  });
  return {
    name: scenario.name,
    target: describeTarget(scenario),
    regressed,
    improved: !regressed && metrics.some((m) => m.inVerdict && m.status === 'improved'),
    pairs: pairs.length,
    summary: summarise(metrics, hotFunctions, settings.failOn !== 'metrics' && functionRegressed),
    metrics,
    throughputChange: throughput?.change ?? 0,
    hotFunctions,
    diagnosis,
    rounds: rows,
  };
}

/** Settings as the report shows them (no header values or body: they may hold secrets). */
export function reportSettings(settings: Settings): ReportSettings {
  return {
    ...settings,
    scenarios: settings.scenarios.map(({ headers, body, requests, ...rest }) => ({
      ...rest,
      headers: Object.keys(headers),
      body: body !== undefined,
      ...(requests ? { requests: requests.length } : {}),
    })),
  };
}

/** Turns raw measurements into the report model: statistics, hot functions, diagnosis. Pure. */
export function analyse(measurements: Measurements, options: AnalyseOptions): Report {
  const { settings } = options;
  // One family of tests for the whole run: every verdict metric of every scenario. Each interval
  // is at level 1 − 0.05 / tests (Bonferroni), so an A/A run flags nothing 95 % of the time.
  const tests = Math.max(1, settings.metrics.length * settings.scenarios.length);
  const alpha = 0.05 / tests;
  const scenarios = settings.scenarios.map((s) => analyseScenario(measurements, s, settings, alpha));
  const all = [...measurements.base, ...measurements.head];
  const warnings = [...(options.warnings ?? []), ...all.flatMap((r) => r.warnings)];
  const pairs = Math.min(...scenarios.map((s) => s.pairs));
  if (pairs < 2) warnings.push('fewer than two round pairs: no interval can be computed, nothing is flagged');
  else if (pairs < 5)
    warnings.push(
      `only ${pairs} round pairs for ${tests} tests: each interval spans ±${tQuantile(1 - alpha / 2, pairs - 1).toFixed(1)} standard errors, so only large changes can be flagged; use rounds >= 6 (or more shards)`,
    );
  for (const s of scenarios)
    if (!s.hotFunctions && settings.profiler !== 'none')
      warnings.push(`${s.name}: no CPU profile on one side, so no hot-function diff`);
  const profilers = (side: Side) => [
    ...new Set(measurements[side].flatMap((r) => r.scenarios.flatMap((s) => s.profilers))),
  ];
  const regressed = scenarios.some((s) => s.regressed);
  return {
    schema: 'hotpath-report/2',
    regressed,
    improved: !regressed && scenarios.some((s) => s.improved),
    summary: summariseRun(scenarios),
    scenarios,
    throughputChange: Math.min(...scenarios.map((s) => s.throughputChange)),
    statistics: { method: 'paired-t', tests, alpha, familyLevel: 0.95 },
    shards: options.shards ?? 1,
    rounds: measurements.base.length,
    order: measurements.order,
    sides: options.sides,
    settings: reportSettings(settings),
    environment: {
      node: process.version,
      serverNode: all.find((r) => r.serverNode)?.serverNode,
      platform: `${process.platform} ${process.arch}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      profilers: { base: profilers('base'), head: profilers('head') },
    },
    links: options.links,
    warnings: [...new Set(warnings)],
    startedAt: measurements.startedAt,
    finishedAt: measurements.finishedAt,
  };
}

/** Merged profile of each side for one scenario, for folded stacks and flame graphs. */
export function sideProfiles(
  measurements: Measurements,
  scenario: string,
): { base?: Profile; head?: Profile } {
  const of = (side: Side) =>
    merge(
      measurements[side].flatMap((r) => {
        const s = r.scenarios.find((x) => x.scenario === scenario);
        return s?.profile ? [s.profile] : [];
      }),
    );
  return { base: of('base'), head: of('head') };
}
