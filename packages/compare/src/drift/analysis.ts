// A drift series, analysed: per scenario and metric the points, the steps the change-point method
// found (as commit ranges), the current level against the reference, and whether the drift
// exceeds the threshold in the worse direction. Pure.

import { changesByDifference, metricSpec } from '../settings/metrics.js';
import { settingDefault } from '../settings/table.js';
import { MIN_POINTS_CHANGE } from '../verdict/judge.js';
import { DEFAULT_THRESHOLD, FAMILY_ALPHA, familyTests, thresholdFraction } from '../verdict/policy.js';
import { tQuantile } from '../verdict/statistics.js';
import { type ChangePointOptions, findChangePoints } from './change-points.js';
import type { GrownFunction, HistoryPoint, HistorySeries, MetricPoint } from './history.js';
import { analysisValue } from './point.js';

const fromAnalysis = (metric: string, value: number) =>
  changesByDifference(metric) ? value : Math.expm1(value);

export interface TrendPoint {
  commit: string;
  date: string;
  change: number;
  ci: [number, number];
  detectable?: number;
}

/** A step: the first commit at the new level is in (after, upTo] (git range after..upTo). */
export interface DriftStep {
  /** The last commit surely before the step (the reference's sha for the first points). */
  after: string;
  /** The last commit that may be the first one at the new level. */
  upTo: string;
  /** Change of the level (relative, or absolute for errorRate), with a 95 % interval. */
  change: number;
  ci: [number, number];
}

export interface MetricTrend {
  scenario: string;
  metric: string;
  better: 'higher' | 'lower';
  inVerdict: boolean;
  points: TrendPoint[];
  steps: DriftStep[];
  /**
   * The level of the last segment (what the series says now), with its interval at level
   * 1 − 0.05 / (in-verdict metrics × scenarios).
   */
  current?: { change: number; ci: [number, number]; since: string };
  /** The drift is beyond the threshold in the worse direction, and its interval excludes zero. */
  exceeded: boolean;
  /** Surely beyond: the level's whole interval is beyond the threshold in the worse direction. */
  sure: boolean;
  /**
   * Likely beyond: beyond the threshold with one-sided OPEN_CONFIDENCE (the bound of the level's
   * one-sided interval nearest zero is beyond it). What a drift must also be to open the issue.
   */
  likely: boolean;
  /** The whole interval of the level is within the threshold (what closes the drift issue). */
  within: boolean;
}

export type DriftStatus = 'beyond' | 'unresolved' | 'within';

export interface DriftAnalysis {
  reference: HistorySeries['reference'];
  /** Threshold used (percent). */
  threshold: number;
  trends: MetricTrend[];
  /** The in-verdict trends that exceed the threshold, the surest first (interval bound nearest zero). */
  exceeded: MetricTrend[];
  /**
   * The drift is confirmed: a metric is likely beyond the threshold now and also exceeded it after
   * one of the two runs before, or one is surely beyond it. What opens the drift issue: a level that
   * passes the threshold on one run's noise, or whose interval still reaches well below it, waits.
   */
  confirmed: boolean;
  /**
   * The in-verdict trends not shown beyond the threshold whose level's interval still reaches
   * beyond it in the worse direction, the farthest-reaching first: a drift that size is not ruled
   * out (the runs were too noisy, or too few, to tell).
   */
  unresolved: MetricTrend[];
  /**
   * What the series says now: `beyond` (some metric exceeds the threshold), `unresolved` (none does,
   * but not every level is within it), or `within` (every level's interval is within it).
   */
  status: DriftStatus;
  /** The latest point (its commit and grown functions). */
  latest?: HistoryPoint;
}

function worseBeyond(
  metric: MetricPoint['metric'],
  better: 'higher' | 'lower',
  change: number,
  threshold: number,
  amountMargin: number,
) {
  const worse = better === 'higher' ? -change : change;
  // A rate (errors): at least 1 percentage point, as in the PR verdict; retained bytes: the
  // largest margin its runs had (at least the default retainedThreshold).
  const scale = metricSpec(metric)?.scale;
  const limit =
    scale === 'points'
      ? MIN_POINTS_CHANGE
      : scale === 'absolute' || scale === 'count'
        ? amountMargin
        : thresholdFraction(threshold);
  return worse > limit;
}

function excludesZero(ci: [number, number]) {
  return ci[0] > 0 || ci[1] < 0;
}

/** A segment's level: its start, its weighted mean and interval (and standard error when weighed). */
type Level = { start: number; level: number; ci: [number, number]; se?: number };

/** The level now: the last segment's points, without the reference's own zero. */
function levelNow(
  values: readonly { value: number; se: number }[],
  result: { segments: readonly { start: number; end: number }[]; inflation: number },
  z: number,
): Level | undefined {
  const segmentEnd = result.segments.at(-1);
  if (!segmentEnd) return undefined;
  let w = 0;
  let sum = 0;
  for (let i = Math.max(1, segmentEnd.start); i < segmentEnd.end; i++) {
    const v = values[i];
    if (!v || !(v.se > 0)) continue;
    const weight = 1 / (v.se * v.se * result.inflation);
    w += weight;
    sum += weight * v.value;
  }
  if (w > 0) {
    const level = sum / w;
    const half = z / Math.sqrt(w);
    return { start: segmentEnd.start, level, ci: [level - half, level + half], se: 1 / Math.sqrt(w) };
  }
  if (segmentEnd.end > 1) {
    // Every point measured without spread (an error rate of zero in every round): the level is
    // what they measured, exactly.
    const measured = values.slice(Math.max(1, segmentEnd.start), segmentEnd.end).map((v) => v.value);
    const level = measured.reduce((x, y) => x + y, 0) / measured.length;
    return { start: segmentEnd.start, level, ci: [Math.min(...measured), Math.max(...measured)] };
  }
  return undefined;
}

/** A metric's points in a series, with the run each came from. */
function rowsOf(series: HistorySeries, scenario: string, metric: string) {
  const rows: { point: HistoryPoint; m: MetricPoint }[] = [];
  for (const point of series.points) {
    const m = point.scenarios.find((s) => s.name === scenario)?.metrics.find((x) => x.metric === metric);
    if (m) rows.push({ point, m });
  }
  return rows;
}

const trendPoint = ({ point, m }: { point: HistoryPoint; m: MetricPoint }): TrendPoint => ({
  commit: point.commit,
  date: point.date,
  change: m.change,
  ci: m.ci,
  ...(m.detectable === undefined ? {} : { detectable: m.detectable }),
});

function trendOf(
  series: HistorySeries,
  scenario: string,
  metric: MetricPoint,
  threshold: number,
  options: ChangePointOptions,
  z: number,
): MetricTrend {
  const rows = rowsOf(series, scenario, metric.metric);
  const points = rows.map(trendPoint);
  // Index 0 is the reference itself: head = reference is a change of exactly zero, given the
  // precision of the series' best point, so a step at the first commit after the tag is found too.
  // A standard error estimated from few pairs is itself uncertain: the standardised change is
  // Student's t, whose variance is df / (df − 2); the method weighs points by that wider spread.
  const spread = (pairs: number) => (pairs - 1 > 2 ? Math.sqrt((pairs - 1) / (pairs - 3)) : 3);
  const own = rows.map(({ m }) => m.se * spread(m.pairs));
  const floor = Math.min(...own.filter((se) => se > 0), Number.POSITIVE_INFINITY);
  const values = [
    { value: 0, se: Number.isFinite(floor) ? floor : 0 },
    ...rows.map(({ m }, i) => ({ value: analysisValue(m.metric, m.change), se: own[i] ?? m.se })),
  ];
  const commitAt = (i: number) => (i <= 0 ? series.reference.sha : (rows[i - 1]?.point.commit ?? ''));
  const result = rows.length
    ? findChangePoints(values, options)
    : { changePoints: [], segments: [], inflation: 1 };
  const steps: DriftStep[] = result.changePoints.map((c) => ({
    after: commitAt(c.first - 1),
    upTo: commitAt(c.last),
    change: fromAnalysis(metric.metric, c.step),
    ci: [fromAnalysis(metric.metric, c.ci[0]), fromAnalysis(metric.metric, c.ci[1])],
  }));
  const toRelative = (s: { level: number; ci: [number, number] }) => ({
    change: fromAnalysis(metric.metric, s.level),
    ci: [fromAnalysis(metric.metric, s.ci[0]), fromAnalysis(metric.metric, s.ci[1])] as [number, number],
  });
  const last = levelNow(values, result, z);
  let current: MetricTrend['current'];
  let exceeded = false;
  let sure = false;
  let likely = false;
  let within = rows.length === 0;
  // An amount's margin (retained bytes) grows when a run served few requests: the largest a run had.
  const amountMargin = Math.max(
    Number(settingDefault('retainedThreshold')),
    ...rows.map((r) => r.m.margin ?? 0),
  );
  const beyond = (value: number) => worseBeyond(metric.metric, metric.better, value, threshold, amountMargin);
  if (last && rows.length) {
    const level = toRelative(last);
    exceeded = beyond(level.change) && excludesZero(level.ci);
    within = !level.ci.some(beyond);
    sure = level.ci.every(beyond);
    // Since when: the earliest of the trailing segments that are all beyond the threshold.
    let since = last.start;
    for (let i = result.segments.length - 2; i >= 0 && exceeded; i--) {
      const s = result.segments[i];
      if (!s || !beyond(toRelative(s).change)) break;
      since = s.start;
    }
    current = { ...level, since: commitAt(Math.max(1, since)) };
    if (last.se === undefined) likely = sure;
    else {
      const half = LIKELY_Z * last.se;
      likely = toRelative({ level: last.level, ci: [last.level - half, last.level + half] }).ci.every(beyond);
    }
  }
  return {
    scenario,
    metric: metric.metric,
    better: metric.better,
    inVerdict: metric.inVerdict,
    points,
    steps,
    current,
    exceeded: exceeded && metric.inVerdict,
    sure: exceeded && sure && metric.inVerdict,
    likely: exceeded && likely && metric.inVerdict,
    within: within || !metric.inVerdict,
  };
}

/**
 * A drift beyond the threshold is confirmed when the same metric exceeded it after 2 of the last
 * CONFIRM_WITHIN runs (this one among them) and is now beyond it with OPEN_CONFIDENCE. Two in a row
 * would let a level that hovers at the threshold on a noisy runner (beyond, within, beyond…) wait
 * for ever; one alone opens issues on one run's noise.
 */
export const CONFIRM_WITHIN = 3;

/**
 * How sure (one-sided) a level must be beyond the threshold to open the drift issue. A level
 * whose point estimate is beyond it is a coin flip when the true drift sits at the threshold, and
 * persistence alone does not change that: successive levels pool the same runs. A noisy metric
 * (p50, whose per-run standard error is about 3× CPU per request's) otherwise opens the issue on a
 * drift just short of the threshold (bench/drift.mjs --bootstrap: 27 of 200 resampled staircases
 * opened it at a true 3 %; 5 of 200 with this bound).
 */
export const OPEN_CONFIDENCE = 0.9;
const LIKELY_Z = tQuantile(OPEN_CONFIDENCE, 1e6);

/**
 * Analyses one series: `threshold` in percent (default: the latest point's). Trends follow the
 * scenarios and metrics of the latest point. `confirmed` also reads the analyses after the two
 * runs before.
 */
export function analyseSeries(
  series: HistorySeries,
  options: ChangePointOptions & { threshold?: number } = {},
): DriftAnalysis {
  const now = analyseNow(series, options);
  const key = (t: MetricTrend) => `${t.scenario}\u0000${t.metric}`;
  let confirmed = now.exceeded.some((t) => t.sure);
  const likely = now.exceeded.filter((t) => t.likely);
  // the analyses after the runs before (at most CONFIRM_WITHIN − 1 back), at this run's threshold
  for (let back = 1; !confirmed && likely.length > 0 && back < CONFIRM_WITHIN; back++) {
    if (series.points.length <= back) break;
    const before = analyseNow(
      { ...series, points: series.points.slice(0, -back) },
      { ...options, threshold: now.threshold },
    );
    const then = new Set(before.exceeded.map(key));
    confirmed = likely.some((t) => then.has(key(t)));
  }
  return { ...now, confirmed };
}

function analyseNow(
  series: HistorySeries,
  options: ChangePointOptions & { threshold?: number },
): Omit<DriftAnalysis, 'confirmed'> {
  const latest = series.points.at(-1);
  const threshold = options.threshold ?? latest?.threshold ?? DEFAULT_THRESHOLD;
  // The levels of every in-verdict metric of every scenario are one family of tests, as in a
  // pull request's verdict: each level's interval is at 1 − 0.05 / tests (Bonferroni).
  const tests = familyTests(
    (latest?.scenarios ?? []).reduce((n, s) => n + s.metrics.filter((m) => m.inVerdict).length, 0),
    1,
  );
  const z = tQuantile(1 - FAMILY_ALPHA / 2 / tests, 1e6);
  const trends = (latest?.scenarios ?? []).flatMap((s) =>
    s.metrics.map((m) => trendOf(series, s.name, m, threshold, options, z)),
  );
  // A bound of the level's interval, as a change in the worse direction: the one nearest zero
  // (what is certain: exceeded trends, worst first) or the far one (how far an unresolved one reaches).
  const worse = (t: MetricTrend, bound: 'near' | 'far') => {
    const [lo, hi] = t.current?.ci ?? [0, 0];
    if (t.better === 'higher') return -(bound === 'near' ? hi : lo);
    return bound === 'near' ? lo : hi;
  };
  const exceeded = trends.filter((t) => t.exceeded).sort((a, b) => worse(b, 'near') - worse(a, 'near'));
  const unresolved = trends
    .filter((t) => t.inVerdict && t.current && !t.exceeded && !t.within)
    .sort((a, b) => worse(b, 'far') - worse(a, 'far'));
  return {
    reference: series.reference,
    threshold,
    trends,
    exceeded,
    unresolved,
    status: exceeded.length > 0 ? 'beyond' : unresolved.length > 0 ? 'unresolved' : 'within',
    latest,
  };
}

/** The functions that grew most in the latest run, for a scenario. */
export function grownFunctions(analysis: DriftAnalysis, scenario: string): GrownFunction[] {
  return analysis.latest?.scenarios.find((s) => s.name === scenario)?.functions ?? [];
}
