import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../src/cli/args.js';
import { openerFor, openFile } from '../src/cli/open.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('hotpath compare --open', () => {
  it('is a flag of compare and report', () => {
    expect(parseCommandLine(['compare', '--start', 'node s.js', '--open']).open).toBe(true);
    expect(parseCommandLine(['report', 'results', '--open']).open).toBe(true);
    expect(parseCommandLine(['compare', '--start', 'node s.js']).open).toBe(false);
  });

  it('uses each platform’s opener', () => {
    expect(openerFor('linux', '/r/report.html')).toEqual({ command: 'xdg-open', args: ['/r/report.html'] });
    expect(openerFor('darwin', '/r/report.html')).toEqual({ command: 'open', args: ['/r/report.html'] });
    expect(openerFor('win32', 'C:\\r\\report.html').command).toBe('cmd');
    expect(openerFor('win32', 'C:\\r\\report.html').args.slice(-2)).toEqual(['""', 'C:\\r\\report.html']);
  });

  it.runIf(process.platform === 'linux')('hands the file to xdg-open on the PATH', async () => {
    // A stand-in desktop opener: a real executable that records what it was given.
    const bin = join(dir, 'bin');
    const log = join(dir, 'opened.txt');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > ${JSON.stringify(log)}\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const saved = process.env.PATH;
    process.env.PATH = `${bin}:${saved}`;
    try {
      const file = join(dir, 'my report.html');
      expect(await openFile(file, 'linux')).toEqual({ opened: true, command: 'xdg-open' });
      await expect.poll(() => existsSync(log) && readFileSync(log, 'utf8')).toBe(file);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('says so, without throwing, where there is no opener', async () => {
    const saved = process.env.PATH;
    process.env.PATH = join(dir, 'empty');
    try {
      expect(await openFile(join(dir, 'report.html'), 'linux')).toEqual({
        opened: false,
        reason: 'no xdg-open on this machine',
      });
    } finally {
      process.env.PATH = saved;
    }
  });
});
