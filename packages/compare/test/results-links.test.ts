// Issue #67: profile files a results file names were looked at with statSync, so a profile
// linked to a credentials file was followed and its first bytes put in the error message. They
// are looked at with lstat now and refused when they are links (or have a link on their path
// inside the results folder), as results files are; an error never quotes a file's bytes.
import { cpSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { HotpathCompareError } from '../src/errors.js';
import { readShard, readShards } from '../src/shard/file.js';
import { FIXTURES } from './helpers/repo.js';

const SECRET = 'root:x:0:0:SECRET-TOKEN-ghs_abcdef0123456789';

const root = mkdtempSync(join(tmpdir(), 'hotpath-results-links-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let results: string;
let shard: string;
let credentials: string;
let n = 0;
beforeEach(() => {
  results = join(root, `results-${++n}`);
  cpSync(join(FIXTURES, 'recorded-shard'), results, { recursive: true });
  shard = join(results, 'shard-1-of-1');
  credentials = join(root, `credentials-${n}`);
  writeFileSync(credentials, `${SECRET}\n`);
});

function refusal(run: () => unknown): HotpathCompareError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(HotpathCompareError);
    return err as HotpathCompareError;
  }
  throw new Error('expected a refusal');
}

describe('profile files of a results folder are never followed through links', () => {
  it('refuses a profile that is a link to a credentials file, quoting none of its bytes', () => {
    const profile = join(shard, 'profiles', readdirSync(join(shard, 'profiles'))[0] as string);
    rmSync(profile);
    symlinkSync(credentials, profile);
    const err = refusal(() => readShards([results]));
    expect(err.code).toBe('HP_COMPARE_RESULTS');
    expect(err.message).toContain(`profile ${profile} is a symbolic link: expected a regular file`);
    expect(err.message).not.toContain('SECRET');
    expect(err.message).not.toContain('root:x');
  });

  it('refuses a profiles folder that is a link (a link on the path inside the results folder)', () => {
    const elsewhere = join(root, `elsewhere-${n}`);
    renameSync(join(shard, 'profiles'), elsewhere);
    symlinkSync(elsewhere, join(shard, 'profiles'));
    const err = refusal(() => readShards([results]));
    expect(err.code).toBe('HP_COMPARE_RESULTS');
    expect(err.message).toContain('has a symbolic link on its path: expected a regular file');
  });

  it('refuses a results file given by path that is a link', () => {
    const linked = join(root, `linked-results-${n}.json`);
    symlinkSync(join(shard, 'hotpath-results.json'), linked);
    const err = refusal(() => readShard(linked));
    expect(err.message).toContain('is a symbolic link');
  });

  it('a profile that is not JSON is named without its bytes', () => {
    const profile = join(shard, 'profiles', readdirSync(join(shard, 'profiles'))[0] as string);
    writeFileSync(profile, SECRET);
    const err = refusal(() => readShards([results]));
    expect(err.message).toContain(`profile ${profile} is not valid JSON: a syntax error`);
    expect(err.message).not.toContain('SECRET');
    expect(err.message).not.toContain('root');
  });

  it('the recorded results, without links, still read', () => {
    expect(readShards([results])).toHaveLength(1);
  });
});
