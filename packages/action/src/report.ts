import { cpus } from 'node:os';
import type { Measurements } from './compare.js';
import { type Diagnosis, diagnose } from './diagnosis.js';
import type { Side } from './errors.js';
import { functionLabel } from './format.js';
import { diffHotFunctions, type HotFunctionDiff } from './hot-functions.js';
import type { Settings } from './options.js';
import { merge, type Profile } from './profiles.js';
import type { RoundResult } from './round.js';
import { judgeMetrics, type MetricVerdict, type RoundMetrics } from './verdict.js';

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
  /** Absolute path of head's checkout root: profile paths below it become links. */
  root: string;
}

export interface SideInfo {
  /** What was run: the start command, and ref/sha when known. */
  command: string;
  cwd: string;
  ref?: string;
  sha?: string;
}

export interface Report {
  schema: 'hotpath-report/1';
  regressed: boolean;
  improved: boolean;
  /** One line: the verdict. */
  summary: string;
  metrics: MetricVerdict[];
  /** Relative change of requests per second, head vs base. */
  throughputChange: number;
  hotFunctions?: HotFunctionDiff;
  diagnosis: Diagnosis;
  rounds: RoundRow[];
  order: Side[];
  sides: { base: SideInfo; head: SideInfo };
  settings: Omit<Settings, 'headers' | 'body'> & { headers: string[]; body: boolean };
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

export function roundMetrics(round: RoundResult): RoundMetrics {
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

function roundRow(round: RoundResult): RoundRow {
  return {
    side: round.side,
    round: round.round,
    ...roundMetrics(round),
    requests: round.load.requests.total,
    errors: round.load.errors,
    non2xx: round.load.non2xx,
    profilers: [...new Set(round.profilers)],
  };
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

/** The one-line verdict. */
export function summarise(metrics: readonly MetricVerdict[], hot?: HotFunctionDiff): string {
  const regressed = metrics.filter((m) => m.status === 'regressed');
  const improved = metrics.filter((m) => m.status === 'improved');
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
  if (improved.length > 0) return `Improvement: ${describe(improved)}${hotText}`;
  return `No significant change beyond the threshold${hotText}`;
}

export interface AnalyseOptions {
  settings: Settings;
  sides: { base: SideInfo; head: SideInfo };
  links?: SourceLinks;
  warnings?: string[];
}

/** Turns raw measurements into the report model: statistics, hot functions, diagnosis. Pure. */
export function analyse(measurements: Measurements, options: AnalyseOptions): Report {
  const { settings } = options;
  const baseMetrics = measurements.base.map(roundMetrics);
  const headMetrics = measurements.head.map(roundMetrics);
  const metrics = judgeMetrics(baseMetrics, headMetrics, settings.threshold);
  const profileOf = (rounds: RoundResult[]) =>
    merge(rounds.flatMap((r) => (r.profile ? [r.profile] : [])) as Profile[]);
  const baseProfile = profileOf(measurements.base);
  const headProfile = profileOf(measurements.head);
  const hotFunctions =
    baseProfile && headProfile
      ? diffHotFunctions(baseProfile, headProfile, settings.hotThreshold)
      : undefined;
  const diagnosis = diagnose(
    measurements.base.flatMap((r) => r.monitors),
    measurements.head.flatMap((r) => r.monitors),
  );
  const throughput = metrics.find((m) => m.metric === 'requestsPerSecond')!;
  const rounds = measurements.order.map((side, i) => {
    const index = measurements.order.slice(0, i).filter((s) => s === side).length;
    return roundRow(measurements[side][index]);
  });
  const warnings = [
    ...(options.warnings ?? []),
    ...measurements.base.flatMap((r) => r.warnings),
    ...measurements.head.flatMap((r) => r.warnings),
  ];
  if (settings.rounds < 2)
    warnings.push('rounds = 1: no confidence interval can be computed, nothing is flagged');
  if (!hotFunctions && settings.profiler !== 'none')
    warnings.push('no CPU profile on one side: no hot-function diff');
  const { headers, body, ...rest } = settings;
  return {
    schema: 'hotpath-report/1',
    regressed: metrics.some((m) => m.status === 'regressed'),
    improved: metrics.some((m) => m.status === 'improved'),
    summary: summarise(metrics, hotFunctions),
    metrics,
    throughputChange: throughput.change,
    hotFunctions,
    diagnosis,
    rounds,
    order: measurements.order,
    sides: options.sides,
    settings: { ...rest, headers: Object.keys(headers), body: body !== undefined },
    environment: {
      node: process.version,
      serverNode: [...measurements.head, ...measurements.base].find((r) => r.serverNode)?.serverNode,
      platform: `${process.platform} ${process.arch}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      profilers: {
        base: [...new Set(measurements.base.flatMap((r) => r.profilers))],
        head: [...new Set(measurements.head.flatMap((r) => r.profilers))],
      },
    },
    links: options.links,
    warnings: [...new Set(warnings)],
    startedAt: measurements.startedAt,
    finishedAt: measurements.finishedAt,
  };
}

/** Merged profile of each side, for folded stacks and flame graphs. */
export function sideProfiles(measurements: Measurements): { base?: Profile; head?: Profile } {
  const of = (rounds: RoundResult[]) => merge(rounds.flatMap((r) => (r.profile ? [r.profile] : [])));
  return { base: of(measurements.base), head: of(measurements.head) };
}
