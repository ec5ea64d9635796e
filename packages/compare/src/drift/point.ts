// One drift run's report → one history point: per scenario and metric the change vs the
// reference, its interval, the standard error the change-point method weighs it by, the
// detectable change and outcome when the report has them, and the functions that grew most.
import { randomUUID } from 'node:crypto';
import { type MetricVerdict, OUTCOMES, type Report } from '../model.js';
import { changesByDifference } from '../settings/metrics.js';
import { FAMILY_ALPHA, familyTests } from '../verdict/policy.js';
import { tQuantile } from '../verdict/statistics.js';
import { type GrownFunction, type HistoryPoint, MAX_FUNCTIONS, type MetricPoint } from './history.js';

/**
 * The scale the method works on: log1p for relative changes, the change itself for a rate's
 * points (errorRate) and an amount's bytes (retained bytes per request).
 */
export const analysisValue = (metric: string, change: number): number =>
  changesByDifference(metric) ? change : Math.log1p(change);

/** Fields the verdict may add (outcome, detectable change); read when present. */
type VerdictExtras = { outcome?: unknown; detectable?: unknown };

function metricPoint(m: MetricVerdict, alpha: number, scenarioPairs: number): MetricPoint | undefined {
  const pairs = Number.isInteger(m.pairs) ? m.pairs : scenarioPairs;
  const ci = m.ci;
  if (!ci || !Number.isFinite(m.change) || !Number.isFinite(ci[0]) || !Number.isFinite(ci[1]))
    return undefined;
  if (!changesByDifference(m.metric) && (ci[0] <= -1 || m.change <= -1)) return undefined;
  if (!(pairs >= 2)) return undefined;
  const lo = analysisValue(m.metric, ci[0]);
  const hi = analysisValue(m.metric, ci[1]);
  const se = (hi - lo) / 2 / tQuantile(1 - alpha / 2, pairs - 1);
  if (!Number.isFinite(se)) return undefined;
  const extras = m as MetricVerdict & VerdictExtras;
  const outcome = OUTCOMES.find((o) => o === extras.outcome);
  const detectable =
    typeof extras.detectable === 'number' && Number.isFinite(extras.detectable) && extras.detectable >= 0
      ? extras.detectable
      : undefined;
  return {
    metric: m.metric,
    better: m.better,
    change: m.change,
    ci: [ci[0], ci[1]],
    se,
    pairs,
    ...(detectable === undefined ? {} : { detectable }),
    ...(outcome ? { outcome } : {}),
    inVerdict: m.inVerdict,
    ...(typeof m.margin === 'number' && Number.isFinite(m.margin) && m.margin >= 0
      ? { margin: m.margin }
      : {}),
  };
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The point of a drift run: head (the report's head) against the reference (its base). */
export function pointFromReport(report: Report, options: { date?: Date; id?: string } = {}): HistoryPoint {
  const commit = report.sides.head.sha;
  if (!commit)
    throw new TypeError('a drift point needs the head commit (the report of a comparison of git refs)');
  // The level the report's intervals were made at (Bonferroni over its tests).
  const tests = familyTests(
    report.scenarios.reduce((n, s) => n + s.metrics.filter((m) => m.inVerdict).length, 0),
    1,
  );
  const alpha = Number.isFinite(report.statistics?.alpha) ? report.statistics.alpha : FAMILY_ALPHA / tests;
  return {
    id: options.id ?? randomUUID(),
    commit,
    date: (options.date ?? new Date(report.finishedAt || Date.now())).toISOString(),
    threshold: report.settings.threshold,
    scenarios: report.scenarios.map((s) => ({
      name: clip(s.name, 200),
      metrics: s.metrics.flatMap((m) => metricPoint(m, alpha, s.pairs) ?? []),
      functions: (s.hotFunctions?.rows ?? [])
        .filter((f) => f.delta > 0)
        .sort((a, b) => b.delta - a.delta)
        .slice(0, MAX_FUNCTIONS)
        .map(
          (f): GrownFunction => ({
            name: clip(f.name, 300),
            file: clip(f.file, 300),
            line: Math.max(0, Math.trunc(f.line)),
            delta: f.delta,
            ...(f.significant === undefined ? {} : { significant: f.significant }),
          }),
        ),
    })),
  };
}
