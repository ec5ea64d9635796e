import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseTickLog } from '../src/index.js';
import { defined } from './helpers/defined.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-addr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Address of a defined code symbol in a binary, as nm prints it (file address). */
function symbolAddress(binary: string, name: string, dynamic = false): number {
  const out = execFileSync('nm', [...(dynamic ? ['-D'] : []), '--defined-only', '--', binary], {
    maxBuffer: 256 * 1024 * 1024,
  });
  const line = out
    .toString()
    .split('\n')
    .find((l) => /^[0-9a-f]+ [TtWw] /.test(l) && l.split(' ')[2]?.replace(/@.*$/, '') === name);
  if (!line) throw new Error(`${name} not in ${binary}`);
  return Number.parseInt(line, 16); // the address: the hex digits before the first space
}

function isExecutable(binary: string): boolean {
  const header = readFileSync(binary).subarray(0, 18);
  return header.readUInt16LE(16) === 2;
}

/** The libc this node process runs with, from /proc/self/maps. */
function libcPath(): string {
  const maps = readFileSync('/proc/self/maps', 'utf8');
  const match = /\s(\/\S*libc[.-][^\s]*\.so[^\s]*)$/m.exec(maps) ?? /\s(\/\S*libc\.so\.6)$/m.exec(maps);
  if (!match) throw new Error('no libc in /proc/self/maps');
  return defined(match[1], 'a libc path');
}

function textShift(binary: string): number {
  const line = execFileSync('objdump', ['-h', '--', binary])
    .toString()
    .split('\n')
    .find((l) => l.trim().split(/\s+/)[1] === '.text');
  // "Idx Name Size VMA LMA File-off Algn"
  const [, , , vma, , offset] = defined(line, `.text in objdump -h of ${binary}`).trim().split(/\s+/);
  return Number.parseInt(defined(offset, 'a file offset'), 16) - Number.parseInt(defined(vma, 'a VMA'), 16);
}

describe('C++ addresses to symbols', () => {
  it('a shared library (PIE): load base + symbol address (+ text offset - vma)', async () => {
    const libc = libcPath();
    const writev = symbolAddress(libc, 'writev', true);
    const base = 0x7f0000000000;
    const log = join(dir, 'pie.log');
    const pc = base + writev + textShift(libc) + 3;
    writeFileSync(
      log,
      `shared-library,${libc},${base},${base + 0x400000},0\ntick,0x${pc.toString(16)},1,0,0x0,6\n`,
    );
    const profile = await parseTickLog(log);
    expect(profile.functions[0]).toMatchObject({ name: 'writev', kind: 'cpp', file: libc, self: 1 });
  });

  it.runIf(isExecutable(process.execPath))(
    'the non-PIE node executable: absolute symbol addresses',
    async () => {
      const uvRun = symbolAddress(process.execPath, 'uv_run');
      const log = join(dir, 'exec.log');
      writeFileSync(
        log,
        `shared-library,${process.execPath},0x400000,0x${(uvRun + 0x100000).toString(16)},0\ntick,0x${(uvRun + 5).toString(16)},1,0,0x0,6\n`,
      );
      const profile = await parseTickLog(log);
      expect(profile.functions[0]).toMatchObject({
        name: 'uv_run',
        kind: 'cpp',
        file: process.execPath,
        self: 1,
      });
    },
  );
});
