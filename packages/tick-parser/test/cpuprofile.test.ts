import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCpuProfile } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-cpuprofile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parseCpuProfile', () => {
  it('names the hot loop of a real `node --cpu-prof` run with its 1-based line', () => {
    const script = join(dir, 'hot.js');
    writeFileSync(
      script,
      [
        'function cold() { return 1; }',
        'function hotLoop() {',
        '  let x = 0;',
        '  for (let i = 0; i < 4e8; i++) x = (x + i * 7) % 1000003;',
        '  return x;',
        '}',
        'cold(); console.log(hotLoop());',
      ].join('\n'),
    );
    execFileSync(process.execPath, [
      '--cpu-prof',
      '--cpu-prof-dir',
      dir,
      '--cpu-prof-interval',
      '500',
      script,
    ]);
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    expect(file).toBeDefined();
    const profile = parseCpuProfile(readFileSync(join(dir, file!), 'utf8'));

    const top = profile.functions.find((f) => f.kind === 'js');
    expect(top?.name).toBe('hotLoop');
    expect(top?.line).toBe(2);
    expect(top!.self / profile.totalTicks).toBeGreaterThan(0.5);
    expect(profile.functions.reduce((sum, f) => sum + f.self, 0)).toBe(profile.totalTicks);
  });

  it('rejects JSON that is not a cpuprofile, saying what it expected', () => {
    expect(() => parseCpuProfile('{"foo": 1}')).toThrow(/not a \.cpuprofile: expected .*"nodes"/);
  });
});
