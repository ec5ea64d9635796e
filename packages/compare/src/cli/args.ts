import { parseArgs } from 'node:util';
import { formatDuration } from '../settings/duration.js';
import { flagOf, SETTINGS, type SettingSpec } from '../settings/table.js';

/** A usage error: printed as one line, exit status 2. */
export class UsageError extends Error {}

type OptionConfig = { type: 'string' | 'boolean'; short?: string; multiple?: boolean };

/** Options that only the CLI has (not settings). */
const CLI_ONLY: Record<string, OptionConfig & { arg?: string; description: string }> = {
  config: {
    type: 'string',
    arg: 'FILE',
    description: 'config file (default: hotpath.config.json, .mjs or .js in the working directory)',
  },
  json: { type: 'boolean', description: 'print the report JSON instead of the terminal report' },
  markdown: { type: 'string', arg: 'FILE', description: 'also write the markdown report to FILE' },
  open: { type: 'boolean', description: 'open report.html in the browser when done' },
  results: {
    type: 'string',
    arg: 'DIR',
    description: 'compare: also write the raw results (one shard) to DIR, for hotpath report',
  },
  shard: {
    type: 'string',
    arg: 'I/N',
    description: 'compare --results: which shard this run is (default 1/1)',
  },
  quiet: { type: 'boolean', short: 'q', description: 'no progress on stderr' },
  reference: {
    type: 'string',
    arg: 'REF',
    description:
      'drift: the fixed reference, tag:GLOB (the highest semver tag, e.g. tag:v*) or a ref; history: which series to show',
  },
  history: { type: 'string', arg: 'FILE', description: 'drift: the history file to append the run to' },
  help: { type: 'boolean', short: 'h', description: 'this text' },
  version: { type: 'boolean', short: 'v', description: 'print the version' },
};

const specs = SETTINGS as readonly SettingSpec[];

/** node:util parseArgs options, derived from the settings table plus the CLI's own flags. */
export function parseArgsOptions(): Record<string, OptionConfig> {
  const options: Record<string, OptionConfig> = {};
  for (const spec of specs) {
    const flag = flagOf(spec);
    if (!flag) continue;
    options[flag] = {
      type: spec.kind === 'boolean' ? 'boolean' : 'string',
      ...(spec.short ? { short: spec.short } : {}),
      ...(spec.kind === 'headers' ? { multiple: true } : {}),
    };
  }
  for (const [name, { type, short }] of Object.entries(CLI_ONLY))
    options[name] = { type, ...(short ? { short } : {}) };
  return options;
}

function defaultText(spec: SettingSpec): string {
  if (spec.default === undefined || spec.default === '' || spec.default === false) return '';
  if (Array.isArray(spec.default)) return ` (default ${spec.default.join(',')})`;
  if (spec.kind === 'duration') return ` (default ${formatDuration(spec.default as number)})`;
  if (spec.unit === '%') return ` (default ${spec.default} %)`;
  if (spec.unit === 'points') return ` (default ${spec.default} points)`;
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

/** --help, derived from the settings table. */
export function usage(): string {
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
    '  hotpath schema                 print the JSON Schema of hotpath.config.json',
    '  hotpath init [--start CMD] [--url PATH ...] [--no-install] [--force]',
    '                                 write hotpath.config.json and the GitHub workflows for this project',
  ];
  for (const [group, title] of Object.entries(GROUPS)) {
    lines.push('', `${title}:`);
    for (const spec of specs.filter((s) => s.group === group)) {
      const flag = flagOf(spec);
      if (!flag) continue;
      lines.push(optionLine(flag, spec.short, spec.arg, `${spec.description}${defaultText(spec)}`));
    }
  }
  lines.push('', 'Command line:');
  for (const [name, o] of Object.entries(CLI_ONLY))
    lines.push(optionLine(name, o.short, o.arg, o.description));
  lines.push(
    '',
    'Targets (--url): a path such as /users (http://127.0.0.1:$PORT/users), or a full http://, https://',
    "or memcache://host:$PORT URL. The load flags are hotpath-load's (-c -d -p -R -m -H -b -W);",
    '-H takes "Name: value" or name=value.',
    'Progress goes to stderr: a terminal gets one live line, a pipe or CI log one line per round and',
    'scenario with its requests/s and the ETA; --quiet shows none.',
    'Durations take 10, 10s, 500ms or 2m. Flags override the config file, whose settings have the',
    'same names in camelCase (hot-threshold → hotThreshold). Commands run through /bin/sh -c with',
    'PORT set; tokens and secrets are removed from their environment.',
    'Exit status: 0 done, 1 regression with --fail-on-regression or a failed run, 2 bad usage,',
    '130/143 interrupted.',
    '',
  );
  return lines.join('\n');
}

/** `hotpath init`'s own options. */
export interface InitOptions {
  force: boolean;
  install: boolean;
  start?: string;
  urls: string[];
}

export interface ParsedCommandLine {
  command: 'compare' | 'profile' | 'report' | 'drift' | 'history' | 'schema' | 'init' | 'help' | 'version';
  /** `hotpath init`: its options. */
  init: InitOptions;
  /** No progress on stderr. */
  quiet: boolean;
  /** `hotpath report`: the results folders. */
  folders: string[];
  results?: string;
  shard?: string;
  /** drift: the reference; history: the series to show. */
  reference?: string;
  /** drift: the history file. */
  history?: string;
  /** Setting values from flags, keyed by setting key (strings, string[] for headers, booleans). */
  overrides: Record<string, unknown>;
  config?: string;
  json: boolean;
  markdown?: string;
  /** --open: open report.html when done. */
  open?: boolean;
}

/** Turns node's parseArgs errors into one readable line. */
function usageError(err: unknown): UsageError {
  const e = err as { code?: string; message?: string };
  const message = String(e.message ?? err).split('\n')[0] ?? '';
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /'([^']+)'/.exec(message)?.[1] ?? message;
    return new UsageError(`unknown option ${option} (see --help)`);
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = /--([\w-]+)/.exec(message)?.[0] ?? message;
    return new UsageError(
      `option ${option} ${/argument missing/.test(message) ? 'needs a value' : 'takes no value'} (see --help)`,
    );
  }
  if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const value = /'([^']+)'/.exec(message)?.[1] ?? message;
    return new UsageError(`unexpected argument ${JSON.stringify(value)} (see --help)`);
  }
  return new UsageError(`${message} (see --help)`);
}

/** Parses argv (without node and script). Throws UsageError. */
export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  const [first, ...rest] = argv;
  const bare = {
    overrides: {},
    json: false,
    folders: [],
    quiet: false,
    init: { force: false, install: true, urls: [] },
  };
  if (first === '--version' || first === '-v') return { command: 'version', ...bare };
  if (!first || first === '--help' || first === '-h' || first === 'help') return { command: 'help', ...bare };
  if (first === 'init') return { command: 'init', ...bare, init: parseInit(rest) };
  const commands = ['compare', 'profile', 'report', 'drift', 'history', 'schema'] as const;
  const command = commands.find((c) => c === first);
  if (!command) {
    if (first.startsWith('-'))
      throw new UsageError(
        `expected a command before ${first}: hotpath compare|profile|report|drift|history|schema|init (see --help)`,
      );
    throw new UsageError(
      `unknown command ${JSON.stringify(first)}: expected compare, profile, report, drift, history, schema or init (see --help)`,
    );
  }
  let values: Record<string, unknown>;
  let positionals: string[];
  try {
    const options = parseArgsOptions();
    ({ values, positionals } = parseArgs({
      args: joinDashValues(rest, valueOptions(options)),
      options,
      allowPositionals: command === 'report' || command === 'history',
      strict: true,
    }));
  } catch (err) {
    throw usageError(err);
  }
  if (values.help) return { command: 'help', ...bare };
  if (values.version) return { command: 'version', ...bare };
  if (first === 'report' && positionals.length === 0)
    throw new UsageError('hotpath report needs the folder(s) holding the results (see --help)');
  if (
    (values.reference !== undefined && command !== 'drift' && command !== 'history') ||
    (values.history !== undefined && command !== 'drift')
  )
    throw new UsageError(
      `${values.history !== undefined ? '--history' : '--reference'} belongs to hotpath drift${values.history !== undefined ? '' : ' and hotpath history'} (see --help)`,
    );
  if (command === 'history' && positionals.length !== 1)
    throw new UsageError('hotpath history needs exactly one history file (see --help)');
  if (command === 'drift' && (typeof values.reference !== 'string' || typeof values.history !== 'string'))
    throw new UsageError(
      'hotpath drift needs --reference REF (tag:GLOB or a ref) and --history FILE (see --help)',
    );
  const overrides: Record<string, unknown> = {};
  for (const spec of specs) {
    const flag = flagOf(spec);
    if (flag && values[flag] !== undefined) overrides[spec.key] = values[flag];
  }
  return {
    command,
    overrides,
    folders: positionals,
    results: values.results as string | undefined,
    shard: values.shard as string | undefined,
    reference: values.reference as string | undefined,
    history: values.history as string | undefined,
    config: values.config as string | undefined,
    json: Boolean(values.json),
    quiet: Boolean(values.quiet),
    markdown: values.markdown as string | undefined,
    open: Boolean(values.open),
    init: bare.init,
  };
}

/** `--name` and `-x` of the options that take a value. */
function valueOptions(options: Record<string, OptionConfig>): Set<string> {
  return new Set(
    Object.entries(options).flatMap(([name, o]) =>
      o.type === 'string' ? [`--${name}`, ...(o.short ? [`-${o.short}`] : [])] : [],
    ),
  );
}

/**
 * `--threshold -5` → `--threshold=-5`: a value that starts with "-" and a digit is the option's
 * value (parseArgs would call it an option, or "ambiguous"), so the value check names it.
 */
export function joinDashValues(argv: readonly string[], options: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const next = argv[i + 1];
    if (options.has(arg) && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(arg.startsWith('--') ? `${arg}=${next}` : `${arg}${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

function parseInit(argv: readonly string[]): InitOptions {
  let values: { force?: boolean; 'no-install'?: boolean; start?: string; url?: string[]; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        force: { type: 'boolean' },
        'no-install': { type: 'boolean' },
        start: { type: 'string' },
        url: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw usageError(err);
  }
  for (const url of values.url ?? [])
    if (!url.startsWith('/') || /\s/.test(url))
      throw new UsageError(`invalid --url ${JSON.stringify(url)}: expected a path starting with "/"`);
  if (values.start !== undefined && values.start.trim() === '')
    throw new UsageError('invalid --start "": expected the command that starts your server');
  return {
    force: Boolean(values.force),
    install: !values['no-install'],
    start: values.start,
    urls: values.url ?? [],
  };
}
