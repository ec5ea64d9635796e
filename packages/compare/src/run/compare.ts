// The run layer's comparisons: measure (a shard), compare (measure → report → files) and report
// (shards → report → files), each put together here once. The front doors (the CLI, the Action,
// compare()) read their inputs, call one of these and write what they return.
import { resolve } from 'node:path';
import { type MeasureRuntime, measure } from '../measure/measure.js';
import type { Shard, SourceLinks } from '../model.js';
import { report } from '../report/report.js';
import type { ReportRules } from '../report/shards.js';
import type { Settings } from '../settings/schema.js';
import { readShards, writeShard } from '../shard/file.js';
import { parseShard } from '../shard/id.js';
import { failDecision, verdictPolicy } from '../verdict/policy.js';
import { writeClaimed } from './out-dir.js';
import { type RunResult, reportOutputs } from './outputs.js';
import { writeReport } from './report-files.js';

/** How a comparison is measured: the engine's runtime, with the shard as text ("1/4"). */
export interface MeasureOptions extends Omit<MeasureRuntime, 'shard' | 'autoRounds'> {
  /** This runner's shard, "INDEX/TOTAL" (default "1/1"). */
  shard?: string;
}

export interface MeasureRun {
  shard: Shard;
  /** The folder the shard was written to, when `results` was given. */
  results?: string;
}

/** Measures base and head (a shard); writes it into `results` when given. */
export async function runMeasure(
  settings: Settings,
  options: MeasureOptions & { results?: string },
): Promise<MeasureRun> {
  const { shard: id, results, ...runtime } = options;
  const shard = await measure(settings, { ...runtime, shard: id ? parseShard(id) : undefined });
  return { shard, ...(results ? { results: writeShard(resolve(results), shard) } : {}) };
}

/**
 * Writes a report into `out`, claimed as this run's output folder (what an earlier hotpath run
 * wrote there is replaced), and decides the outputs and the failure.
 */
export function publishReport(result: ReturnType<typeof report>, out: string): RunResult {
  const { written: files, removed } = writeClaimed(resolve(out), (dir) => writeReport(dir, result));
  return {
    report: result,
    files,
    removed,
    outputs: reportOutputs(result, files),
    failed: failDecision(verdictPolicy(result.settings), result.outcome),
  };
}

export interface CompareRunOptions extends MeasureOptions {
  /** Where the report files go (default: the settings' `out`, from `baseDir`). */
  out?: string;
  /** Also write the raw results (the shard) into this folder. */
  results?: string;
  /** Where source links point. */
  links?: SourceLinks;
}

/** measure → report → report files: one comparison, as `hotpath compare` and the Action's mode all. */
export async function runCompare(
  settings: Settings,
  options: CompareRunOptions = {},
): Promise<RunResult & MeasureRun> {
  const { out, links, ...measureOptions } = options;
  const measured = await runMeasure(settings, measureOptions);
  options.onProgress?.({ phase: 'analyse', message: 'statistics, hot functions, report files' });
  const result = report([measured.shard], { links });
  const dir = out ?? resolve(options.baseDir ?? process.cwd(), settings.out);
  return { ...measured, ...publishReport(result, dir) };
}

export interface ReportRunOptions extends Omit<ReportRules, 'config'> {
  /**
   * Where the report files go: the reporter's choice (a flag, an input, the default), never a
   * folder the results name — a results file is an artifact anyone could have written.
   */
  out: string;
  /** The reporter's config (only the verdict's rules are taken from it). */
  config?: Record<string, unknown>;
}

/** shards → report → report files: `hotpath report` and the Action's mode report. */
export function runReport(folders: readonly string[], options: ReportRunOptions): RunResult {
  const { out, ...rules } = options;
  const shards = readShards(folders.map((dir) => resolve(dir)));
  return publishReport(report(shards, rules), out);
}
