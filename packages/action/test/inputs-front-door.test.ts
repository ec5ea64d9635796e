// config, results, shard and reference are declared once in @hotpath/compare (front-door
// options): the CLI's flags and the Action's inputs must agree on them — the same error for a bad
// value, the same default where the declaration gives one default, and the reason where it gives two.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseShard } from '@hotpath/compare';
import {
  actionDefault,
  cliDefault,
  FRONT_DOOR_OPTIONS,
  type FrontDoorOption,
  frontDoorText,
} from '@hotpath/compare/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The CLI's parser as built (the bin's): its sources are compare's to typecheck.
import { parseCommandLine, usage } from '../../compare/dist/cli/args.js';
import { CLI_BIN } from '../../compare/test/helpers/repo.js';
import { ACTION_INPUTS, readActionOptions } from '../src/inputs.js';

const options = FRONT_DOOR_OPTIONS as readonly FrontDoorOption[];

/** The Action's options with `inputs` set (core.getInput returns '' for the rest). */
const actionOptions = (inputs: Record<string, string>) => readActionOptions((name) => inputs[name] ?? '');

/** What the Action prints for an error (main.ts: core.setFailed(`${code}: ${message}`)). */
function actionError(inputs: Record<string, string>): string {
  try {
    actionOptions(inputs);
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return `${e.code}: ${e.message}`;
  }
  return 'no error';
}

describe('the front-door options: one declaration, the same at the CLI and the Action', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-front-door-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The built `hotpath` bin: its exit status and stderr. */
  const cli = (args: string[]) => {
    const r = spawnSync(process.execPath, [CLI_BIN, ...args], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { status: r.status, stderr: r.stderr };
  };

  it.each([
    ['3/2', ['compare', '--start', 'node x.js', '--shard']],
    ['x', ['compare', '--start', 'node x.js', '--shard']],
    ['0/1', ['compare', '--start', 'node x.js', '--shard']],
    ['1/257', ['compare', '--start', 'node x.js', '--shard']],
    ['tag:v 1', ['drift', '--history', 'h.json', '--start', 'node x.js', '--reference']],
  ])('a bad value %j: the CLI and the Action fail with the same message, naming it', (value, flags) => {
    const name = String(flags.at(-1)).slice(2);
    const action = actionError({ mode: 'measure', [name]: value });
    expect(action).toMatch(new RegExp(`^HP_COMPARE_INVALID_SETTING: invalid ${name} "${value}": expected `));
    // The CLI checks it while reading its flags, before it runs anything.
    expect(() => parseCommandLine([...flags, value])).toThrow(action.replace(/^\w+: /, ''));
    const r = cli([...flags, value]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`hotpath: ${action}\n`);
  });

  it('a bad shard is the same error through the API (parseShard)', () => {
    expect(() => parseShard('3/2')).toThrow(actionError({ shard: '3/2' }).replace(/^\w+: /, ''));
  });

  it('where one default is declared, both doors take it', () => {
    const same = options.filter((o) => typeof o.default === 'string');
    expect(same.map((o) => o.name)).toContain('shard');
    const defaults = actionOptions({}) as Record<string, unknown>;
    const parsed = parseCommandLine(['compare']) as unknown as Record<string, unknown>;
    for (const option of same) {
      expect(defaults[option.name]).toBe(option.default);
      expect(parsed[option.name]).toBe(option.default);
      expect(cliDefault(option.name as 'shard')).toBe(option.default);
    }
  });

  it('where the defaults differ, the declaration gives both and the reason; the CLI takes none', () => {
    const differ = options.filter((o) => typeof o.default !== 'string');
    const defaults = actionOptions({}) as Record<string, unknown>;
    const parsed = parseCommandLine(['drift', '--reference', 'main', '--history', 'h.json']);
    for (const option of differ) {
      if (typeof option.default === 'string') continue;
      expect(option.default.why.length, option.name).toBeGreaterThan(40);
      expect(option.default.cli, option.name).not.toBe('');
      expect(defaults[option.name]).toBe(option.default.action);
      if (option.name !== 'reference')
        expect((parsed as unknown as Record<string, unknown>)[option.name]).toBeUndefined();
    }
    expect(differ.map((o) => o.name).sort()).toEqual(['config', 'reference', 'results']);
  });

  it("action.yml's text and default and the CLI's --help come from the declaration", () => {
    const help = usage();
    for (const option of options) {
      const input = ACTION_INPUTS[option.name as keyof typeof ACTION_INPUTS];
      expect(input.text).toBe(frontDoorText(option, 'action'));
      expect(input.default).toBe(`'${actionDefault(option.name as 'shard')}'`);
      expect(help).toContain(`--${option.name} ${option.arg}`);
      expect(help.replace(/\n {30}/g, ' ')).toContain(frontDoorText(option, 'cli'));
    }
  });
});
