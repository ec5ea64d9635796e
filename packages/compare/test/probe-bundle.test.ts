import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { probePath } from '../src/measure/probe-path.js';

// The probe is preloaded into every node process of every server hotpath measures (npm, the
// server, each cluster worker), so what it loads is paid for at every start and held in the heap
// being measured. It bundled zod (through the downstream record's bounds and overload-guard's
// monitor) until 2026-12-07: 511 KB, nine tenths of it the schema library.
describe('the probe bundle (dist/probe.cjs)', () => {
  it('holds no schema library and stays small', () => {
    const file = probePath();
    const text = readFileSync(file, 'utf8');
    expect(text).not.toMatch(/_zod|ZodError|zod\.dev/);
    expect(statSync(file).size).toBeLessThan(100 * 1024);
  });

  it('loads in a process that never listens and leaves it alone', () => {
    const out = execFileSync(process.execPath, ['--require', probePath(), '-e', 'console.log("ran")'], {
      encoding: 'utf8',
      env: { ...process.env, PORT: '1' },
    });
    expect(out.trim()).toBe('ran');
  });
});
