import { parseArgs } from 'node:util';
import { checkFrontDoorValue, cliDefault, FRONT_DOOR_OPTIONS } from '../settings/front-door.js';
import { canonicalSlo } from '../settings/slo.js';
import { flagOf, SETTINGS, type SettingSpec } from '../settings/table.js';
import { CLI_ONLY, COMMANDS, type CommandName, type OptionConfig } from './usage.js';

export { type CommandName, usage } from './usage.js';

/** A usage error: printed as one line, exit status 2. */
export class UsageError extends Error {}

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

/** `hotpath init`'s own options. */
export interface InitOptions {
  force: boolean;
  install: boolean;
  start?: string;
  urls: string[];
  /** --slo: the SLO for capacity, as its canonical text. */
  slo?: string;
}

export interface ParsedCommandLine {
  command: CommandName | 'help' | 'version';
  /** `hotpath COMMAND --help` (or `-h`, anywhere among its arguments), `hotpath help COMMAND`: whose usage. */
  topic?: CommandName;
  /** `hotpath init`: its options. */
  init: InitOptions;
  /** No progress on stderr. */
  quiet: boolean;
  /** `hotpath report`: the results folders. */
  folders: string[];
  results?: string;
  /** compare: which shard this run is, i/n (default 1/1, as the Action's). */
  shard?: string;
  /** drift: the reference; history: the series to show. */
  reference?: string;
  /** drift: the history file. */
  history?: string;
  /** bisect: the range. */
  good?: string;
  bad?: string;
  /** Setting values from flags, keyed by setting key (strings, string[] for headers, booleans). */
  overrides: Record<string, unknown>;
  config?: string;
  json: boolean;
  markdown?: string;
  /** --open: open report.html when done. */
  open?: boolean;
  /** --verbose: every row of the terminal report. */
  verbose?: boolean;
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
  if (!first || first === '--help' || first === '-h') return { command: 'help', ...bare };
  if (first === 'help') return { command: 'help', topic: COMMANDS.find((c) => c === rest[0]), ...bare };
  const command = COMMANDS.find((c) => c === first);
  if (!command) {
    if (first.startsWith('-'))
      throw new UsageError(
        `expected a command before ${first}: hotpath compare|profile|report|drift|history|bisect|schema|init (see --help)`,
      );
    throw new UsageError(
      `unknown command ${JSON.stringify(first)}: expected compare, profile, report, drift, history, bisect, schema or init (see --help)`,
    );
  }
  // Help before anything else: no check of the other arguments, and nothing run.
  if (asksForHelp(rest)) return { command: 'help', topic: command, ...bare };
  if (command === 'init') {
    const init = parseInit(rest);
    return init === 'help' ? { command: 'help', topic: command, ...bare } : { command, ...bare, init };
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
  if (values.help) return { command: 'help', topic: command, ...bare };
  if (values.version) return { command: 'version', ...bare };
  checkCommandArguments(command, values, positionals);
  // config, results, shard, reference: the check the Action makes of its inputs, the same error.
  for (const { name } of FRONT_DOOR_OPTIONS) {
    const value = values[name];
    if (typeof value === 'string') checkFrontDoorValue(name, value);
  }
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
    shard: (values.shard as string | undefined) ?? cliDefault('shard'),
    reference: values.reference as string | undefined,
    history: values.history as string | undefined,
    good: values.good as string | undefined,
    bad: values.bad as string | undefined,
    config: values.config as string | undefined,
    json: Boolean(values.json),
    quiet: Boolean(values.quiet),
    markdown: values.markdown as string | undefined,
    open: Boolean(values.open),
    verbose: Boolean(values.verbose),
    init: bare.init,
  };
}

/** What a command needs among its arguments, and flags that belong to another command. */
function checkCommandArguments(
  command: CommandName,
  values: Record<string, unknown>,
  positionals: readonly string[],
): void {
  if (command === 'report' && positionals.length === 0)
    throw new UsageError('hotpath report needs the folder(s) holding the results (see --help)');
  if (
    (values.reference !== undefined && command !== 'drift' && command !== 'history') ||
    (values.history !== undefined && command !== 'drift')
  )
    throw new UsageError(
      `${values.history !== undefined ? '--history' : '--reference'} belongs to hotpath drift${values.history !== undefined ? '' : ' and hotpath history'} (see --help)`,
    );
  if ((values.good !== undefined || values.bad !== undefined) && command !== 'bisect')
    throw new UsageError(
      `--${values.good !== undefined ? 'good' : 'bad'} belongs to hotpath bisect (see --help)`,
    );
  if (command === 'bisect') {
    for (const flag of ['good', 'bad'] as const) {
      const value = values[flag];
      if (typeof value !== 'string' || value.trim() === '')
        throw new UsageError(
          'hotpath bisect needs --good REF and --bad REF (commits, tags or branches; see --help)',
        );
      if (value.startsWith('-') || /[\s\u0000-\u001f]/.test(value))
        throw new UsageError(`invalid --${flag} ${JSON.stringify(value)}: expected a commit, tag or branch`);
    }
    for (const flag of ['base', 'head', 'base-start', 'head-start'])
      if (values[flag] !== undefined)
        throw new UsageError(
          `hotpath bisect compares commits of --good..--bad; --${flag} does not apply (see --help)`,
        );
  }
  if (command === 'history' && positionals.length !== 1)
    throw new UsageError('hotpath history needs exactly one history file (see --help)');
  if (command === 'drift' && (typeof values.reference !== 'string' || typeof values.history !== 'string'))
    throw new UsageError(
      'hotpath drift needs --reference REF (tag:GLOB or a ref) and --history FILE (see --help)',
    );
}

/**
 * `--help` or `-h` among a command's arguments (up to a `--`). Grouped short flags (`-qh`) are
 * found by the command's own parse.
 */
function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
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

/** `hotpath init`'s options; 'help' when asked for its usage. */
function parseInit(argv: readonly string[]): InitOptions | 'help' {
  let values: {
    force?: boolean;
    'no-install'?: boolean;
    start?: string;
    url?: string[];
    slo?: string;
    help?: boolean;
  };
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
        slo: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw usageError(err);
  }
  if (values.help) return 'help';
  for (const url of values.url ?? [])
    if (!url.startsWith('/') || /\s/.test(url))
      throw new UsageError(`invalid --url ${JSON.stringify(url)}: expected a path starting with "/"`);
  if (values.start !== undefined && values.start.trim() === '')
    throw new UsageError('invalid --start "": expected the command that starts your server');
  const slo = values.slo === undefined ? undefined : initSlo(values.slo);
  return {
    force: Boolean(values.force),
    install: !values['no-install'],
    start: values.start,
    urls: values.url ?? [],
    ...(slo ? { slo } : {}),
  };
}

/** An SLO given to init (a flag or an answer) as its canonical text; "none" or empty: none. */
export function initSlo(text: string): string | undefined {
  if (text.trim() === '' || text.trim().toLowerCase() === 'none') return undefined;
  const slo = canonicalSlo(text);
  if (!slo)
    throw new UsageError(
      `invalid --slo ${JSON.stringify(text)}: expected an SLO such as p99<=50ms,errors<=1% (p50, p90, p99 in ms or s; errors in percent), or none`,
    );
  return slo;
}
