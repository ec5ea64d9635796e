// Bundles the Action entry, the CLI and the probe into self-contained files under dist/
// (committed: GitHub runs the action from the repository as is). Output is deterministic so CI
// can rebuild it and fail when the committed bundle is stale.
import { chmodSync } from 'node:fs';
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
};

const esm = {
  ...common,
  format: 'esm',
  banner: {
    js: "import { createRequire as __hotpathCreateRequire } from 'node:module'; const require = __hotpathCreateRequire(import.meta.url);",
  },
};

// The Action carries @actions/artifact (and the Azure blob client under it): minified, it stays
// a few MB in the repository.
await build({
  ...esm,
  minify: true,
  keepNames: true,
  entryPoints: ['src/action.ts'],
  outfile: 'dist/index.js',
});
await build({ ...esm, entryPoints: ['src/cli.ts'], outfile: 'dist/cli.js' });
chmodSync('dist/cli.js', 0o755);
// The probe is preloaded (NODE_OPTIONS=--require) into the user's Node, whatever its version:
// CommonJS, no top-level await, an older target.
await build({
  ...common,
  format: 'cjs',
  target: 'node18',
  minify: true,
  entryPoints: ['src/probe.ts'],
  outfile: 'dist/probe.cjs',
});
