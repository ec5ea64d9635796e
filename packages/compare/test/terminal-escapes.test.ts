// Issue #67: text of a results file reached the terminal raw — `env.profilers` printed
// unstripped (a title-setting OSC, a colour), and the terminal's and the progress line's
// stripping let the bidi controls through (U+202E and friends), which reorder how a line reads.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fitLine } from '../src/cli/progress.js';
import { inert, printable } from '../src/printable.js';
import { CLI_BIN, FIXTURES } from './helpers/repo.js';

/** Sets the terminal's title (OSC … BEL), then paints red (SGR). */
const OSC_AND_COLOUR = '\u001b]0;pwned\u0007\u001b[31mred';
/** Every bidi control: embeddings, overrides, isolates, marks. */
const BIDI = '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c';
const RAW =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('inert and printable: bidi controls', () => {
  it.each([...BIDI])('inert() makes U+%s a space and printable() escapes it', (char) => {
    expect(inert(`a${char}b`)).toBe('a b');
    expect(printable(`a${char}b`)).toBe(`a\\u${char.codePointAt(0)?.toString(16).padStart(4, '0')}b`);
  });

  it("progress's fitLine keeps no control and no bidi control", () => {
    expect(fitLine(`GET /x${OSC_AND_COLOUR}${BIDI}gnp.exe`, 200)).not.toMatch(RAW);
    expect(fitLine(`a\u202eb`, 80)).toBe('a b');
  });
});

describe('hotpath report: a results file with hostile profiler names', () => {
  let root: string;
  let results: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-terminal-'));
    results = join(root, 'results');
    cpSync(join(FIXTURES, 'recorded-shard'), results, { recursive: true });
    const file = join(results, 'shard-1-of-1', 'hotpath-results.json');
    const data = JSON.parse(readFileSync(file, 'utf8'));
    for (const side of ['base', 'head'])
      for (const round of data[side])
        for (const s of round.scenarios) s.profilers = [`${OSC_AND_COLOUR}`, `cpu${BIDI}gnp.exe`];
    writeFileSync(file, JSON.stringify(data));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('prints the profiler names (--verbose) with every escape and bidi control made a space', () => {
    const r = spawnSync(
      process.execPath,
      [CLI_BIN, 'report', results, '--verbose', '--out', join(root, 'out')],
      {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      },
    );
    expect(r.status, r.stderr).toBe(0);
    const both = `${r.stdout}${r.stderr}`;
    expect(both).toContain('profiler: base');
    expect(both).toContain(' ]0;pwned  [31mred');
    expect(both).not.toMatch(RAW);
  });
});
