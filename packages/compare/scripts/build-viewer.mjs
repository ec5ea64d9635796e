// report.html's script and style: viewer/report-viewer.ts with d3-flame-graph and the d3 modules
// it uses, bundled into one minified script (dist/report-viewer.js) and one style sheet
// (dist/report-viewer.css) that render/html.ts inlines into every page, so a report opens offline
// and from an artifact zip. Each bundled package's name, version and licence head the script.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const result = await build({
  bundle: true,
  platform: 'browser',
  format: 'iife',
  target: 'es2020',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
  entryPoints: ['viewer/report-viewer.ts'],
  outfile: 'dist/report-viewer.js',
});

// The packages the bundle holds, from the files esbuild read.
const packages = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  // The last node_modules/<name>/ of the path (pnpm nests them).
  const match = /^(.*node_modules\/)((?:@[^/]+\/)?[^/]+)\//.exec(input.replace(/\\/g, '/'));
  if (!match || packages.has(match[2])) continue;
  const pkg = JSON.parse(readFileSync(join(match[1], match[2], 'package.json'), 'utf8'));
  packages.set(
    match[2],
    `${pkg.name} ${pkg.version} (${pkg.license}${pkg.author ? `, ${pkg.author.name ?? pkg.author}` : ''})`,
  );
}
const banner = `/*! report.html viewer of @hotpath/compare; bundles ${[...packages.values()].sort().join('; ')} */\n`;
const out = 'dist/report-viewer.js';
writeFileSync(out, banner + readFileSync(out, 'utf8'));
