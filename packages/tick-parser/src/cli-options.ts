import { parseArgs } from 'node:util';
import { HotpathTicksError } from './errors.js';

export interface CliOptions {
  file: string;
  json: boolean;
  folded: boolean;
  speedscope: boolean;
  flamegraph?: string;
  top?: number;
  diff?: string;
  symbols: boolean;
  nm?: string;
  objdump?: string;
  /** Directory of symbol tables kept across runs; undefined: none. */
  symbolCacheDir?: string;
  help: boolean;
}

/** `$XDG_CACHE_HOME/hotpath-ticks`, else `~/.cache/hotpath-ticks`. */
export function defaultSymbolCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const base = env.XDG_CACHE_HOME || (env.HOME ? `${env.HOME}/.cache` : undefined);
  return base ? `${base}/hotpath-ticks` : undefined;
}

export interface RecordCliOptions {
  /** The command to run, after `--`. */
  command: string[];
  /** Output directory; undefined: `.hotpath-ticks/<time>`. */
  out?: string;
  json: boolean;
  top?: number;
  symbols: boolean;
  nm?: string;
  objdump?: string;
  symbolCacheDir?: string;
  help: boolean;
}

export const USAGE = `Usage: hotpath-ticks <file> [options]
       hotpath-ticks record [--out <dir>] [--json] [--top <N>] [symbol options] -- <command...>

Reads a V8 tick log (node --prof) or a .cpuprofile (node --cpu-prof); the kind is detected from
the content. Prints the node --prof-process text report by default.

Options:
  --json                 JSON report: ticks { total, unaccounted, js, cpp, gc, shared } and functions
  --folded               folded stacks ("a;b;c 42" lines) for flame graph tools
  --speedscope           speedscope JSON
  --flamegraph <out>     write a flame graph; out ends in .svg or .html
  --top <N>              at most N functions per section (N >= 1)
  --diff <base>          compare <file> (head) with <base>: self-share change per function;
                         with --flamegraph, a differential flame graph
  --no-symbols           do not read C++ symbols (nor run c++filt)
  --symbol-cache <dir>   keep symbol tables read with nm here across runs
                         (default: $XDG_CACHE_HOME or ~/.cache, /hotpath-ticks)
  --no-symbol-cache      do not use a symbol cache directory
  --nm <path>            read symbols with this nm (and objdump) instead of the
                         built-in ELF reader (its fallback: nm on PATH)
  --objdump <path>       likewise, with this objdump
  -h, --help             this help
  -v, --version          print the version

Exit codes: 0 done, 1 the input could not be read, 2 bad usage or unknown input format.

record: runs <command> under V8's tick profiler and reports on it once it exits.
  "node ...": --prof is added after node; any other command (npm start, npx ...):
  a node that adds it is put first on PATH (Node refuses --prof in NODE_OPTIONS).
  SIGINT, SIGTERM and SIGHUP are passed on to the command. Writes the V8 log(s),
  profile.folded, flamegraph.html, profile.speedscope.json and the report into
  --out <dir> (default .hotpath-ticks/<time>). Exits with the command's exit code
  (128 + signal number when a signal ended it); 1 when it wrote no log.
`;

/** Validates --top. */
function parseTop(value: string | boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 1e9) {
    bad(`--top "${text}" is not valid: expected a whole number >= 1`);
  }
  return Number(text);
}

/** Validates the symbol flags shared by both commands. */
function symbolCacheDir(v: Record<string, string | boolean | undefined>): string | undefined {
  if (v['no-symbol-cache'] === true && v['symbol-cache'] !== undefined) {
    bad('--symbol-cache and --no-symbol-cache cannot be combined');
  }
  if (v['symbol-cache'] !== undefined && !String(v['symbol-cache']).startsWith('/')) {
    bad(`--symbol-cache "${v['symbol-cache']}" is not valid: expected an absolute directory path`);
  }
  return v['no-symbol-cache'] === true
    ? undefined
    : v['symbol-cache'] === undefined
      ? defaultSymbolCacheDir()
      : String(v['symbol-cache']);
}

/** The symbol and help flags both the report and `record` take. */
const SYMBOL_AND_HELP_OPTIONS = {
  'no-symbols': { type: 'boolean', default: false },
  nm: { type: 'string' },
  'symbol-cache': { type: 'string' },
  'no-symbol-cache': { type: 'boolean', default: false },
  objdump: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** Parses `record`'s arguments (after the word `record`). Throws HP_TICKS_BAD_OPTION with one line. */
export function parseRecordOptions(argv: string[]): RecordCliOptions {
  const split = argv.indexOf('--');
  const own = split < 0 ? argv : argv.slice(0, split);
  const command = split < 0 ? [] : argv.slice(split + 1);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: own,
      allowPositionals: true,
      strict: true,
      options: {
        out: { type: 'string' },
        json: { type: 'boolean', default: false },
        top: { type: 'string' },
        ...SYMBOL_AND_HELP_OPTIONS,
      },
    });
  } catch (error) {
    bad(`record: ${usageLine(error)}`);
  }
  const v = parsed.values as Record<string, string | boolean | undefined>;
  if (v.help === true) return { command: [], json: false, symbols: true, help: true };
  if (parsed.positionals.length > 0) {
    bad(
      `record: "${parsed.positionals[0]}" is not an option: put the command after --, as in hotpath-ticks record -- node app.js`,
    );
  }
  if (command.length === 0 || command[0] === '') {
    bad('record: no command given: expected one after --, as in hotpath-ticks record -- node app.js');
  }
  if (v.out !== undefined && String(v.out) === '') bad('record: --out "" is not valid: expected a directory');
  return {
    command,
    out: v.out === undefined ? undefined : String(v.out),
    json: v.json === true,
    top: parseTop(v.top),
    symbols: v['no-symbols'] !== true,
    nm: v.nm === undefined ? undefined : String(v.nm),
    objdump: v.objdump === undefined ? undefined : String(v.objdump),
    symbolCacheDir: symbolCacheDir(v),
    help: false,
  };
}

function bad(message: string): never {
  throw new HotpathTicksError('HP_TICKS_BAD_OPTION', message);
}

/** node:util parseArgs errors as one readable line, the same wording in every hotpath CLI. */
function usageLine(error: unknown): string {
  const e = error as { code?: string; message?: string };
  const text = String(e.message ?? error);
  const message = text.split('\n', 1)[0] ?? text;
  const quoted = /'([^']+)'/.exec(message)?.[1];
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${quoted ?? message} (see --help)`;
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = /--[\w-]+/.exec(message)?.[0] ?? message;
    return `option ${option} ${/argument missing/.test(message) ? 'needs a value' : 'takes no value'} (see --help)`;
  }
  return `${message} (see --help)`;
}

/** Parses and validates argv (without node and the script). Throws HP_TICKS_BAD_OPTION with one line. */
export function parseCliOptions(argv: string[]): CliOptions {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean', default: false },
        folded: { type: 'boolean', default: false },
        speedscope: { type: 'boolean', default: false },
        flamegraph: { type: 'string' },
        top: { type: 'string' },
        diff: { type: 'string' },
        ...SYMBOL_AND_HELP_OPTIONS,
      },
    });
  } catch (error) {
    bad(usageLine(error));
  }
  const v = parsed.values as Record<string, string | boolean | undefined>;
  const help = v.help === true;
  if (help) return { file: '', json: false, folded: false, speedscope: false, symbols: true, help };
  const [file] = parsed.positionals;
  if (file === undefined || parsed.positionals.length !== 1) {
    bad(
      `expected exactly one input file, got ${parsed.positionals.length === 0 ? 'none' : parsed.positionals.map((p) => `"${p}"`).join(', ')} (see --help)`,
    );
  }
  const modes = ['json', 'folded', 'speedscope'].filter((m) => v[m] === true);
  if (modes.length > 1) bad(`--${modes.join(' and --')} cannot be combined: choose one output format`);
  const top = parseTop(v.top);
  const flamegraph = v.flamegraph === undefined ? undefined : String(v.flamegraph);
  if (flamegraph !== undefined && !/\.(svg|html?)$/i.test(flamegraph)) {
    bad(`--flamegraph "${flamegraph}" is not valid: expected a file name ending in .svg or .html`);
  }
  const cacheDir = symbolCacheDir(v);
  if ((v.folded === true || v.speedscope === true) && v.diff !== undefined) {
    bad(
      `--diff cannot be combined with --${v.folded === true ? 'folded' : 'speedscope'}: use the text or --json report`,
    );
  }
  return {
    file,
    json: v.json === true,
    folded: v.folded === true,
    speedscope: v.speedscope === true,
    flamegraph,
    top,
    diff: v.diff === undefined ? undefined : String(v.diff),
    symbols: v['no-symbols'] !== true,
    nm: v.nm === undefined ? undefined : String(v.nm),
    objdump: v.objdump === undefined ? undefined : String(v.objdump),
    symbolCacheDir: cacheDir,
    help: false,
  };
}
