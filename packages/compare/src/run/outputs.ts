// What a run hands its front door to publish besides the report: the outputs (the Action's step
// outputs, by name; the CLI prints none) and the fail decision.
import type { DriftAnalysis } from '../drift/analysis.js';
import type { Report } from '../model.js';
import type { FailDecision, WrittenFiles } from '../run-artifacts.js';

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
 * The `throughput-change` output: the lowest change of requests/s over the scenarios, in percent;
 * empty when a scenario's requests/s has no round pair to tell it from (every pair spoiled by
 * other load on the machine), where the report's 0 would read as "unchanged".
 */
export function throughputOutput(report: Pick<Report, 'scenarios' | 'throughputChange'>): string {
  const unmeasured = report.scenarios.some((s) => {
    const rps = s.metrics.find((m) => m.metric === 'requestsPerSecond');
    return !rps || rps.pairs === 0;
  });
  return unmeasured ? '' : (report.throughputChange * 100).toFixed(2);
}

/**
 * The highest change of a memory metric over the scenarios (the worst: more bytes is worse), as
 * text in `digits`: retained bytes per request in bytes, allocated bytes in percent; empty when a
 * scenario lacks it (no memory edges, or no round pair).
 */
export function memoryOutput(
  report: Pick<Report, 'scenarios'>,
  metric: 'retainedBytesPerRequest' | 'allocatedBytesPerRequest',
): string {
  const changes = report.scenarios.map((s) => s.metrics.find((m) => m.metric === metric));
  if (changes.length === 0 || changes.some((m) => !m || m.pairs === 0 || !Number.isFinite(m.change)))
    return '';
  const worst = Math.max(...changes.map((m) => m?.change ?? Number.NaN));
  return metric === 'retainedBytesPerRequest' ? worst.toFixed(1) : (worst * 100).toFixed(2);
}

/**
 * The `capacity-change` output: the lowest change of capacity at the SLO over the scenarios with an
 * `slo`, in percent; empty when none has one, or when one has no round pair to tell it from.
 */
export function capacityOutput(report: Pick<Report, 'scenarios'>): string {
  const changes = report.scenarios.flatMap((s) => s.metrics.filter((m) => m.metric === 'capacity'));
  if (changes.length === 0 || changes.some((m) => m.pairs === 0 || !Number.isFinite(m.change))) return '';
  return (Math.min(...changes.map((m) => m.change)) * 100).toFixed(2);
}

/** The outputs of a comparison's report. */
export function reportOutputs(report: Report, files: Pick<WrittenFiles, 'report'>): RunOutputs {
  return {
    verdict: report.outcome,
    regressed: String(report.regressed),
    'throughput-change': throughputOutput(report),
    'retained-change': memoryOutput(report, 'retainedBytesPerRequest'),
    'allocated-change': memoryOutput(report, 'allocatedBytesPerRequest'),
    'capacity-change': capacityOutput(report),
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
  };
}
