// `hotpath drift` and `hotpath history`: the drift mode from a terminal. drift measures HEAD
// against a fixed reference, appends the point to a history file and prints the trend; history
// renders an existing history file.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { analyseSeries } from '../drift/analysis.js';
import { measureDrift } from '../drift/drift.js';
import { appendPoint, currentSeries, type History } from '../drift/history.js';
import { readHistoryFile, writeHistoryFile } from '../drift/store.js';
import type { ProgressEvent } from '../measure/progress.js';
import { renderTrendMarkdown, renderTrendTerminal } from '../render/drift-trend.js';
import { writeReport } from '../render/files.js';
import type { Settings } from '../settings/schema.js';
import { type ParsedCommandLine, UsageError } from './args.js';

function seriesOf(history: History, reference: string | undefined, file: string) {
  if (reference === undefined) {
    const series = currentSeries(history);
    if (!series) throw new UsageError(`${file} holds no drift runs yet`);
    return series;
  }
  const matches = history.series.filter(
    (s) => s.reference.ref === reference || s.reference.sha.startsWith(reference),
  );
  const series = matches.at(-1);
  if (!series)
    throw new UsageError(
      `${file} has no series against ${JSON.stringify(reference)}; its references: ${history.series.map((s) => s.reference.ref).join(', ') || 'none'}`,
    );
  return series;
}

function print(history: History, parsed: ParsedCommandLine, file: string, threshold?: number) {
  const series = seriesOf(history, parsed.command === 'history' ? parsed.reference : undefined, file);
  const analysis = analyseSeries(series, threshold === undefined ? {} : { threshold });
  if (parsed.markdown) writeFileSync(resolve(parsed.markdown), renderTrendMarkdown(analysis, history));
  if (parsed.json) process.stdout.write(`${JSON.stringify(analysis, null, 2)}\n`);
  else process.stdout.write(renderTrendTerminal(analysis, history));
  return analysis;
}

/** `hotpath history FILE`: the trend of the newest series (or --reference's). */
export function runHistory(parsed: ParsedCommandLine): number {
  const file = parsed.folders[0] ?? '';
  const threshold = parsed.overrides.threshold === undefined ? undefined : Number(parsed.overrides.threshold);
  if (threshold !== undefined && !(threshold >= 0))
    throw new UsageError(
      `--threshold ${JSON.stringify(parsed.overrides.threshold)}: expected a percent >= 0`,
    );
  print(readHistoryFile(resolve(file)), parsed, file, threshold);
  return 0;
}

/** `hotpath drift --reference REF --history FILE`: one drift run, appended, and the trend. */
export async function runDrift(
  parsed: ParsedCommandLine,
  settings: Settings,
  baseDir: string,
  ui: { onProgress: (event: ProgressEvent) => void; done: () => void },
  signal?: AbortSignal,
): Promise<number> {
  if ('base' in parsed.overrides)
    throw new UsageError('hotpath drift compares against --reference; --base does not apply (see --help)');
  const file = resolve(parsed.history ?? '');
  // Read first: a history that cannot be read fails before minutes of measuring.
  readHistoryFile(file);
  const run = await measureDrift(settings, parsed.reference ?? '', {
    signal,
    baseDir,
    head: settings.head,
    onProgress: ui.onProgress,
  }).finally(() => ui.done());
  const files = writeReport(resolve(baseDir, settings.out), run.report);
  // Read again: another run may have appended meanwhile.
  const history = appendPoint(readHistoryFile(file), run.reference, run.point);
  writeHistoryFile(file, history);
  process.stderr.write(`report: ${files.dir}\nhistory: ${file}\n`);
  const analysis = print(history, parsed, file);
  // the drift issue's rule: a drift beyond the threshold fails the run once it is confirmed
  return analysis.confirmed && settings.failOnRegression ? 1 : 0;
}
