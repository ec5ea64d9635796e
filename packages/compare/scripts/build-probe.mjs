// The probe is preloaded (NODE_OPTIONS=--require) into the user's server, whatever its Node
// version and module system: one self-contained CommonJS file, no top-level await, an older target.
import { build } from 'esbuild';

await build({
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  entryPoints: ['src/measure/probe.ts'],
  outfile: 'dist/probe.cjs',
});
