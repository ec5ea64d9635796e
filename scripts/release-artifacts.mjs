// What release.yml's build job (read-only token, no id-token: it runs every dependency's code)
// hands the jobs that hold write permissions (and run no dependency code) as an artifact:
//
//   node scripts/release-artifacts.mjs version-pr OUT
//     after `pnpm version-packages`: OUT/version.patch (its changes to package.json,
//     CHANGELOG.md and .changeset/ files only, as a binary git diff) and OUT/body.md (per bumped package, the new CHANGELOG section). The version-pr job
//     applies the patch, commits, pushes the branch and opens or updates the pull request.
//   node scripts/release-artifacts.mjs publish OUT
//     per public package whose version is not on npm yet: OUT/<tarball>.tgz (`pnpm pack`:
//     workspace ranges resolved) and OUT/<tarball>.tgz.notes.md (its CHANGELOG section). The
//     publish job runs `npm publish <tarball> --provenance --ignore-scripts` and a GitHub release
//     per tarball (OUT/tarballs.txt lists them, one a line).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { publicPackages } from './lib/checks.mjs';

const root = new URL('..', import.meta.url).pathname;
const [command, outArg] = process.argv.slice(2);
if (!['version-pr', 'publish'].includes(command ?? '') || !outArg) {
  console.error('usage: node scripts/release-artifacts.mjs version-pr|publish OUT');
  process.exit(2);
}
const out = resolve(outArg);
mkdirSync(out, { recursive: true });

/** The CHANGELOG.md section of one version (from its `## X.Y.Z` heading to the next). */
function changelogSection(dir, version) {
  let text;
  try {
    text = readFileSync(join(dir, 'CHANGELOG.md'), 'utf8');
  } catch {
    return '';
  }
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === `## ${version}`);
  if (start < 0) return '';
  const end = lines.findIndex((line, i) => i > start && /^## /.test(line));
  return lines
    .slice(start + 1, end < 0 ? undefined : end)
    .join('\n')
    .trim();
}

const git = (...args) =>
  execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });

/**
 * What `pnpm version-packages` changes and the version pull request carries: the manifests,
 * the changelogs and the changeset files it consumes. Anything else the build job changed
 * (a build output, a file a dependency's script wrote) stays out of the patch the job holding
 * the write token pushes.
 */
const VERSION_FILES = [':(glob)**/package.json', ':(glob)**/CHANGELOG.md', ':(glob).changeset/**'];

if (command === 'version-pr') {
  // OUT may be inside the work tree (then it stays out of the patch) or anywhere else.
  const inside = out.startsWith(root) ? [`:(exclude)${out.slice(root.length)}`] : [];
  git('add', '--all', '--', ...VERSION_FILES, ...inside);
  const left = git('status', '--porcelain', '--untracked-files=all', '--', '.', ...inside)
    .split('\n')
    .filter((line) => line !== '' && !/^[MADR] {2}/.test(line));
  if (left.length > 0)
    console.log(
      `release-artifacts: left out of the version pull request (not a package.json, CHANGELOG.md or .changeset/ file):\n${left.map((line) => `  ${JSON.stringify(line.slice(3))}`).join('\n')}`,
    );
  writeFileSync(join(out, 'version.patch'), git('diff', '--cached', '--binary'));
  const changed = new Set(git('diff', '--cached', '--name-only').split('\n'));
  const body = [
    'This pull request was opened by the release workflow: merging it publishes these versions.',
    '',
  ];
  for (const { dir, manifest } of publicPackages(root)) {
    const relative = dir.slice(root.length);
    if (!changed.has(`${relative}/package.json`)) continue;
    body.push(`## ${manifest.name}@${manifest.version}`, '', changelogSection(dir, manifest.version), '');
  }
  writeFileSync(join(out, 'body.md'), `${body.join('\n')}\n`);
  console.log(`release-artifacts: version.patch (${changed.size - 1} files) and body.md in ${outArg}`);
} else {
  const tarballs = [];
  for (const { dir, manifest } of publicPackages(root)) {
    const spec = `${manifest.name}@${manifest.version}`;
    const view = spawnSync('npm', ['view', spec, 'version'], { encoding: 'utf8' });
    if (view.status === 0 && view.stdout.trim() === manifest.version) {
      console.log(`release-artifacts: ${spec} is on npm`);
      continue;
    }
    if (view.status !== 0 && !/E404|404 Not Found/.test(view.stderr)) {
      console.error(`release-artifacts: npm view ${spec} failed:\n${view.stderr}`);
      process.exit(1);
    }
    const before = new Set(readdirSync(out));
    execFileSync('pnpm', ['pack', '--pack-destination', out], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tarball = readdirSync(out).find((name) => name.endsWith('.tgz') && !before.has(name));
    if (!tarball) throw new Error(`pnpm pack wrote no tarball for ${spec}`);
    writeFileSync(join(out, `${tarball}.notes.md`), `${changelogSection(dir, manifest.version)}\n`);
    console.log(`release-artifacts: ${spec} -> ${tarball}`);
    tarballs.push(tarball);
  }
  // Always one file, so the artifact exists also when only the Action is tagged.
  writeFileSync(join(out, 'tarballs.txt'), tarballs.map((name) => `${name}\n`).join(''));
  console.log(`release-artifacts: ${tarballs.length} tarball(s) to publish in ${outArg}`);
}
