// The `hotpath` command runs from one file: the CLI and everything it imports (its own modules,
// zod, semver, hdr-histogram-js, the sibling packages), bundled. Loaded module by module from
// dist/ it opened some 430 files and took 0.75–0.83 s to print a one-line error on this 2-CPU
// machine; from one file, 0.33–0.42 s. The library (`import '@hotpath/compare'`) stays dist/'s
// modules. Not minified: a stack trace from a user's run names the functions and files' code.
import { build } from 'esbuild';

await build({
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
  // CommonJS dependencies (semver, hdr-histogram-js) call require(): the bundle gives them one.
  banner: {
    js: "import { createRequire as __hotpathCreateRequire } from 'node:module'; const require = __hotpathCreateRequire(import.meta.url);",
  },
  entryPoints: ['dist/cli/main.js'],
  outfile: 'dist/hotpath.mjs',
});
