// The CLI's own flags and its --help texts: `hotpath --help` lists every command and flag;
// `hotpath COMMAND --help` shows that command's synopsis and only the flags it takes, the
// settings' flags derived from the settings table (cli/args.ts parses them).
// Imported module by module, not through internal.js: `hotpath --help` and `--version` load these
// few modules only, not the engine (cli/main.ts imports the rest when a command needs it).
import { formatDuration } from '../settings/duration.js';
import { type FrontDoorName, frontDoorOption, frontDoorText } from '../settings/front-door.js';
import { REPORTER_KEYS } from '../settings/reporter-keys.js';
import { flagOf, SETTINGS, type SettingSpec } from '../settings/table.js';

export type OptionConfig = { type: 'string' | 'boolean'; short?: string; multiple?: boolean };

/** The subcommands, in the order the usage lists them. */
export const COMMANDS = [
  'compare',
  'profile',
  'report',
  'drift',
  'history',
  'bisect',
  'schema',
  'init',
] as const;
export type CommandName = (typeof COMMANDS)[number];

interface CliOption extends OptionConfig {
  arg?: string;
  description: string;
}

/** An option both front doors take (settings/front-door.ts), as the CLI shows it. */
function frontDoorFlag(name: FrontDoorName): CliOption {
  const option = frontDoorOption(name);
  const fallback =
    typeof option.default === 'string' ? `default ${option.default}` : `default: ${option.default.cli}`;
  return { type: 'string', arg: option.arg, description: `${frontDoorText(option, 'cli')} (${fallback})` };
}

const CLI_OPTIONS = {
  config: frontDoorFlag('config'),
  json: { type: 'boolean', description: 'print the report JSON instead of the terminal report' },
  markdown: { type: 'string', arg: 'FILE', description: 'also write the markdown report to FILE' },
  open: { type: 'boolean', description: 'open report.html in the browser when done' },
  verbose: {
    type: 'boolean',
    description: 'every metric, function and allocation row in the terminal report, and the method',
  },
  results: frontDoorFlag('results'),
  shard: frontDoorFlag('shard'),
  quiet: { type: 'boolean', short: 'q', description: 'no progress on stderr' },
  reference: frontDoorFlag('reference'),
  history: { type: 'string', arg: 'FILE', description: 'drift: the history file to append the run to' },
  good: { type: 'string', arg: 'REF', description: 'bisect: a commit without the change (older)' },
  bad: {
    type: 'string',
    arg: 'REF',
    description: 'bisect: a commit with the change (newer; its first-parent history is searched)',
  },
  help: { type: 'boolean', short: 'h', description: 'this text' },
  version: { type: 'boolean', short: 'v', description: 'print the version' },
} satisfies Record<string, CliOption>;

type CliFlag = keyof typeof CLI_OPTIONS;

/** The CLI's options that are not settings (the front-door options among them). */
export const CLI_ONLY: Readonly<Record<CliFlag, CliOption>> = CLI_OPTIONS;

const specs = SETTINGS as readonly SettingSpec[];

function defaultText(spec: SettingSpec): string {
  if (spec.default === undefined || spec.default === '' || spec.default === false) return '';
  if (Array.isArray(spec.default)) return ` (default ${spec.default.join(',')})`;
  if (spec.kind === 'duration') return ` (default ${formatDuration(spec.default as number)})`;
  if (spec.unit === '%') return ` (default ${spec.default} %)`;
  if (spec.unit === 'points') return ` (default ${spec.default} points)`;
  if (spec.unit === 'B/req') return ` (default ${spec.default} bytes per request)`;
  return ` (default ${spec.default})`;
}

function optionLine(name: string, short: string | undefined, arg: string | undefined, text: string): string {
  const left = `  ${short ? `-${short}, ` : '    '}--${name}${arg ? ` ${arg}` : ''}`;
  return left.length >= 30 ? `${left}\n${' '.repeat(30)}${text}` : `${left.padEnd(30)}${text}`;
}

const GROUPS: Record<SettingSpec['group'], string> = {
  sides: 'Sides',
  load: 'Load (the single unnamed scenario; a config file can list several)',
  verdict: 'Verdict and output',
};

/** The flags of the settings `include` picks, in the table's groups and order. */
function settingLines(include: (spec: SettingSpec) => boolean = () => true): string[] {
  const lines: string[] = [];
  for (const [group, title] of Object.entries(GROUPS)) {
    const shown = specs.filter((s) => s.group === group && flagOf(s) && include(s));
    if (shown.length === 0) continue;
    lines.push('', `${title}:`);
    for (const spec of shown)
      lines.push(
        optionLine(flagOf(spec) ?? '', spec.short, spec.arg, `${spec.description}${defaultText(spec)}`),
      );
  }
  return lines;
}

function cliLines(names: readonly CliFlag[]): string[] {
  return names.map((name) => {
    const o = CLI_ONLY[name];
    return optionLine(name, o.short, o.arg, o.description);
  });
}

const TARGETS = [
  'Targets (--url): a path such as /users (http://127.0.0.1:$PORT/users), or a full http://, https://',
  "or memcache://host:$PORT URL. The load flags are hotpath-load's (-c -d -p -R -m -H -b -W);",
  '-H takes "Name: value" or name=value.',
];
const PROGRESS = [
  'Progress goes to stderr: a terminal gets one live line, a pipe or CI log one line per round and',
  'scenario with its requests/s and the ETA; --quiet shows none.',
];
const SETTINGS_NOTE = [
  'Durations take 10, 10s, 500ms or 2m. Flags override the config file, whose settings have the',
  'same names in camelCase (hot-threshold → hotThreshold). Commands run through /bin/sh -c with',
  'PORT set; tokens and secrets are removed from their environment.',
];
const EXIT = [
  'Exit status: 0 done, 1 regression with --fail-on-regression or a failed run, 2 bad usage,',
  '130/143 interrupted.',
];

/** `hotpath --help`: every command and every flag. */
export function generalUsage(): string {
  const lines = [
    'hotpath: load-test and profile a Node.js server, base vs head',
    '',
    'Usage:',
    '  hotpath compare [--config FILE] [--start CMD] [--base REF] [--head REF] [options]',
    '  hotpath compare --base-start CMD --head-start CMD [options]',
    '  hotpath profile --start CMD [options]',
    '  hotpath report DIR [DIR ...] [verdict options]   merge raw results (shards) and report',
    '  hotpath drift --reference REF --history FILE [options]   HEAD vs a fixed reference, appended to FILE',
    '  hotpath history FILE [--reference REF] [--markdown FILE] [--json]   the trend of a drift history',
    '  hotpath bisect --good REF --bad REF [--max-time TIME] [options]   the commit that made the change',
    '  hotpath schema                 print the JSON Schema of hotpath.config.json',
    '  hotpath init [--start CMD] [--url PATH ...] [--slo TEXT] [--no-install] [--force]',
    '                                 write hotpath.config.json and the GitHub workflows for this project',
    '  hotpath COMMAND --help         that command alone: what it does and the flags it takes',
    ...settingLines(),
    '',
    'Command line:',
    ...cliLines(Object.keys(CLI_ONLY) as CliFlag[]),
    '',
    ...TARGETS,
    ...PROGRESS,
    ...SETTINGS_NOTE,
    ...EXIT,
    '',
  ];
  return lines.join('\n');
}

/** One command's help: what it does, its synopsis, its flags, its notes. */
interface CommandHelp {
  summary: string;
  synopsis: readonly string[];
  /** Which settings' flags it takes (none when undefined). */
  settings?: (spec: SettingSpec) => boolean;
  /** The CLI's own flags it takes. */
  flags: readonly CliFlag[];
  /** Options of its own (init's are neither settings nor the CLI's). */
  own?: readonly { name: string; arg?: string; description: string }[];
  notes: readonly string[];
}

const REPORTER: ReadonlySet<string> = new Set(REPORTER_KEYS);

const HELP: Record<CommandName, CommandHelp> = {
  compare: {
    summary:
      'base vs head of a Node.js server under load, in interleaved rounds: the verdict and the hot functions',
    synopsis: [
      'hotpath compare [--config FILE] [--start CMD] [--base REF] [--head REF] [options]',
      'hotpath compare --base-start CMD --head-start CMD [options]',
    ],
    settings: () => true,
    flags: ['config', 'json', 'markdown', 'open', 'verbose', 'results', 'shard', 'quiet'],
    notes: [...TARGETS, ...PROGRESS, ...SETTINGS_NOTE, ...EXIT],
  },
  profile: {
    summary: 'one server under load, profiled: its hot functions, no comparison',
    synopsis: ['hotpath profile --start CMD [options]'],
    settings: (spec) => !spec.comparisonOnly,
    flags: ['config', 'json', 'quiet'],
    notes: [
      ...TARGETS,
      ...PROGRESS,
      ...SETTINGS_NOTE,
      'Exit status: 0 done, 1 a failed run, 2 bad usage, 130/143 interrupted.',
    ],
  },
  report: {
    summary: 'merge the raw results (shards) of hotpath compare --results and report them',
    synopsis: ['hotpath report DIR [DIR ...] [options]'],
    settings: (spec) => REPORTER.has(spec.key),
    flags: ['json', 'markdown', 'open', 'verbose'],
    notes: [
      'Every shard found below the folders is merged. The results fix what was measured: a flag that',
      'would change the measurement is refused; only the flags above decide the verdict and --out.',
      ...EXIT,
    ],
  },
  drift: {
    summary: 'HEAD vs a fixed reference, appended to a history file, and the trend so far',
    synopsis: ['hotpath drift --reference REF --history FILE [options]'],
    settings: (spec) => !['base', 'baseStart', 'headStart'].includes(spec.key),
    flags: ['reference', 'history', 'config', 'json', 'markdown', 'quiet'],
    notes: [...TARGETS, ...PROGRESS, ...SETTINGS_NOTE, ...EXIT],
  },
  history: {
    summary: 'the trend of a drift history file (hotpath drift writes it)',
    synopsis: ['hotpath history FILE [--reference REF] [--threshold PCT] [--markdown FILE] [--json]'],
    settings: (spec) => spec.key === 'threshold',
    flags: ['reference', 'markdown', 'json'],
    notes: [],
  },
  bisect: {
    summary:
      'the commit between --good and --bad that made the change: a binary search of paired comparisons',
    synopsis: ['hotpath bisect --good REF --bad REF [--max-time TIME] [options]'],
    settings: (spec) => !['base', 'head', 'baseStart', 'headStart'].includes(spec.key),
    flags: ['good', 'bad', 'config', 'json', 'quiet'],
    notes: [
      'each step compares the midpoint of the range with the good side; until one shows a change, a step is',
      'good when it shows none beyond the threshold; the first to show one sets the step S, and each later',
      'step stops once its interval lies below or above S/2 (none shown anywhere: no culprit);',
      'a step left undecided is measured once more, then the search ends on a range; an unbuildable commit is skipped.',
      "--max-time is the whole search's budget here (default 30 min), not one comparison's.",
      "report.json in --out is the search, report.html draws it; culprit/ the culprit's own comparison.",
      ...PROGRESS,
      ...EXIT,
    ],
  },
  schema: {
    summary: 'print the JSON Schema of hotpath.config.json',
    synopsis: ['hotpath schema'],
    flags: [],
    notes: [],
  },
  init: {
    summary: 'write hotpath.config.json and the GitHub workflows for the project in this folder',
    synopsis: ['hotpath init [--start CMD] [--url PATH ...] [--slo TEXT] [--no-install] [--force]'],
    flags: [],
    own: [
      {
        name: 'start',
        arg: 'CMD',
        description: 'the command that starts your server (default: found in package.json)',
      },
      {
        name: 'url',
        arg: 'PATH',
        description: 'a route to measure, e.g. /users; repeat for more (default: found in the sources)',
      },
      {
        name: 'slo',
        arg: 'TEXT',
        description:
          "an SLO every scenario's capacity is searched at, e.g. p99<=50ms (default: none; on a terminal init asks)",
      },
      { name: 'no-install', description: 'add @hotpath/compare to devDependencies without installing it' },
      { name: 'force', description: 'overwrite hotpath.config.json and the workflows if they exist' },
    ],
    notes: [
      'On a terminal init asks for the start command, the routes and an SLO; otherwise it takes what it found and no SLO.',
      'Exit status: 0 done, 1 installing @hotpath/compare failed, 2 bad usage.',
    ],
  },
};

/** `hotpath COMMAND --help`; without a command, `hotpath --help`. */
export function usage(command?: CommandName): string {
  if (!command) return generalUsage();
  const help = HELP[command];
  const lines = [
    `hotpath ${command}: ${help.summary}`,
    '',
    'Usage:',
    ...help.synopsis.map((line) => `  ${line}`),
    ...(help.settings ? settingLines(help.settings) : []),
    '',
    help.settings ? 'Command line:' : 'Options:',
    ...(help.own ?? []).map((o) => optionLine(o.name, undefined, o.arg, o.description)),
    ...cliLines([...help.flags, 'help']),
    ...(help.notes.length > 0 ? ['', ...help.notes] : []),
    '',
  ];
  return lines.join('\n');
}
