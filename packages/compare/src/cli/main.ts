import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { HotpathCompareError } from '../errors.js';
import { measure } from '../measure/measure.js';
import { probePath } from '../measure/probe-path.js';
import { measureOne } from '../measure/rounds.js';
import type { Report } from '../model.js';
import { type WrittenFiles, writeReport } from '../render/files.js';
import { renderMarkdown } from '../render/markdown.js';
import { claimOutDir } from '../render/out-dir.js';
import { profileJson, renderProfileText, writeProfileReport } from '../render/profile-report.js';
import { renderJson } from '../render/render.js';
import { renderTerminal } from '../render/terminal.js';
import { profileReport } from '../report/profile.js';
import { report } from '../report/report.js';
import { isReporterKey, REPORTER_KEYS } from '../report/shards.js';
import { findConfig, loadConfig } from '../settings/config-file.js';
import { configJsonSchema } from '../settings/json-schema.js';
import { resolveSettings } from '../settings/schema.js';
import { flagOf, SETTINGS, type SettingSpec } from '../settings/table.js';
import { readShards, writeShard } from '../shard/file.js';
import { parseShard } from '../shard/id.js';
import { parseCommandLine, UsageError, usage } from './args.js';
import { runDrift, runHistory } from './drift.js';
import { runInit } from './init.js';
import { openFile } from './open.js';
import { ProgressReporter } from './progress.js';

function version(): string {
  const require = createRequire(import.meta.url);
  for (const candidate of ['../../package.json', '../package.json']) {
    try {
      const pkg = require(candidate) as { name?: string; version?: string };
      if (pkg.name === '@hotpath/compare') return pkg.version ?? '0.0.0';
    } catch {
      // try the next
    }
  }
  return '0.0.0';
}

/** Writes into `dir` as this run's own output folder (see claimOutDir); says what it removed. */
function writeOwned<T>(dir: string, write: (dir: string) => T): T {
  const claimed = claimOutDir(dir);
  if (claimed.removed.length > 0)
    process.stderr.write(
      `hotpath: removed ${claimed.removed.length} file${claimed.removed.length === 1 ? '' : 's'} of an earlier run from ${claimed.dir}\n`,
    );
  const written = write(claimed.dir);
  claimed.seal();
  return written;
}

/** Runs the CLI; resolves with the exit status. Never calls process.exit. */
export async function main(argv: string[], signal?: AbortSignal): Promise<number> {
  const parsed = parseCommandLine(argv);
  if (parsed.command === 'help') {
    // `hotpath` alone is a usage error: the usage goes to stderr, exit 2.
    if (argv.length === 0) {
      process.stderr.write(usage());
      return 2;
    }
    process.stdout.write(usage());
    return 0;
  }
  if (parsed.command === 'version') {
    process.stdout.write(`hotpath ${version()}\n`);
    return 0;
  }
  if (parsed.command === 'init') return runInit(parsed.init);
  if (parsed.command === 'schema') {
    process.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    return 0;
  }
  if (parsed.command === 'report') return runReport(parsed);
  if (parsed.command === 'history') return runHistory(parsed);
  const configPath = parsed.config ?? findConfig(process.cwd());
  const loaded = configPath ? await loadConfig(configPath) : undefined;
  const settings = resolveSettings({
    config: loaded?.config,
    configName: loaded?.path,
    overrides: parsed.overrides,
    overridesSource: 'flag',
  });
  if (configPath === undefined && !['start', 'baseStart', 'headStart'].some((k) => k in parsed.overrides))
    throw new UsageError(
      `no hotpath.config.json (or .mjs, .js) in ${process.cwd()}: run "npx -p @hotpath/compare hotpath init" to write one, or pass --start CMD (or --base-start and --head-start) and --url PATH (see --help)`,
    );
  // Relative paths in a config file are relative to the file; on the command line, to the shell.
  const fromFlags = 'cwd' in parsed.overrides || 'out' in parsed.overrides;
  const baseDir = loaded && !fromFlags ? loaded.dir : process.cwd();
  probePath();
  const ui = new ProgressReporter(process.stderr, parsed.quiet);

  if (parsed.command === 'profile') {
    const start = settings.start ?? settings.headStart;
    if (!start) throw new UsageError('missing --start CMD: the command that starts your server');
    const rounds = await measureOne(
      { side: 'head', command: start, cwd: resolve(baseDir, settings.cwd) },
      settings,
      {
        probePath: probePath(),
        env: process.env,
        log: (message) => ui.onProgress({ phase: 'note', message }),
        onProgress: ui.onProgress,
        signal,
      },
    ).finally(() => ui.done());
    const found = profileReport(rounds, settings);
    const dir = writeOwned(resolve(baseDir, settings.out), (out) => writeProfileReport(out, found));
    process.stdout.write(
      parsed.json ? `${JSON.stringify(profileJson(found), null, 2)}\n` : renderProfileText(found),
    );
    process.stderr.write(`files: ${dir}\n`);
    return 0;
  }

  if (parsed.command === 'drift') return runDrift(parsed, settings, baseDir, ui, signal);

  const shard = await measure(settings, {
    signal,
    baseDir,
    shard: parsed.shard ? parseShard(parsed.shard) : undefined,
    onProgress: ui.onProgress,
  }).finally(() => ui.done());
  if (parsed.results) {
    const folder = writeShard(resolve(parsed.results), shard);
    process.stderr.write(`raw results (shard ${shard.shard.index}/${shard.shard.total}): ${folder}\n`);
  }
  const result = report([shard]);
  const files = writeOwned(resolve(baseDir, settings.out), (out) => writeReport(out, result));
  return output(result, files, parsed);
}

/** Writes what both `compare` and `report` print (and opens report.html); the verdict's exit status. */
async function output(
  result: Report,
  files: WrittenFiles,
  parsed: ReturnType<typeof parseCommandLine>,
): Promise<number> {
  if (parsed.markdown)
    writeFileSync(resolve(parsed.markdown), renderMarkdown(result, { maxLength: Number.POSITIVE_INFINITY }));
  if (parsed.json) process.stdout.write(renderJson(result));
  else process.stdout.write(renderTerminal(result, { color: process.stdout.isTTY && !process.env.NO_COLOR }));
  const written = [
    files.report,
    files.markdown,
    files.html,
    ...files.scenarios.flatMap((s) => [s.folded.base, s.folded.head, s.flameGraph, s.diffFlameGraph]),
  ]
    .filter(Boolean)
    .map((f) => `  ${f}`);
  const merged = result.shards > 1 ? `merged ${result.shards} shards; ` : '';
  process.stderr.write(`\n${merged}files in ${files.dir}:\n${written.join('\n')}\n`);
  for (const note of files.notes) process.stderr.write(`note: ${note}\n`);
  if (parsed.open) {
    if (!files.html)
      process.stderr.write('hotpath: --open: report.html was not written (see the note above)\n');
    else {
      const opened = await openFile(files.html);
      process.stderr.write(
        opened.opened
          ? `hotpath: opening ${files.html} (${opened.command})\n`
          : `hotpath: --open: ${opened.reason}; open ${files.html} in a browser yourself\n`,
      );
    }
  }
  if (result.regressed && result.settings.failOnRegression) return 1;
  return result.outcome === 'inconclusive' && result.settings.failOnInconclusive ? 1 : 0;
}

/**
 * `hotpath report DIR...`: every shard found below the folders through the one report() — the
 * same precedence as the Action's report mode: what was measured from the results, the verdict's
 * rules (and --out) from this command line; a flag that would change the measurement is refused.
 */
async function runReport(parsed: ReturnType<typeof parseCommandLine>): Promise<number> {
  const refused = Object.keys(parsed.overrides).filter((key) => !isReporterKey(key));
  if (refused.length > 0) {
    const flags = (keys: readonly string[]) =>
      keys
        .map((key) => {
          const spec = (SETTINGS as readonly SettingSpec[]).find((s) => s.key === key);
          return spec ? `--${flagOf(spec)}` : key;
        })
        .join(', ');
    throw new UsageError(
      `${flags(refused)} describe${refused.length > 1 ? '' : 's'} the measurement, which the results fix; hotpath report takes only ${flags(REPORTER_KEYS)}`,
    );
  }
  const shards = readShards(parsed.folders.map((dir) => resolve(dir)));
  const result = report(shards, { overrides: parsed.overrides, overridesSource: 'flag' });
  const files = writeOwned(resolve(result.settings.out), (out) => writeReport(out, result));
  return output(result, files, parsed);
}

/** The `hotpath` bin: SIGINT/SIGTERM abort the run (everything is cleaned up), then exit 130/143. */
export function runCli(argv: string[] = process.argv.slice(2)): void {
  const controller = new AbortController();
  let interrupted = 0;
  const onSignal = (name: 'SIGINT' | 'SIGTERM') => () => {
    if (interrupted) process.exit(name === 'SIGINT' ? 130 : 143); // a second signal: stop now
    interrupted = name === 'SIGINT' ? 130 : 143;
    process.stderr.write(`\nhotpath: ${name}: stopping the servers and removing worktrees…\n`);
    controller.abort(new Error(name));
  };
  process.on('SIGINT', onSignal('SIGINT'));
  process.on('SIGTERM', onSignal('SIGTERM'));
  main(argv, controller.signal).then(
    (code) => {
      process.exitCode = interrupted || code;
    },
    (err: unknown) => {
      if (interrupted) {
        process.exitCode = interrupted;
      } else if (err instanceof UsageError) {
        process.stderr.write(`hotpath: ${err.message}\n`);
        process.exitCode = 2;
      } else if (err instanceof HotpathCompareError) {
        process.stderr.write(`hotpath: ${err.code}: ${err.message}\n`);
        process.exitCode =
          err.code === 'HP_COMPARE_INVALID_SETTING' || err.code === 'HP_COMPARE_CONFIG' ? 2 : 1;
      } else {
        process.stderr.write(`hotpath: unexpected failure: ${(err as Error)?.stack ?? String(err)}\n`);
        process.exitCode = 1;
      }
    },
  );
}
