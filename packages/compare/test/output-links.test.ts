// Issue #67: report output was written through symbolic links. A checked-out branch planted
// `hotpath-report/head.folded -> ~/.bashrc`-like links; `hotpath report` wrote a profile line
// (a function name such as `$(touch …)`) into the link's target, and the link survived later
// runs because the manifest listed only new files. Every file hotpath writes now goes to a new
// file renamed over its name (the link replaced, its target unchanged), the output folder is
// claimed by lstat (a link in its place refused), and a file named by a flag is never written
// through a link.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  linkSync,
  lstatSync,
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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HotpathCompareError } from '../src/errors.js';
import { writeOutputFile } from '../src/output-file.js';
import { MANIFEST } from '../src/run/out-dir.js';
import { writeProfileReport } from '../src/run/report-files.js';
import type { ProfileReport } from '../src/run-artifacts.js';
import { readShard, writeShard } from '../src/shard/file.js';
import { CLI_BIN, FIXTURES } from './helpers/repo.js';

const VICTIM_TEXT = '# a user file: must never change\n';

let root: string;
let results: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'hotpath-links-'));
  results = join(root, 'results');
  cpSync(join(FIXTURES, 'recorded-shard'), results, { recursive: true });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A file outside the output folder that a planted link points to. */
function victim(name: string): string {
  const path = join(root, `victim-${name}`);
  writeFileSync(path, VICTIM_TEXT);
  return path;
}

const report = (out: string, ...more: string[]) =>
  spawnSync(process.execPath, [CLI_BIN, 'report', results, '--out', out, ...more], {
    encoding: 'utf8',
    timeout: 60_000,
  });

describe('hotpath report into a folder with planted links', () => {
  it('replaces each link by the file it writes and leaves every target unchanged, twice', () => {
    const out = join(root, 'planted');
    mkdirSync(out);
    const targets = {
      'head.folded': victim('bashrc'),
      'report.json': victim('report'),
      'report.html': victim('html'),
      'diff-flamegraph.svg': victim('svg'),
      [MANIFEST]: victim('manifest'),
    };
    for (const [name, target] of Object.entries(targets)) symlinkSync(target, join(out, name));
    // A dangling link: following it would create its target.
    const dangling = join(root, 'would-be-created');
    symlinkSync(dangling, join(out, 'base.folded'));
    for (const run of [1, 2]) {
      const r = report(out);
      expect(r.status, `run ${run}: ${r.stderr}`).toBe(0);
      for (const [name, target] of Object.entries(targets)) {
        expect(readFileSync(target, 'utf8'), `${name} → ${target}`).toBe(VICTIM_TEXT);
        expect(lstatSync(join(out, name)).isSymbolicLink(), name).toBe(false);
      }
      expect(existsSync(dangling)).toBe(false);
      expect(lstatSync(join(out, 'base.folded')).isFile()).toBe(true);
      expect(readFileSync(join(out, 'head.folded'), 'utf8')).toContain(';');
      // Written by this run, so listed: the next run removes them rather than finding strangers.
      const manifest = JSON.parse(readFileSync(join(out, MANIFEST), 'utf8'));
      expect(manifest.files).toEqual(expect.arrayContaining(['head.folded', 'base.folded', 'report.json']));
    }
    expect(readdirSync(out).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses an output folder that is a link, writing nothing into its target', () => {
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'precious.txt'), VICTIM_TEXT);
    const out = join(root, 'linked-out');
    symlinkSync(elsewhere, out);
    const r = report(out);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('HP_COMPARE_UNSAFE_OUTPUT');
    expect(r.stderr).toContain(`${out} is a symbolic link: expected a folder`);
    expect(readdirSync(elsewhere)).toEqual(['precious.txt']);
  });

  it('refuses --markdown naming a link, leaving its target unchanged', () => {
    const target = victim('markdown');
    const link = join(root, 'comment.md');
    symlinkSync(target, link);
    const r = report(join(root, 'md-out'), '--markdown', link);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('HP_COMPARE_UNSAFE_OUTPUT');
    expect(r.stderr).toContain(`${link} is a symbolic link`);
    expect(readFileSync(target, 'utf8')).toBe(VICTIM_TEXT);
  });
});

describe('the other writers', () => {
  it('writeOutputFile replaces a hard link, leaving the other name’s content unchanged', () => {
    const target = victim('hard');
    const path = join(root, 'hard-linked.json');
    linkSync(target, path);
    writeOutputFile(path, '{"new":true}');
    expect(readFileSync(target, 'utf8')).toBe(VICTIM_TEXT);
    expect(readFileSync(path, 'utf8')).toBe('{"new":true}');
  });

  it('writeOutputFile refuses a folder where the file goes', () => {
    const path = join(root, 'a-folder');
    mkdirSync(path);
    expect(() => writeOutputFile(path, 'x')).toThrow(HotpathCompareError);
  });

  it("`hotpath profile`'s writer replaces planted links", () => {
    const out = join(root, 'profile-out');
    mkdirSync(out);
    const target = victim('profile');
    symlinkSync(target, join(out, 'profile.json'));
    const profile: ProfileReport = {
      schema: 'hotpath-profile/1',
      rounds: [],
      profilers: [],
      topFunctions: [],
      warnings: [],
      settings: {} as ProfileReport['settings'],
    };
    writeProfileReport(out, profile);
    expect(readFileSync(target, 'utf8')).toBe(VICTIM_TEXT);
    expect(JSON.parse(readFileSync(join(out, 'profile.json'), 'utf8')).schema).toBe('hotpath-profile/1');
  });

  it('writeShard refuses a shard folder that is a link, and replaces a planted results file link', () => {
    const shard = readShard(join(results, 'shard-1-of-1', 'hotpath-results.json'));
    const linkedRoot = join(root, 'shard-linked');
    mkdirSync(linkedRoot);
    const elsewhere = join(root, 'shard-elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(linkedRoot, 'shard-1-of-1'));
    expect(() => writeShard(linkedRoot, shard)).toThrow(/is a symbolic link: expected a folder/);
    expect(readdirSync(elsewhere)).toEqual([]);

    const plantedRoot = join(root, 'shard-planted');
    mkdirSync(join(plantedRoot, 'shard-1-of-1'), { recursive: true });
    const target = victim('results');
    symlinkSync(target, join(plantedRoot, 'shard-1-of-1', 'hotpath-results.json'));
    writeShard(plantedRoot, shard);
    expect(readFileSync(target, 'utf8')).toBe(VICTIM_TEXT);
    expect(readShard(join(plantedRoot, 'shard-1-of-1', 'hotpath-results.json')).shard).toEqual(shard.shard);
  });
});
