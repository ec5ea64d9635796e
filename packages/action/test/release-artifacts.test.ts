// Issue #67: release.yml's build job (which runs every dependency's code) made the version pull
// request's patch with `git add --all`: anything the build changed was pushed by the job holding
// the write token. The patch now carries package.json, CHANGELOG.md and .changeset/ files only.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = new URL('../../../', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'hotpath-release-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
    cwd: root,
    encoding: 'utf8',
  });

function write(path: string, text: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe('release-artifacts version-pr', () => {
  it('puts only package.json, CHANGELOG.md and .changeset/ changes in the patch', () => {
    cpSync(join(REPO, 'scripts', 'release-artifacts.mjs'), join(root, 'scripts', 'release-artifacts.mjs'));
    cpSync(join(REPO, 'scripts', 'lib'), join(root, 'scripts', 'lib'), { recursive: true });
    write('package.json', '{"name":"root","private":true}\n');
    write('packages/x/package.json', '{"name":"@t/x","version":"1.0.0"}\n');
    write('packages/x/CHANGELOG.md', '# @t/x\n');
    write('packages/x/src/index.js', 'export const x = 1;\n');
    write('.changeset/a-change.md', '---\n"@t/x": patch\n---\n\nA change.\n');
    write('.github/workflows/ci.yml', 'on: push\n');
    git('init', '-q');
    git('add', '--all');
    git('commit', '-qm', 'start');
    // What `pnpm version-packages` does…
    write('packages/x/package.json', '{"name":"@t/x","version":"1.0.1"}\n');
    write('packages/x/CHANGELOG.md', '# @t/x\n\n## 1.0.1\n\n### Patch Changes\n\n- A change.\n');
    rmSync(join(root, '.changeset', 'a-change.md'));
    // …and what a dependency's script in the same job could do.
    write(
      '.github/workflows/ci.yml',
      'on: push\njobs: { steal: { runs-on: x, steps: [ { run: curl evil } ] } }\n',
    );
    write('packages/x/src/index.js', 'export const x = "backdoor";\n');
    write('packages/x/dist/evil.js', 'evil\n');
    write('.npmrc', '//registry.npmjs.org/:_authToken=stolen\n');

    const out = join(root, 'out');
    const r = spawnSync(
      process.execPath,
      [join(root, 'scripts', 'release-artifacts.mjs'), 'version-pr', out],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    expect(r.status, r.stderr).toBe(0);
    const patch = readFileSync(join(out, 'version.patch'), 'utf8');
    const files = [...patch.matchAll(/^diff --git a\/(\S+) b\//gm)].map((m) => m[1]).sort();
    expect(files).toEqual(['.changeset/a-change.md', 'packages/x/CHANGELOG.md', 'packages/x/package.json']);
    expect(patch).not.toMatch(/backdoor|evil|stolen|steal/);
    // What was left out is said, not silently dropped.
    expect(r.stdout).toContain('left out of the version pull request');
    expect(r.stdout).toContain('.github/workflows/ci.yml');
    expect(r.stdout).toContain('packages/x/dist/evil.js');
    expect(readFileSync(join(out, 'body.md'), 'utf8')).toContain('## @t/x@1.0.1');
  });
});
