import { writeFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { SymbolCache } from './binary-symbols.js';
import type { RecordCliOptions } from './cli-options.js';
import { HotpathTicksError } from './errors.js';
import { renderFlameGraph } from './flamegraph.js';
import { toFolded } from './folded.js';
import { mergeProfiles } from './merge.js';
import type { Profile } from './model.js';
import { defaultRecordDir, recordCommand } from './record.js';
import { toJsonReport } from './report-json.js';
import { renderTextReport } from './report-text.js';
import { toSpeedscope } from './speedscope.js';
import { parseTickLog } from './tick-log.js';

/** Files written beside the logs. */
export const RECORD_FILES = {
  folded: 'profile.folded',
  flamegraph: 'flamegraph.html',
  speedscope: 'profile.speedscope.json',
  text: 'report.txt',
  json: 'report.json',
} as const;

/**
 * `hotpath-ticks record`: runs the command, then reads its logs (several when it started
 * several node processes or workers: added together) and writes the report and the files.
 * Resolves with the command's exit code.
 */
export async function runRecord(options: RecordCliOptions): Promise<number> {
  const dir = options.out ?? defaultRecordDir();
  const result = await recordCommand({ command: options.command, dir });
  const shown = relative(process.cwd(), dir) || '.';
  if (result.logs.length === 0) {
    const how =
      result.via === 'node'
        ? `node was given --prof and --logfile=${join(shown, 'v8.log')}`
        : 'Node does not accept --prof in NODE_OPTIONS, so a node that adds it was put first on PATH; a command that starts node by its full path, or is not Node at all, is not profiled';
    const error = new HotpathTicksError(
      'HP_TICKS_NO_LOG',
      `"${options.command.join(' ')}" exited with ${result.exitCode} and wrote no V8 tick log into ${shown} (${how}); expected a command that runs node, e.g. hotpath-ticks record -- node app.js`,
    );
    process.stderr.write(`hotpath-ticks: ${error.message}\n`);
    return result.exitCode === 0 ? 1 : result.exitCode;
  }
  const tickOptions = {
    resolveSymbols: options.symbols,
    symbolCache: new SymbolCache(),
    nm: options.nm,
    objdump: options.objdump,
    symbolCacheDir: options.symbolCacheDir,
  };
  const profiles: Profile[] = [];
  for (const log of result.logs) profiles.push(await parseTickLog(log, tickOptions));
  const [only] = profiles;
  const profile = only && profiles.length === 1 ? only : mergeProfiles(profiles);
  const [onlyLog] = result.logs;
  const title = options.command.join(' ');
  const report = options.json
    ? `${JSON.stringify(toJsonReport(profile, { top: options.top }), null, 2)}\n`
    : renderTextReport(profile, {
        fileName: onlyLog && result.logs.length === 1 ? basename(onlyLog) : `${result.logs.length} logs`,
        top: options.top,
      });
  await Promise.all([
    writeFile(join(dir, RECORD_FILES.folded), toFolded(profile)),
    writeFile(join(dir, RECORD_FILES.flamegraph), renderFlameGraph(profile, { format: 'html', title })),
    writeFile(
      join(dir, RECORD_FILES.speedscope),
      `${JSON.stringify(toSpeedscope(profile, { name: title }))}\n`,
    ),
    writeFile(join(dir, options.json ? RECORD_FILES.json : RECORD_FILES.text), report),
  ]);
  process.stdout.write(report);
  const logs = result.logs.map((log) => basename(log)).join(', ');
  process.stderr.write(
    `hotpath-ticks: ${profile.totalTicks} ticks from ${logs}; written to ${shown}/: ${RECORD_FILES.flamegraph}, ${RECORD_FILES.speedscope}, ${RECORD_FILES.folded}, ${options.json ? RECORD_FILES.json : RECORD_FILES.text}\n`,
  );
  return result.exitCode;
}
