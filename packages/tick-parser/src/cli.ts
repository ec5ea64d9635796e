#!/usr/bin/env node
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { SymbolCache } from './binary-symbols.js';
import { parseCliOptions, parseRecordOptions, USAGE } from './cli-options.js';
import { runRecord } from './cli-record.js';
import { deferOptimisingCompilers } from './cli-tiering.js';
import { diffProfiles } from './diff.js';
import { HotpathTicksError } from './errors.js';
import { renderDiffFlameGraph, renderFlameGraph } from './flamegraph.js';
import { toFolded } from './folded.js';
import { readProfile } from './read-profile.js';
import { renderDiffText } from './report-diff-text.js';
import { toJsonReport } from './report-json.js';
import { renderTextReport } from './report-text.js';
import { toSpeedscope } from './speedscope.js';

/** The package's version (the bundle sits in dist/, package.json one folder up). */
function version(): string {
  try {
    return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    process.stdout.write(`hotpath-ticks ${version()}\n`);
    return 0;
  }
  const deferMs = Number(process.env.HOTPATH_TICKS_OPTIMIZE_AFTER_MS ?? '150');
  deferOptimisingCompilers(Number.isFinite(deferMs) && deferMs >= 0 ? deferMs : 150);
  if (argv[0] === 'record') {
    const options = parseRecordOptions(argv.slice(1));
    if (options.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    return runRecord(options);
  }
  const options = parseCliOptions(argv);
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const tickOptions = {
    resolveSymbols: options.symbols,
    symbolCache: new SymbolCache(),
    nm: options.nm,
    objdump: options.objdump,
    symbolCacheDir: options.symbolCacheDir,
  };
  const [head, base] = await Promise.all([
    readProfile(options.file, tickOptions),
    options.diff === undefined ? undefined : readProfile(options.diff, tickOptions),
  ]);
  const format = options.flamegraph?.toLowerCase().endsWith('.svg') ? 'svg' : 'html';
  let out: string;
  if (base && options.diff !== undefined) {
    const diff = diffProfiles(base, head, { limit: options.top });
    out = options.json
      ? `${JSON.stringify(diff, null, 2)}\n`
      : renderDiffText(diff, basename(options.diff), basename(options.file));
    if (options.flamegraph) {
      const title = `${basename(options.diff)} → ${basename(options.file)} (red: hotter, blue: cooler)`;
      await writeFile(options.flamegraph, renderDiffFlameGraph(base, head, { format, title }));
    }
  } else {
    if (options.json) out = `${JSON.stringify(toJsonReport(head, { top: options.top }), null, 2)}\n`;
    else if (options.folded) out = toFolded(head);
    else if (options.speedscope)
      out = `${JSON.stringify(toSpeedscope(head, { name: basename(options.file) }))}\n`;
    else out = renderTextReport(head, { fileName: basename(options.file), top: options.top });
    if (options.flamegraph) {
      await writeFile(options.flamegraph, renderFlameGraph(head, { format, title: basename(options.file) }));
    }
  }
  process.stdout.write(out);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof HotpathTicksError) {
      process.stderr.write(`hotpath-ticks: ${error.message}\n`);
      process.exitCode =
        error.code === 'HP_TICKS_BAD_OPTION' || error.code === 'HP_TICKS_UNKNOWN_FORMAT' ? 2 : 1;
    } else {
      const e = error as NodeJS.ErrnoException;
      process.stderr.write(`hotpath-ticks: ${e.code ? `${e.code}: ` : ''}${e.message ?? String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
