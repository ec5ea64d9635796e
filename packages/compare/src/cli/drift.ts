// `hotpath drift` and `hotpath history`: the drift mode from a terminal. drift measures HEAD
// against a fixed reference, appends the point to a history file and prints the trend; history
// renders an existing history file. Both call the run layer and print what it returns.
import { resolve } from 'node:path';
import { historyFile, type ProgressEvent, runDrift, runHistory, type Settings } from '../index.js';
import {
  type DriftAnalysis,
  failureText,
  type History,
  renderTrendMarkdown,
  renderTrendTerminal,
  settingDefault,
  writeOutputFile,
} from '../internal.js';
import { type ParsedCommandLine, UsageError } from './args.js';

/** Where report files go when no --out is given (the settings table's default). */
export const DEFAULT_OUT = String(settingDefault('out'));

function print(analysis: DriftAnalysis, history: History, parsed: ParsedCommandLine): void {
  if (parsed.markdown)
    writeOutputFile(resolve(parsed.markdown), renderTrendMarkdown(analysis, history), { refuseLinks: true });
  if (parsed.json) process.stdout.write(`${JSON.stringify(analysis, null, 2)}\n`);
  else process.stdout.write(renderTrendTerminal(analysis, history));
}

/** `hotpath history FILE`: the trend of the newest series (or --reference's). */
export function historyCommand(parsed: ParsedCommandLine): number {
  const file = parsed.folders[0] ?? '';
  const threshold = parsed.overrides.threshold === undefined ? undefined : Number(parsed.overrides.threshold);
  if (threshold !== undefined && !(threshold >= 0))
    throw new UsageError(
      `--threshold ${JSON.stringify(parsed.overrides.threshold)}: expected a percent >= 0`,
    );
  const { history, analysis } = runHistory(file, { reference: parsed.reference, threshold });
  print(analysis, history, parsed);
  return 0;
}

/** `hotpath drift --reference REF --history FILE`: one drift run, appended, and the trend. */
export async function driftCommand(
  parsed: ParsedCommandLine,
  settings: Settings,
  baseDir: string,
  ui: { onProgress: (event: ProgressEvent) => void; done: () => void },
  signal?: AbortSignal,
): Promise<number> {
  if ('base' in parsed.overrides)
    throw new UsageError('hotpath drift compares against --reference; --base does not apply (see --help)');
  const result = await runDrift(settings, {
    reference: parsed.reference ?? '',
    history: historyFile(parsed.history ?? ''),
    signal,
    baseDir,
    onProgress: ui.onProgress,
  }).finally(() => ui.done());
  process.stderr.write(`report: ${result.files.dir}\n${result.note}\n`);
  print(result.analysis, result.history, parsed);
  // The fail decision's reason, as the Action's step error says it.
  if (result.failed.failed) process.stderr.write(`${failureText(result.failed)}\n`);
  return result.failed.failed ? 1 : 0;
}
