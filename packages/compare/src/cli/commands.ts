// The commands that measure, report or write: imported by cli/main.ts only when one runs, so
// that `hotpath --help`, `--version` and a usage error load a few modules, not the engine.
import { resolve } from 'node:path';
import {
  findConfig,
  loadConfig,
  type RunResult,
  render,
  resolveSettings,
  runCompare,
  runProfile,
  runReport,
  type Settings,
} from '../index.js';
import {
  configJsonSchema,
  failureText,
  filesText,
  flagOf,
  isReporterKey,
  profileJson,
  REPORTER_KEYS,
  removedText,
  renderProfileText,
  SETTINGS,
  type SettingSpec,
  writeOutputFile,
} from '../internal.js';
import { type ParsedCommandLine, UsageError } from './args.js';
import { bisectCommand } from './bisect.js';
import { DEFAULT_OUT, driftCommand, historyCommand } from './drift.js';
import { runInit } from './init.js';
import { openFile } from './open.js';
import { ProgressReporter } from './progress.js';

/** What the doors print once a report is written; the run's exit status (the one fail rule). */
async function output(result: RunResult, parsed: ParsedCommandLine): Promise<number> {
  const { report: made, files } = result;
  process.stderr.write(removedText(files.dir, result.removed));
  const text = render(made, {
    color: process.stdout.isTTY && !process.env.NO_COLOR,
    // a pseudo-terminal without a size (script(1), some CI runners) says 0 columns: 120 then
    width: process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : undefined,
    verbose: parsed.verbose,
    markdown: { maxLength: Number.POSITIVE_INFINITY },
  });
  if (parsed.markdown) writeOutputFile(resolve(parsed.markdown), text.markdown, { refuseLinks: true });
  process.stdout.write(parsed.json ? text.json : text.terminal);
  process.stderr.write(filesText(files, made.shards));
  if (parsed.open) await openReport(files.html);
  // The fail decision's reason, as the Action's step error says it.
  if (result.failed.failed) process.stderr.write(`${failureText(result.failed)}\n`);
  return result.failed.failed ? 1 : 0;
}

async function openReport(html: string | undefined): Promise<void> {
  if (!html) {
    process.stderr.write('hotpath: --open: report.html was not written (see the note above)\n');
    return;
  }
  const opened = await openFile(html);
  process.stderr.write(
    opened.opened
      ? `hotpath: opening ${html} (${opened.command})\n`
      : `hotpath: --open: ${opened.reason}; open ${html} in a browser yourself\n`,
  );
}

/** The flags of `keys`, for a message. */
const flagsOf = (keys: readonly string[]) =>
  keys
    .map((key) => {
      const spec = (SETTINGS as readonly SettingSpec[]).find((s) => s.key === key);
      return spec ? `--${flagOf(spec)}` : key;
    })
    .join(', ');

/**
 * `hotpath report DIR...`: every shard found below the folders through the one report() — the
 * same precedence as the Action's report mode: what was measured from the results, the verdict's
 * rules from this command line; a flag that would change the measurement is refused. The files
 * go to --out or the default folder, never to a folder the results name.
 */
async function reportCommand(parsed: ParsedCommandLine): Promise<number> {
  const refused = Object.keys(parsed.overrides).filter((key) => !isReporterKey(key));
  if (refused.length > 0)
    throw new UsageError(
      `${flagsOf(refused)} describe${refused.length > 1 ? '' : 's'} the measurement, which the results fix; hotpath report takes only ${flagsOf(REPORTER_KEYS)}`,
    );
  const { out, ...overrides } = parsed.overrides;
  const result = runReport(parsed.folders, {
    out: resolve(typeof out === 'string' ? out : DEFAULT_OUT),
    overrides,
    overridesSource: 'flag',
  });
  return output(result, parsed);
}

/** `hotpath profile`: one server under load, profiled. */
async function profileCommand(
  parsed: ParsedCommandLine,
  settings: Settings,
  baseDir: string,
  ui: ProgressReporter,
  signal?: AbortSignal,
): Promise<number> {
  const start = settings.start ?? settings.headStart;
  if (!start) throw new UsageError('missing --start CMD: the command that starts your server');
  const found = await runProfile(settings, { start, baseDir, onProgress: ui.onProgress, signal }).finally(
    () => ui.done(),
  );
  process.stderr.write(removedText(found.dir, found.removed));
  process.stdout.write(
    parsed.json
      ? `${JSON.stringify(profileJson(found.profile), null, 2)}\n`
      : renderProfileText(found.profile),
  );
  process.stderr.write(`files: ${found.dir}\n`);
  return 0;
}

/** `hotpath compare`: measure → report → files, and the raw results with --results. */
async function compareCommand(
  parsed: ParsedCommandLine,
  settings: Settings,
  baseDir: string,
  ui: ProgressReporter,
  signal?: AbortSignal,
): Promise<number> {
  const result = await runCompare(settings, {
    signal,
    baseDir,
    shard: parsed.shard,
    results: parsed.results,
    onProgress: ui.onProgress,
  }).finally(() => ui.done());
  if (result.results)
    process.stderr.write(
      `raw results (shard ${result.shard.shard.index}/${result.shard.shard.total}): ${result.results}\n`,
    );
  return output(result, parsed);
}

/** Runs a command other than help and version. */
export async function runCommand(parsed: ParsedCommandLine, signal?: AbortSignal): Promise<number> {
  if (parsed.command === 'init') return runInit(parsed.init);
  if (parsed.command === 'schema') {
    process.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    return 0;
  }
  if (parsed.command === 'report') return reportCommand(parsed);
  if (parsed.command === 'history') return historyCommand(parsed);
  const configPath = parsed.config ?? findConfig(process.cwd());
  const loaded = configPath ? await loadConfig(configPath) : undefined;
  // hotpath bisect: --max-time is the whole search's budget; each comparison keeps the config's.
  const { maxTime: budgetFlag, ...bisectOverrides } = parsed.overrides;
  const settings = resolveSettings({
    config: loaded?.config,
    configName: loaded?.path,
    overrides: parsed.command === 'bisect' ? bisectOverrides : parsed.overrides,
    overridesSource: 'flag',
  });
  const budget =
    parsed.command === 'bisect' && budgetFlag !== undefined
      ? resolveSettings({ overrides: { maxTime: budgetFlag }, overridesSource: 'flag' }).maxTime
      : undefined;
  if (configPath === undefined && !['start', 'baseStart', 'headStart'].some((k) => k in parsed.overrides))
    throw new UsageError(
      `no hotpath.config.json (or .mjs, .js) in ${process.cwd()}: run "npx -p @hotpath/compare hotpath init" to write one, or pass --start CMD (or --base-start and --head-start) and --url PATH (see --help)`,
    );
  // Relative paths in a config file are relative to the file; on the command line, to the shell.
  const fromFlags = 'cwd' in parsed.overrides || 'out' in parsed.overrides;
  const baseDir = loaded && !fromFlags ? loaded.dir : process.cwd();
  const ui = new ProgressReporter(process.stderr, parsed.quiet);
  if (parsed.command === 'profile') return profileCommand(parsed, settings, baseDir, ui, signal);
  if (parsed.command === 'drift') return driftCommand(parsed, settings, baseDir, ui, signal);
  if (parsed.command === 'bisect') return bisectCommand(parsed, settings, budget, baseDir, ui, signal);
  return compareCommand(parsed, settings, baseDir, ui, signal);
}
