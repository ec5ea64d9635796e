// Issue #46: `hotpath init` in a cloned repository wrote through symbolic links — a dangling
// `hotpath.config.json` link made it create the file outside the project, a `.gitignore` link had
// `hotpath-report/` appended to the file it named, and --force overwrote a link's target. init
// now refuses any link on the path of a file it writes, names it, and writes nothing.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HotpathCompareError } from '../src/errors.js';
import { appendToProjectFile, checkProjectPath, writeProjectFile } from '../src/init/project-files.js';
import { CLI_BIN } from './helpers/repo.js';

let root: string;
let project: string;
let outside: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hotpath-init-links-'));
  project = join(root, 'project');
  outside = join(root, 'outside');
  mkdirSync(project);
  mkdirSync(outside);
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'app', scripts: { start: 'node server.js' } }, null, 2)}\n`,
  );
  writeFileSync(
    join(project, 'server.js'),
    'require("node:http").createServer().listen(process.env.PORT);\n',
  );
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const init = (...args: string[]) =>
  spawnSync(process.execPath, [CLI_BIN, 'init', '--no-install', '--url', '/', ...args], {
    cwd: project,
    encoding: 'utf8',
    input: '',
    timeout: 60_000,
  });

/** Every file below the project (relative names), to show that a refusal wrote nothing. */
const projectFiles = () => readdirSync(project, { recursive: true, encoding: 'utf8' }).sort();

describe('hotpath init never writes through a symbolic link', () => {
  it.each([[[]], [['--force']]])(
    'a dangling hotpath.config.json link: refused, the target not created (%j)',
    (args) => {
      const target = join(outside, 'created-by-init.json');
      symlinkSync(target, join(project, 'hotpath.config.json'));
      const before = projectFiles();
      const r = init(...args);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(
        'hotpath: HP_COMPARE_INIT_UNSAFE_PATH: refusing to write hotpath.config.json:',
      );
      expect(r.stderr).toContain(`hotpath.config.json is a symbolic link (to ${target})`);
      expect(existsSync(target)).toBe(false);
      expect(readdirSync(outside)).toEqual([]);
      expect(projectFiles()).toEqual(before); // nothing else written either
      expect(r.stderr).not.toContain('wrote ');
    },
  );

  it.each([[[]], [['--force']]])(
    'a .gitignore link to a file outside: refused, the file untouched (%j)',
    (args) => {
      const target = join(outside, 'gitignore');
      writeFileSync(target, 'node_modules');
      symlinkSync(target, join(project, '.gitignore'));
      const r = init(...args);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(
        `refusing to write .gitignore: .gitignore is a symbolic link (to ${target})`,
      );
      expect(readFileSync(target, 'utf8')).toBe('node_modules');
      expect(existsSync(join(project, 'hotpath.config.json'))).toBe(false);
    },
  );

  it('a workflow that links to a file outside, with --force: refused, the file untouched', () => {
    const target = join(outside, 'ci.yml');
    writeFileSync(target, 'name: mine\n');
    mkdirSync(join(project, '.github', 'workflows'), { recursive: true });
    symlinkSync(target, join(project, '.github', 'workflows', 'hotpath-report.yml'));
    const r = init('--force');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      'refusing to write .github/workflows/hotpath-report.yml: .github/workflows/hotpath-report.yml is a symbolic link',
    );
    expect(readFileSync(target, 'utf8')).toBe('name: mine\n');
  });

  it('a .github folder that links elsewhere: refused, nothing written there', () => {
    symlinkSync(outside, join(project, '.github'));
    const r = init();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `refusing to write .github/workflows/hotpath.yml: .github (on the path of .github/workflows/hotpath.yml) is a symbolic link (to ${outside})`,
    );
    expect(readdirSync(outside)).toEqual([]);
  });

  it('a package.json that links elsewhere: refused before anything is written', () => {
    const target = join(outside, 'package.json');
    writeFileSync(target, readFileSync(join(project, 'package.json')));
    rmSync(join(project, 'package.json'));
    symlinkSync(target, join(project, 'package.json'));
    const r = init();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('refusing to write package.json: package.json is a symbolic link');
    expect(JSON.parse(readFileSync(target, 'utf8')).devDependencies).toBeUndefined();
    expect(existsSync(join(project, 'hotpath.config.json'))).toBe(false);
  });

  it('a link name with terminal escapes is printed escaped', () => {
    const target = join(outside, 'x\u001b]0;pwned\u0007');
    symlinkSync(target, join(project, 'hotpath.config.json'));
    const r = init();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('x\\u001b]0;pwned\\u0007)');
    expect(r.stderr).not.toMatch(/[\u001b\u0007]/);
  });

  it('without links, init still writes everything (and a second run with --force replaces files)', () => {
    expect(init().status).toBe(0);
    expect(readFileSync(join(project, '.gitignore'), 'utf8')).toBe('hotpath-report/\n');
    writeFileSync(join(project, 'hotpath.config.json'), '{}\n');
    const forced = init('--force');
    expect(forced.status, forced.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(project, 'hotpath.config.json'), 'utf8')).start).toBe(
      'node server.js',
    );
    expect(readFileSync(join(project, '.gitignore'), 'utf8')).toBe('hotpath-report/\n');
  });
});

describe('the writes themselves refuse a link that appears after the check (O_NOFOLLOW, O_EXCL)', () => {
  const refused = (work: () => unknown) => {
    let error: unknown;
    try {
      work();
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HotpathCompareError);
    expect((error as HotpathCompareError).code).toBe('HP_COMPARE_INIT_UNSAFE_PATH');
    expect((error as Error).message).toContain('is a symbolic link');
  };

  it('a new file, a replaced file and an append each refuse the link and leave its target as it was', () => {
    const dangling = join(outside, 'new');
    symlinkSync(dangling, join(project, 'a'));
    refused(() => writeProjectFile(project, 'a', 'x', false));
    refused(() => writeProjectFile(project, 'a', 'x', true));
    refused(() => appendToProjectFile(project, 'a', () => 'x'));
    expect(existsSync(dangling)).toBe(false);
    const file = join(outside, 'file');
    writeFileSync(file, 'kept');
    symlinkSync(file, join(project, 'b'));
    refused(() => writeProjectFile(project, 'b', 'x', true));
    refused(() => appendToProjectFile(project, 'b', () => 'x'));
    expect(readFileSync(file, 'utf8')).toBe('kept');
    symlinkSync(outside, join(project, 'dir'));
    refused(() => writeProjectFile(project, 'dir/c', 'x', false));
    expect(readdirSync(outside).sort()).toEqual(['file']);
  });

  it('checkProjectPath: absent, a regular file, and what is neither', () => {
    expect(checkProjectPath(project, '.github/workflows/hotpath.yml')).toBe(false);
    expect(checkProjectPath(project, 'package.json')).toBe(true);
    mkdirSync(join(project, '.gitignore'));
    expect(() => checkProjectPath(project, '.gitignore')).toThrow('.gitignore is not a regular file');
    expect(() => checkProjectPath(project, 'server.js/x')).toThrow('is not a folder');
  });
});
