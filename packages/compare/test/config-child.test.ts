import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigInChild } from '../src/measure/config-child.js';
import { liveness } from '../src/measure/process-table.js';
import { loadConfig, readJsonConfig } from '../src/settings/config-file.js';

describe('loadConfigInChild (a JavaScript config evaluated in a child process)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-config-child-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('runs the config with the given environment only, in another process, and returns its JSON', async () => {
    const path = write(
      'seen.mjs',
      `import { writeFileSync } from 'node:fs';
writeFileSync(new URL('./seen.json', import.meta.url), JSON.stringify({ env: process.env, pid: process.pid }));
console.log('printed by the config');
export default async () => ({ start: 'node server.js', scenarios: [{ name: 'a', url: '/' }] });`,
    );
    const chunks: string[] = [];
    const loaded = await loadConfigInChild(path, {
      env: { PATH: process.env.PATH, ONLY_THIS: 'yes' },
      onOutput: (chunk) => chunks.push(chunk.toString()),
    });
    expect(loaded.config).toEqual({ start: 'node server.js', scenarios: [{ name: 'a', url: '/' }] });
    expect(loaded.path).toBe(path);
    const seen = JSON.parse(readFileSync(join(dir, 'seen.json'), 'utf8')) as {
      env: Record<string, string>;
      pid: number;
    };
    expect(seen.pid).not.toBe(process.pid);
    // The given variables, the process-group marker, and what node itself sets: nothing of ours.
    const names = Object.keys(seen.env).filter((n) => n !== 'HOTPATH_PROCESS_GROUP');
    expect(names.filter((n) => n !== 'PATH' && n !== 'ONLY_THIS' && n !== 'PWD')).toEqual([]);
    expect(chunks.join('')).toContain('printed by the config');
  });

  it('refuses a value JSON cannot carry, naming where it is', async () => {
    const path = write(
      'fn.mjs',
      `export default { start: 'node s.js', scenarios: [{ name: 'a', url: () => '/' }] };`,
    );
    await expect(loadConfigInChild(path, { env: { PATH: process.env.PATH } })).rejects.toMatchObject({
      code: 'HP_COMPARE_CONFIG',
      message: expect.stringMatching(
        /evaluating it exited with code 1[\s\S]*scenarios\[0\]\.url is a function/,
      ),
    });
  });

  it('stops a config that never finishes, and everything it started', async () => {
    const path = write(
      'hangs.mjs',
      `import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore', env: {} });
writeFileSync(new URL('./hangs.pid', import.meta.url), String(child.pid));
await new Promise(() => {});`,
    );
    await expect(
      loadConfigInChild(path, { env: { PATH: process.env.PATH }, timeoutMs: 2000 }),
    ).rejects.toMatchObject({
      code: 'HP_COMPARE_CONFIG',
      message: expect.stringContaining('did not finish within 2 s'),
    });
    const pid = Number(readFileSync(join(dir, 'hangs.pid'), 'utf8'));
    expect(pid).toBeGreaterThan(0);
    // Gone, or a zombie with nothing left (its new parent reaps it in its own time).
    expect(liveness(pid)).toBe('gone');
  });

  it('reads a JSON config without a child; readJsonConfig refuses JavaScript', async () => {
    const json = write('c.json', JSON.stringify({ start: 'node s.js' }));
    expect((await loadConfigInChild(json, { env: {} })).config).toEqual({ start: 'node s.js' });
    const mjs = write('c.mjs', `throw new Error('must not run');`);
    expect(() => readJsonConfig(mjs)).toThrow(/c\.mjs is JavaScript, and only a JSON config is read here/);
    // The CLI's loader still imports JavaScript in its own process.
    await expect(loadConfig(mjs)).rejects.toThrow(/must not run/);
  });
});
