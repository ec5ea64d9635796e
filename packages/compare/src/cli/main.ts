import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { analyse } from '../analyse/analyse.js';
import { probePath, runComparison } from '../compare.js';
import { HotpathCompareError } from '../errors.js';
import { measureOne } from '../measure/measure.js';
import { writeReportFiles } from '../render/files.js';
import { renderMarkdown } from '../render/markdown.js';
import { writeProfileOnly } from '../render/profile-report.js';
import { renderTerminal } from '../render/terminal.js';
import { findResults, mergeShards, readShard, writeResults } from '../results/results.js';
import { parseShard } from '../results/shard.js';
import { findConfig, loadConfig } from '../settings/config-file.js';
import { configJsonSchema } from '../settings/json-schema.js';
import { resolveSettings } from '../settings/schema.js';
import { parseCommandLine, UsageError, usage } from './args.js';

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

function progress(): { log: (line: string) => void; done: () => void } {
  const tty = process.stderr.isTTY;
  if (!tty) return { log: () => {}, done: () => {} };
  return {
    log: (line) =>
      process.stderr.write(
        `\r\u001b[2K${line.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, (process.stderr.columns ?? 100) - 1)}`,
      ),
    done: () => process.stderr.write('\r\u001b[2K'),
  };
}

/** Runs the CLI; resolves with the exit status. Never calls process.exit. */
export async function main(argv: string[], signal?: AbortSignal): Promise<number> {
  const parsed = parseCommandLine(argv);
  if (parsed.command === 'help') {
    process.stdout.write(usage());
    return argv.length === 0 ? 2 : 0;
  }
  if (parsed.command === 'version') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (parsed.command === 'schema') {
    process.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    return 0;
  }
  if (parsed.command === 'report') return runReport(parsed);
  const configPath = parsed.config ?? findConfig(process.cwd());
  const loaded = configPath ? await loadConfig(configPath) : undefined;
  const settings = resolveSettings({
    config: loaded?.config,
    configName: loaded?.path,
    overrides: parsed.overrides,
    overridesSource: 'flag',
  });
  // Relative paths in a config file are relative to the file; on the command line, to the shell.
  const fromFlags = 'cwd' in parsed.overrides || 'out' in parsed.overrides;
  const baseDir = loaded && !fromFlags ? loaded.dir : process.cwd();
  probePath();
  const ui = progress();

  if (parsed.command === 'profile') {
    const start = settings.start ?? settings.headStart;
    if (!start) throw new UsageError('missing --start CMD: the command that starts your server');
    const rounds = await measureOne(
      { side: 'head', command: start, cwd: resolve(baseDir, settings.cwd) },
      settings,
      { probePath: probePath(), env: process.env, log: ui.log, signal },
    ).finally(() => ui.done());
    const written = writeProfileOnly(resolve(baseDir, settings.out), rounds, settings);
    process.stdout.write(parsed.json ? `${JSON.stringify(written.summary, null, 2)}\n` : written.text);
    process.stderr.write(`files: ${written.dir}\n`);
    return 0;
  }

  const shard = parsed.shard ? parseShard(parsed.shard) : { index: 1, total: 1 };
  const { report, files, measurements, sides } = await runComparison(settings, {
    signal,
    baseDir,
    onProgress: (e) => ui.log(e.message),
  }).finally(() => ui.done());
  if (parsed.results) {
    const folder = writeResults(resolve(parsed.results), {
      shard,
      settings,
      sides,
      measurements,
      warnings: [],
    });
    process.stderr.write(`raw results (shard ${shard.index}/${shard.total}): ${folder}\n`);
  }
  if (parsed.markdown)
    writeFileSync(resolve(parsed.markdown), renderMarkdown(report, { maxLength: Number.POSITIVE_INFINITY }));
  if (parsed.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(renderTerminal(report, { color: process.stdout.isTTY && !process.env.NO_COLOR }));
  const written = [
    files.report,
    files.markdown,
    ...files.scenarios.flatMap((s) => [s.folded.base, s.folded.head, s.flameGraph, s.diffFlameGraph]),
  ]
    .filter(Boolean)
    .map((f) => `  ${f}`);
  process.stderr.write(`\nfiles in ${files.dir}:\n${written.join('\n')}\n`);
  for (const note of files.notes) process.stderr.write(`note: ${note}\n`);
  return report.regressed && settings.failOnRegression ? 1 : 0;
}

/** `hotpath report DIR...`: merges every shard found below the folders, analyses, renders. */
async function runReport(parsed: ReturnType<typeof parseCommandLine>): Promise<number> {
  const files = parsed.folders.flatMap((dir) => findResults(resolve(dir)));
  if (files.length === 0)
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `no hotpath-results.json below ${parsed.folders.join(', ')}`,
    );
  const shards = files.map((file) =>
    readShard(file, (raw) => resolveSettings({ config: raw, configName: `results ${file}` })),
  );
  const merged = mergeShards(shards);
  // The verdict's rules come from this command line; what was measured, from the results.
  const settings = resolveSettings({
    config: merged.settings,
    configName: 'the results',
    overrides: parsed.overrides,
    overridesSource: 'flag',
  });
  const result = analyse(merged.measurements, {
    settings,
    sides: merged.sides,
    shards: merged.shards,
    warnings: merged.warnings,
  });
  const written = writeReportFiles(resolve(settings.out), result, merged.measurements);
  if (parsed.markdown)
    writeFileSync(resolve(parsed.markdown), renderMarkdown(result, { maxLength: Number.POSITIVE_INFINITY }));
  if (parsed.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else process.stdout.write(renderTerminal(result, { color: process.stdout.isTTY && !process.env.NO_COLOR }));
  process.stderr.write(`\nmerged ${merged.shards} shard(s); files in ${written.dir}\n`);
  return result.regressed && settings.failOnRegression ? 1 : 0;
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
