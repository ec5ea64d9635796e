// Bundles the Action entry and the CLI into self-contained files under dist/ (committed:
// GitHub runs the action from the repository as is). Output is deterministic so CI can
// rebuild it and fail when the committed bundle is stale.
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  legalComments: 'none',
  logLevel: 'warning',
  banner: {
    js: "import { createRequire as __hotpathCreateRequire } from 'node:module'; const require = __hotpathCreateRequire(import.meta.url);",
  },
};

await build({ ...common, entryPoints: ['src/action.ts'], outfile: 'dist/index.js' });
