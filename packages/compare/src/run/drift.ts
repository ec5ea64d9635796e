// The run layer's drift: one drift run (measure HEAD against the reference, report, point), the
// point appended to a history (a file, or the results branch), the trend analysed, the outputs
// and the fail decision — for `hotpath drift` and the Action's mode drift alike; and `hotpath
// history`'s reading of a history file.
import { resolve } from 'node:path';
import { analyseSeries, type DriftAnalysis } from '../drift/analysis.js';
import {
  type DriftRun,
  type DriftShard,
  driftRunOf,
  measureDrift,
  measureDriftShard,
} from '../drift/drift.js';
import {
  appendPoint,
  currentSeries,
  type History,
  type HistorySeries,
  type Reference,
} from '../drift/history.js';
import {
  appendToHistoryBranch,
  type HistoryBranch,
  readHistoryFile,
  writeHistoryFile,
} from '../drift/store.js';
import { HotpathCompareError } from '../errors.js';
import type { MeasureRuntime } from '../measure/measure.js';
import type { ReportRules } from '../report/shards.js';
import type { Settings } from '../settings/schema.js';
import { readShards, writeShard } from '../shard/file.js';
import { driftFailDecision, verdictPolicy } from '../verdict/policy.js';
import { writeClaimed } from './out-dir.js';
import { driftOutputs, type RunResult } from './outputs.js';
import { writeReport } from './report-files.js';

/** Where a drift run's point goes. */
export interface HistoryStore {
  /** Where, for people ("history.json", "branch hotpath-history"). */
  readonly name: string;
  /** Checks the store can be read before minutes of measuring (a broken file fails first). */
  check(): Promise<void>;
  /** Appends the point; returns the whole history as stored and a line on how it went. */
  append(reference: Reference, point: DriftRun['point']): Promise<{ history: History; note: string }>;
}

/** A history file (`hotpath drift --history FILE`): read again just before the append. */
export function historyFile(path: string): HistoryStore {
  const file = resolve(path);
  return {
    name: file,
    check: async () => {
      readHistoryFile(file);
    },
    append: async (reference, point) => {
      const history = appendPoint(readHistoryFile(file), reference, point);
      writeHistoryFile(file, history);
      return { history, note: `history: ${file}` };
    },
  };
}

/** The results branch of a repository (the Action): pushed without force, merged on a race. */
export function historyBranch(options: HistoryBranch): HistoryStore {
  const branch = options.branch ?? 'hotpath-history';
  return {
    name: `branch ${branch}`,
    check: async () => {},
    append: async (reference, point) => {
      const pushed = await appendToHistoryBranch(options, reference, point);
      return {
        history: pushed.history,
        note: `appended the run to ${branch} (${pushed.commit.slice(0, 12)}, ${pushed.attempts} attempt${pushed.attempts > 1 ? 's' : ''})`,
      };
    },
  };
}

export interface DriftRunOptions extends Omit<MeasureRuntime, 'refs' | 'autoRounds' | 'shard'> {
  /** The reference: `tag:GLOB` or a ref. */
  reference: string;
  /** The commit measured (default HEAD). */
  head?: string;
  history: HistoryStore;
  /** Where the report files go (default: the settings' `out`, from `baseDir`). */
  out?: string;
}

export interface DriftResult extends RunResult {
  run: DriftRun;
  history: History;
  series: HistorySeries;
  analysis: DriftAnalysis;
  /** How the history was stored. */
  note: string;
}

/** One drift run, measured, stored and analysed in one process (`hotpath drift`). */
export async function runDrift(settings: Settings, options: DriftRunOptions): Promise<DriftResult> {
  const { reference, head, history: store, out, ...runtime } = options;
  await store.check();
  const run = await measureDrift(settings, reference, { ...runtime, head: head ?? settings.head });
  return recordDriftRun(run, store, resolve(out ?? resolve(runtime.baseDir ?? process.cwd(), settings.out)));
}

export interface DriftMeasureOptions extends Omit<DriftRunOptions, 'history' | 'out'> {
  /** The folder the shard is written to (what the record job reads back). */
  results: string;
}

/**
 * The measuring half of a drift run (the Action's mode drift-measure): head against the reference
 * into a results folder, nothing stored, no report — the job that runs the repository's code
 * holds no write token, and hands its results to a job that records them.
 */
export async function runDriftMeasure(
  settings: Settings,
  options: DriftMeasureOptions,
): Promise<DriftShard & { results: string }> {
  const { reference, head, results, ...runtime } = options;
  const measured = await measureDriftShard(settings, reference, { ...runtime, head: head ?? settings.head });
  return { ...measured, results: writeShard(resolve(results), measured.shard) };
}

export interface DriftRecordOptions {
  history: HistoryStore;
  /** Where the report files go: the recorder's choice, never a folder the results name. */
  out: string;
  /** The reporter's rules (its config and inputs), as for `runReport`. */
  rules?: ReportRules;
  /** The commit the results must be of (the run's own: a results folder naming another is refused). */
  head?: string;
}

/**
 * The recording half (the Action's mode drift-record): the results a measure job wrote → report →
 * point → history → analysis. It runs no code of the repository; the results are read as the
 * report mode reads them (validated, bounded).
 */
export async function runDriftRecord(
  folders: readonly string[],
  options: DriftRecordOptions,
): Promise<DriftResult> {
  await options.history.check();
  const run = driftRunOf(
    readShards(folders.map((dir) => resolve(dir))),
    options.rules ? { rules: options.rules } : {},
  );
  if (options.head && run.point.commit !== options.head)
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `the results measured ${run.point.commit.slice(0, 12)}, not this run's commit ${options.head.slice(0, 12)}: only a point of the commit being recorded joins the history`,
    );
  return recordDriftRun(run, options.history, resolve(options.out));
}

/** A measured drift run's report files, its point appended to the store, the trend analysed. */
async function recordDriftRun(run: DriftRun, store: HistoryStore, out: string): Promise<DriftResult> {
  const { written: files, removed } = writeClaimed(out, (dir) => writeReport(dir, run.report));
  const stored = await store.append(run.reference, run.point);
  const series = stored.history.series.find((s) => s.reference.sha === run.reference.sha);
  if (!series)
    throw new HotpathCompareError('HP_COMPARE_HISTORY', `the stored history lacks this run (${store.name})`);
  const analysis = analyseSeries(series);
  return {
    run,
    report: run.report,
    files,
    removed,
    history: stored.history,
    series,
    analysis,
    note: stored.note,
    outputs: driftOutputs(run.report, files, analysis),
    failed: driftFailDecision(verdictPolicy(run.report.settings), analysis.confirmed),
  };
}

/** The series of a history against `reference` (a ref name or a sha prefix), or the newest. */
export function seriesOf(history: History, reference: string | undefined, name: string): HistorySeries {
  if (reference === undefined) {
    const series = currentSeries(history);
    if (!series) throw new HotpathCompareError('HP_COMPARE_HISTORY', `${name} holds no drift runs yet`);
    return series;
  }
  const series = history.series
    .filter((s) => s.reference.ref === reference || s.reference.sha.startsWith(reference))
    .at(-1);
  if (!series)
    throw new HotpathCompareError(
      'HP_COMPARE_HISTORY',
      `${name} has no series against ${JSON.stringify(reference)}; its references: ${history.series.map((s) => s.reference.ref).join(', ') || 'none'}`,
    );
  return series;
}

/** `hotpath history FILE`: the trend of the newest series (or the reference's), at `threshold`. */
export function runHistory(
  file: string,
  options: { reference?: string; threshold?: number } = {},
): { history: History; analysis: DriftAnalysis } {
  const history = readHistoryFile(resolve(file));
  const series = seriesOf(history, options.reference, file);
  const analysis = analyseSeries(
    series,
    options.threshold === undefined ? {} : { threshold: options.threshold },
  );
  return { history, analysis };
}
