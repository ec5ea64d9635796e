// What a run hands its front door to publish besides the report: the outputs (the Action's step
// outputs, by name; the CLI prints none) and the fail decision.
import type { DriftAnalysis } from '../drift/analysis.js';
import type { Report } from '../model.js';
import type { FailDecision, WrittenFiles } from '../run-artifacts.js';
import {
  METRICS,
  type MetricDeclaration,
  type MetricName,
  type MetricOutput,
  type MetricSpec,
  metricSpec,
} from '../settings/metrics.js';

/** Step outputs by name, as strings (GitHub's outputs are text). */
export type RunOutputs = Record<string, string>;

/** What every run that ends in a report returns. */
export interface RunResult {
  report: Report;
  files: WrittenFiles;
  /** Entries an earlier hotpath run left in the output folder and this one removed. */
  removed: string[];
  outputs: RunOutputs;
  failed: FailDecision;
}

/**
 * A metric's output (its catalogue entry's `output`): its worst change over the scenarios that
 * have the metric — in percent, or in the metric's unit (retained bytes per request in bytes) —
 * as text; empty when none has it, or when one has no round pair to tell it from (every pair
 * spoiled by other load, no memory edges), where a number would read as "unchanged".
 */
export function metricOutput(report: Pick<Report, 'scenarios'>, metric: MetricName): string {
  const spec: MetricDeclaration | undefined = metricSpec(metric);
  const changes = report.scenarios.flatMap((s) => s.metrics.filter((m) => m.metric === metric));
  if (changes.length === 0 || changes.some((m) => m.pairs === 0 || !Number.isFinite(m.change))) return '';
  const values = changes.map((m) => m.change);
  const highest = spec?.output?.worst === 'highest' || (!spec?.output && spec?.better === 'lower');
  const worst = highest ? Math.max(...values) : Math.min(...values);
  return spec?.output?.in === 'unit' ? worst.toFixed(1) : (worst * 100).toFixed(2);
}

/** The `throughput-change` output (see metricOutput). */
export const throughputOutput = (report: Pick<Report, 'scenarios'>): string =>
  metricOutput(report, 'requestsPerSecond');

/** The catalogue's metrics that give an Action output, in its order. */
export const METRIC_OUTPUTS = METRICS.filter(
  (m): m is MetricSpec & { output: MetricOutput } => 'output' in m,
);

/** The outputs of a comparison's report. */
export function reportOutputs(report: Report, files: Pick<WrittenFiles, 'report'>): RunOutputs {
  return {
    verdict: report.outcome,
    regressed: String(report.regressed),
    ...Object.fromEntries(
      METRIC_OUTPUTS.map((spec) => [spec.output.name, metricOutput(report, spec.metric)]),
    ),
    report: files.report,
    shards: String(report.shards),
  };
}

/** The outputs of a drift run: its report's, and what the trend says now. */
export function driftOutputs(report: Report, files: Pick<WrittenFiles, 'report'>, analysis: DriftAnalysis) {
  return {
    ...reportOutputs(report, files),
    'drift-exceeded': String(analysis.exceeded.length > 0),
    'drift-confirmed': String(analysis.confirmed),
    'drift-status': analysis.status,
    ...driftStepOutputs(analysis),
  };
}

/**
 * The range of the step a bisect should search (`drift-step-good`..`drift-step-bad`): of the
 * confirmed drift's surest metric, its latest step in the worse direction — after its last commit
 * surely before the step, up to the last commit that may be the first at the new level. Empty
 * when the drift is not confirmed or no step was located.
 */
export function driftStepOutputs(analysis: DriftAnalysis): {
  'drift-step-good': string;
  'drift-step-bad': string;
} {
  const worst = analysis.confirmed ? analysis.exceeded[0] : undefined;
  const worse = (worst?.steps ?? []).filter((s) => (worst?.better === 'lower' ? s.change > 0 : s.change < 0));
  const step = worse.at(-1);
  return { 'drift-step-good': step?.after ?? '', 'drift-step-bad': step?.upTo ?? '' };
}
