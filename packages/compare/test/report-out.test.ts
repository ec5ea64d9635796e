// A results file is an artifact anyone could have written: `hotpath report DIR` takes its output
// folder from --out or the default, never from the settings the results recorded (issue #46).
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, FIXTURES } from './helpers/repo.js';

describe('hotpath report: the output folder is the reporter’s choice', () => {
  let root: string;
  let results: string;
  let elsewhere: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-report-out-'));
    results = join(root, 'downloaded');
    cpSync(join(FIXTURES, 'recorded-shard'), results, { recursive: true });
    // The artifact names another folder, holding a file an earlier hotpath run "wrote" there
    // (listed in its manifest), which claiming that folder would delete.
    elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'precious.txt'), 'keep me');
    writeFileSync(
      join(elsewhere, '.hotpath-files.json'),
      JSON.stringify({ tool: 'hotpath', files: ['precious.txt'] }),
    );
    const file = join(results, 'shard-1-of-1', 'hotpath-results.json');
    const shard = JSON.parse(readFileSync(file, 'utf8'));
    shard.settings.out = elsewhere;
    writeFileSync(file, JSON.stringify(shard));
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const listing = (dir: string) => readdirSync(dir).sort();

  it('without --out writes to ./hotpath-report and leaves the folder the results name alone', () => {
    const work = join(root, 'work');
    mkdirSync(work);
    const r = spawnSync(process.execPath, [CLI_BIN, 'report', results], { cwd: work, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(listing(elsewhere)).toEqual(['.hotpath-files.json', 'precious.txt']);
    expect(readFileSync(join(elsewhere, 'precious.txt'), 'utf8')).toBe('keep me');
    expect(existsSync(join(work, 'hotpath-report', 'report.json'))).toBe(true);
    expect(r.stderr).toContain(join(work, 'hotpath-report'));
    expect(r.stderr).not.toContain(elsewhere);
  });

  it('with --out writes there only', () => {
    const out = join(root, 'chosen');
    const r = spawnSync(process.execPath, [CLI_BIN, 'report', results, '--out', out], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(listing(elsewhere)).toEqual(['.hotpath-files.json', 'precious.txt']);
    expect(listing(out)).toContain('report.json');
  });
});
