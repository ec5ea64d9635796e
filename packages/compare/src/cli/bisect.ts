// `hotpath bisect --good REF --bad REF`: the run layer's bisect from a terminal. Each decided step
// goes to stderr as it comes; the conclusion (or the search's JSON with --json) to stdout.
import { type ProgressEvent, runBisect, type Settings } from '../index.js';
import { failureText } from '../internal.js';
import type { ParsedCommandLine } from './args.js';

export async function bisectCommand(
  parsed: ParsedCommandLine,
  settings: Settings,
  budget: number | undefined,
  baseDir: string,
  ui: { onProgress: (event: ProgressEvent) => void; done: () => void },
  signal?: AbortSignal,
): Promise<number> {
  const result = await runBisect(settings, {
    good: parsed.good ?? '',
    bad: parsed.bad ?? '',
    ...(budget === undefined ? {} : { budget }),
    baseDir,
    signal,
    onProgress: ui.onProgress,
    onStep: (line) => {
      ui.done();
      if (!parsed.quiet) process.stderr.write(`${line}\n`);
    },
  }).finally(() => ui.done());
  process.stderr.write(`report: ${result.files.search} (the steps drawn: ${result.files.html})\n`);
  if (parsed.json) process.stdout.write(`${JSON.stringify(result.search, null, 2)}\n`);
  else process.stdout.write(result.text);
  if (result.failed.failed) process.stderr.write(`${failureText(result.failed)}\n`);
  return result.failed.failed ? 1 : 0;
}
