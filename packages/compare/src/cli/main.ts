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
  if (parsed.command === 'history') return runHistory(parsed);
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
    const found = profileReport(rounds, settings);
    const dir = writeProfileReport(resolve(baseDir, settings.out), found);
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
    onProgress: (e) => ui.log(e.message),
  }).finally(() => ui.done());
  if (parsed.results) {
    const folder = writeShard(resolve(parsed.results), shard);
    process.stderr.write(`raw results (shard ${shard.shard.index}/${shard.shard.total}): ${folder}\n`);
  }
  const result = report([shard]);
  const files = writeReport(resolve(baseDir, settings.out), result);
  return output(result, files, parsed);
}

/** Writes what both `compare` and `report` print; the exit status of the verdict. */
function output(result: Report, files: WrittenFiles, parsed: ReturnType<typeof parseCommandLine>): number {
  if (parsed.markdown)
    writeFileSync(resolve(parsed.markdown), renderMarkdown(result, { maxLength: Number.POSITIVE_INFINITY }));
  if (parsed.json) process.stdout.write(renderJson(result));
  else process.stdout.write(renderTerminal(result, { color: process.stdout.isTTY && !process.env.NO_COLOR }));
  const written = [
    files.report,
    files.markdown,
    ...files.scenarios.flatMap((s) => [s.folded.base, s.folded.head, s.flameGraph, s.diffFlameGraph]),
  ]
    .filter(Boolean)
    .map((f) => `  ${f}`);
  const merged = result.shards > 1 ? `merged ${result.shards} shards; ` : '';
  process.stderr.write(`\n${merged}files in ${files.dir}:\n${written.join('\n')}\n`);
  for (const note of files.notes) process.stderr.write(`note: ${note}\n`);
  return result.regressed && result.settings.failOnRegression ? 1 : 0;
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
  const files = writeReport(resolve(result.settings.out), result);
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
