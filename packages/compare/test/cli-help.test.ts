import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommandName, parseCommandLine, usage } from '../src/cli/args.js';
import { COMMANDS as COMMAND_NAMES } from '../src/cli/usage.js';
import { FRONT_DOOR_OPTIONS, type FrontDoorOption, REPORTER_KEYS } from '../src/internal.js';
import { flagOf, SETTINGS, type SettingSpec } from '../src/settings/table.js';
import { CLI_BIN } from './helpers/repo.js';

const run = promisify(execFile);

/** Runs the built `hotpath` bin in `cwd`; resolves with its exit status and output (never rejects). */
async function cli(args: readonly string[], cwd: string) {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI_BIN, ...args], {
      cwd,
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { status: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { status: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Every file and folder below `dir` (.git included): a content hash and mtime per file, an mtime per folder. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const full = join(dir, path);
      if (entry.isSymbolicLink()) out[path] = `link ${readlinkSync(full)}`;
      else if (entry.isDirectory()) {
        out[`${path}/`] = `dir ${statSync(full).mtimeMs}`;
        walk(path);
      } else
        out[path] =
          `${createHash('sha256').update(readFileSync(full)).digest('hex')} ${statSync(full).mtimeMs}`;
    }
  };
  walk('');
  out['./'] = `dir ${statSync(dir).mtimeMs}`;
  return out;
}

/** A small project as `hotpath init` finds one: a "start" script, a server, one git commit. */
function makeProject(root: string): string {
  const dir = join(root, 'app');
  execFileSync('mkdir', ['-p', dir]);
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'app', version: '1.0.0', scripts: { start: 'node server.js' } }, null, 2)}\n`,
  );
  writeFileSync(
    join(dir, 'server.js'),
    "require('node:http').createServer((req, res) => res.end('ok')).listen(process.env.PORT);\n",
  );
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@example.com',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@example.com',
      },
    });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'app');
  return dir;
}

/** Each subcommand, its synopsis, a flag its usage lists and one it must not (another command's). */
const COMMANDS: [CommandName, string, string, string][] = [
  ['compare', 'hotpath compare [--config FILE] [--start CMD]', '--base-start', '--no-install'],
  ['profile', 'hotpath profile --start CMD [options]', '--connections', '--base-start'],
  ['report', 'hotpath report DIR [DIR ...]', '--fail-on-regression', '--connections'],
  ['drift', 'hotpath drift --reference REF --history FILE', '--history FILE', '--results'],
  ['history', 'hotpath history FILE [--reference REF]', '--threshold', '--connections'],
  ['schema', 'hotpath schema', '--help', '--json'],
  [
    'init',
    'hotpath init [--start CMD] [--url PATH ...] [--slo TEXT] [--no-install] [--force]',
    '--no-install',
    '--connections',
  ],
];

describe('hotpath COMMAND --help (the built bin, in a folder holding a project)', () => {
  let root: string;
  let project: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-help-'));
    project = makeProject(root);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.each(COMMANDS)(
    '%s --help and -h print its own usage, exit 0 and change no file',
    async (command, synopsis, own, other) => {
      const before = snapshot(project);
      const runs = await Promise.all([cli([command, '--help'], project), cli([command, '-h'], project)]);
      for (const r of runs) {
        expect(r.status).toBe(0);
        expect(r.stderr).toBe('');
        expect(r.stdout).toMatch(new RegExp(`^hotpath ${command}: `));
        expect(r.stdout).toContain(`Usage:\n  ${synopsis}`);
        expect(r.stdout).toContain(own);
        expect(r.stdout).not.toContain(other);
        expect(r.stdout).toBe(usage(command));
      }
      expect(snapshot(project)).toEqual(before);
    },
  );

  it.each<[string[]]>([
    [['init', '--force', '--start', 'node server.js', '--help']],
    [['init', '--bogus', '-h']],
    [['compare', '--start', 'node server.js', '--url', '/', '-h']],
    [['compare', '-qh']],
    [['drift', '--reference', 'tag:v*', '--history', 'h.json', '--help']],
    [['report', 'results', '--help']],
    [['history', 'h.json', '-h']],
    [['help', 'init']],
  ])('%j prints that command’s usage and changes no file', async (args) => {
    const before = snapshot(project);
    const r = await cli(args, project);
    expect(r.status).toBe(0);
    const command = args[0] === 'help' ? args[1] : args[0];
    expect(r.stdout).toBe(usage(command as CommandName));
    expect(snapshot(project)).toEqual(before);
  });

  it('hotpath --help lists every command and how to get its own usage', async () => {
    const r = await cli(['--help'], project);
    expect(r.status).toBe(0);
    for (const [, synopsis] of COMMANDS) expect(r.stdout).toContain(synopsis.split(' [')[0]);
    expect(r.stdout).toContain('hotpath COMMAND --help');
  });

  it('hotpath init --bogus exits 2 with one line naming the flag, and writes nothing', async () => {
    const before = snapshot(project);
    const r = await cli(['init', '--bogus'], project);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('hotpath: unknown option --bogus (see --help)\n');
    expect(snapshot(project)).toEqual(before);
  });
});

describe('parseCommandLine: help for a command', () => {
  it.each([
    [['init', '--help'], 'init'],
    [['init', '--force', '-h'], 'init'],
    [['compare', '--start', 'node x.js', '--bogus', '--help'], 'compare'],
    [['profile', '-qh'], 'profile'],
    [['report', '-h'], 'report'],
    [['drift', '--help'], 'drift'],
    [['history', '-h'], 'history'],
    [['schema', '--help'], 'schema'],
    [['help', 'report'], 'report'],
    [['help'], undefined],
    [['--help'], undefined],
  ])('%j → help, topic %s', (argv, topic) => {
    const parsed = parseCommandLine(argv);
    expect(parsed.command).toBe('help');
    expect(parsed.topic).toBe(topic);
  });

  it('reads -h after -- as an argument, not as help', () => {
    expect(parseCommandLine(['report', '--', '-h'])).toMatchObject({ command: 'report', folders: ['-h'] });
  });

  it.each([
    [['init', '--bogus'], 'unknown option --bogus (see --help)'],
    [['init', '--url', 'users'], 'invalid --url "users"'],
  ])('%j → one line', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(message);
  });
});

describe('usage(COMMAND): the flags each command takes, from the settings table', () => {
  const settingFlags = (text: string) =>
    (SETTINGS as readonly SettingSpec[])
      .map((spec) => flagOf(spec))
      .filter((flag): flag is string => flag !== undefined && new RegExp(`--${flag}\\b(?!-)`).test(text));

  it('compare lists every setting flag', () => {
    const all = (SETTINGS as readonly SettingSpec[]).flatMap((spec) => flagOf(spec) ?? []);
    expect(settingFlags(usage('compare'))).toEqual(all);
  });

  it('report lists exactly the reporter flags', () => {
    const reporter = (SETTINGS as readonly SettingSpec[])
      .filter((spec) => (REPORTER_KEYS as readonly string[]).includes(spec.key))
      .flatMap((spec) => flagOf(spec) ?? []);
    expect(settingFlags(usage('report'))).toEqual(reporter);
  });

  it('each front-door option (config, results, shard, reference) is listed by the commands its declaration names', () => {
    for (const option of FRONT_DOOR_OPTIONS as readonly FrontDoorOption[]) {
      const line = new RegExp(`^ {6}--${option.name} ${option.arg}(\\s|$)`, 'm');
      const listing = COMMAND_NAMES.filter((command) => line.test(usage(command)));
      const { commands, note } = option.cli;
      expect(listing, option.name).toEqual([...commands.split(', '), ...(note ? [note.split(':')[0]] : [])]);
    }
  });

  it('init and schema list no setting flag', () => {
    expect(settingFlags(usage('init'))).toEqual(['start', 'url', 'slo']); // init's own --start, --url and --slo
    expect(settingFlags(usage('schema'))).toEqual([]);
  });
});
