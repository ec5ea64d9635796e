#!/usr/bin/env node
// API reports of the public packages (@microsoft/api-extractor), one per entry point of each
// package's `exports` map, committed as packages/<pkg>/api/<name>.api.md:
//   node scripts/api-report.mjs           check: fails when a built .d.ts surface differs from
//                                         its committed report (pnpm api:check)
//   node scripts/api-report.mjs --update  rewrites the reports (pnpm api:update)
// Reads the built declarations in dist/, so run it after `pnpm build`. One process and one
// TypeScript program serve every entry point.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  ExtractorMessageCategory,
} from '@microsoft/api-extractor';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

let update = false;
try {
  update = parseArgs({ options: { update: { type: 'boolean', default: false } } }).values.update;
} catch (err) {
  console.error(`api-report: ${err.message.split('\n')[0]} (usage: node scripts/api-report.mjs [--update])`);
  process.exit(2);
}

/** Every entry point with types of every public (not private) package. */
function entryPoints() {
  const entries = [];
  for (const dir of readdirSync(join(root, 'packages')).sort()) {
    const folder = join(root, 'packages', dir);
    const manifestPath = join(folder, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (manifest.private) continue;
    const unscoped = manifest.name.replace(/^@[^/]+\//, '');
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (typeof target !== 'object' || target === null || typeof target.types !== 'string') continue;
      const name = subpath.replace(/^\.\/?/, '');
      entries.push({
        label: name ? `${manifest.name}/${name}` : manifest.name,
        folder,
        manifestPath,
        types: join(folder, target.types),
        reportName: name ? `${unscoped}-${name.replaceAll('/', '-')}` : unscoped,
      });
    }
  }
  return entries;
}

/** API Extractor's settings for one entry point (no config files on disk). */
function configOf(entry, allTypes, temp) {
  return ExtractorConfig.prepare({
    // Not read: it only names the configuration in API Extractor's own messages.
    configObjectFullPath: join(entry.folder, 'api-extractor.json'),
    packageJsonFullPath: entry.manifestPath,
    configObject: {
      projectFolder: entry.folder,
      mainEntryPointFilePath: entry.types,
      bundledPackages: [],
      newlineKind: 'lf',
      enumMemberOrder: 'by-name',
      compiler: {
        // The built declarations only, with the packages' own settings (tsconfig.base.json).
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2022'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            skipLibCheck: true,
            types: ['node'],
          },
          files: allTypes,
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: entry.reportName,
        reportFolder: join(entry.folder, 'api'),
        reportTempFolder: join(temp, entry.reportName),
        // Types reachable from the API but not exported by name are part of the surface too.
        includeForgottenExports: true,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'warning' },
          // The packages use no release tags (@public, @beta): everything exported is public.
          'ae-missing-release-tag': { logLevel: 'none' },
          // Doc comments are welcome, not required of every member.
          'ae-undocumented': { logLevel: 'none' },
          // A type reachable from the API but not exported by name: a note in the report.
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
        },
        // The doc comments are prose, not TSDoc; the report is about the surface.
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
  });
}

const temp = mkdtempSync(join(tmpdir(), 'hotpath-api-'));
const failures = [];
try {
  const entries = entryPoints().filter((entry) => {
    if (existsSync(entry.types)) return true;
    failures.push(`${entry.label}: ${relative(root, entry.types)} is missing (run pnpm build first)`);
    return false;
  });
  const allTypes = entries.map((entry) => entry.types);
  const configs = entries.map((entry) => configOf(entry, allTypes, temp));
  const first = configs[0];
  const compilerState = first && CompilerState.create(first, { additionalEntryPoints: allTypes });
  for (const [i, entry] of entries.entries()) {
    if (update) mkdirSync(join(entry.folder, 'api'), { recursive: true });
    const messages = [];
    const result = Extractor.invoke(configs[i], {
      localBuild: update,
      compilerState,
      messageCallback(message) {
        // Console messages (report created, report changed) are summed up below instead.
        const serious =
          message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning;
        if (serious && message.category !== ExtractorMessageCategory.Console)
          messages.push(message.formatMessageWithLocation(root));
        message.handled = true;
      },
    });
    const report = relative(root, join(entry.folder, 'api', `${entry.reportName}.api.md`));
    if (result.apiReportChanged && update) console.log(`${entry.label}: ${report} written`);
    else if (result.apiReportChanged) {
      const built = join(temp, entry.reportName, `${entry.reportName}.api.md`);
      const diff = spawnSync(
        'diff',
        ['-u', '--label', report, '--label', 'built', join(root, report), built],
        {
          encoding: 'utf8',
        },
      );
      failures.push(
        `${entry.label}: the API differs from ${report}; run pnpm api:update and commit the report if the change is intended\n${diff.stdout}`,
      );
    } else console.log(`${entry.label}: ${report} is up to date`);
    for (const message of messages) failures.push(`${entry.label}: ${message}`);
  }
} finally {
  rmSync(temp, { recursive: true, force: true });
}

if (failures.length > 0) {
  for (const failure of failures) console.error(failure);
  process.exit(1);
}
