// Bundles the Action entry into one self-contained file, dist/index.js, beside copies of
// @hotpath/compare's probe (dist/probe.cjs, preloaded into the servers) and report.html's viewer
// (dist/report-viewer.js and .css). Committed: GitHub runs the action from the repository as
// is. Output is deterministic so CI can rebuild it and fail when the committed bundle is stale.
import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

// The Action carries @actions/artifact (and the Azure blob client under it): minified, it stays
// a few MB in the repository.
await build({
  bundle: true,
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
  format: 'esm',
  banner: {
    js: "import { createRequire as __hotpathCreateRequire } from 'node:module'; const require = __hotpathCreateRequire(import.meta.url);",
  },
  minify: true,
  keepNames: true,
  entryPoints: ['src/action.ts'],
  outfile: 'dist/index.js',
});
const compare = dirname(createRequire(import.meta.url).resolve('@hotpath/compare/package.json'));
// The probe, and report.html's viewer (script and style) that writeReport inlines into the page.
for (const file of ['probe.cjs', 'report-viewer.js', 'report-viewer.css'])
  copyFileSync(join(compare, 'dist', file), join('dist', file));
