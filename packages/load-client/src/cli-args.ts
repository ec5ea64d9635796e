import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describe, HotpathLoadError, invalidOption } from './errors.js';
import { GRPC_METHOD, MAX_TIMER_SECONDS, type MemcacheOperation, type RunOptions } from './options.js';

export const USAGE = `Usage: hotpath-load [options] <url>
       hotpath-load merge <result.json>...

  <url>                    http://host[:port]/path, https://host[:port]/path
                           or memcache://host:port

The letters are autocannon's wherever both tools have the option.

Load model (TIME: seconds, or with a unit: 500ms, 10s, 2m, 1h)
  -c, --connections N      concurrent connections (default 10)
  -d, --duration TIME      measured time (default 10s when -a is not given)
  -a, --amount N           send exactly N measured requests, then stop
  -p, --pipelining N       requests in flight per connection (default 1); with
                           --http2, concurrent streams per connection (h2load's -m)
  -R, --rate N             open model: N requests/second over all connections,
                           latency counted from each request's intended send time
  -W, --warmup TIME        load before measuring, excluded from the results
  -t, --timeout TIME       per-request timeout, seconds by default (default 10)
  -w, --workers N          worker threads (default 1); histograms are merged exactly
  -B, --bailout N          stop once N measured requests failed (per worker)
      --drain              at the end, send nothing more but wait for the requests
                           in flight and count them (default: drop them, as wrk does)
      --connect-first      open every connection before the first request, and start
                           the clocks once all are up (a busy Node.js server accepts
                           one connection per turn of its event loop)
  -S, --socket-path PATH   connect to this Unix domain socket; the URL still gives
                           the Host header and the path

HTTP/2
      --http2              speak HTTP/2: h2c with prior knowledge over http://,
                           ALPN h2 over https:// (self-signed accepted unless --verify)
      --grpc METHOD        gRPC unary calls to /package.Service/Method (implies
                           --http2); the request message's bytes from -b/-i

TLS (https:// targets; certificates are not checked unless asked, as wrk does)
      --verify             check the server's certificate against the system CAs
      --ca FILE            trust the PEM certificates in FILE (implies --verify)

HTTP request
  -m, --method METHOD      request method (default GET)
  -H, --header "K: V"      request header, repeatable; K=V also works
  -b, --body TEXT|@FILE    request body, literal or read from FILE
  -i, --input FILE         request body read from FILE
  -E, --expect-body TEXT   every response body must be TEXT; one that differs
                           counts as a failed request (kind "body")

memcache target
      --mc-op get|set|mix  operation (default get)
      --mc-set-ratio R     share of sets in mix mode, 0..1 (default 0.1)
      --mc-keys N          key space (default 10000)
      --mc-value-size B    value size in bytes (default 100)
      --mc-hit-ratio R     share of keys stored before the run, 0..1 (default 1)

Output
  -j, --json               print the result as JSON on stdout (no progress)
  -l, --latency            also print the full latency distribution
  -T, --title TEXT         name the run in the summary and the JSON ("title")
  -n, --no-progress        no progress on stderr (a terminal gets one live line,
                           a pipe or CI log one line per second, then one per 10 s)
  -h, --help               print this help
  -v, --version            print the version

merge: reads the --json results of runs made at the same time (several machines
or CI jobs against one target) and prints them merged as one result: latency
histograms and counts added exactly, per-second series added second by second.
Takes --json (default) or --text.

Exit status: 0 done, 1 the run failed (unreachable target, or no request
completed: the reason is printed), 2 bad usage, 130 interrupted (Ctrl-C; the
partial result is printed first).`;

/** hotpath-load's options: autocannon's letters (and its camelCase long names as aliases). */
const RUN_OPTIONS = {
  connections: { type: 'string', short: 'c' },
  duration: { type: 'string', short: 'd' },
  amount: { type: 'string', short: 'a' },
  pipelining: { type: 'string', short: 'p' },
  rate: { type: 'string', short: 'R' },
  method: { type: 'string', short: 'm' },
  header: { type: 'string', short: 'H', multiple: true },
  headers: { type: 'string', multiple: true },
  body: { type: 'string', short: 'b' },
  input: { type: 'string', short: 'i' },
  workers: { type: 'string', short: 'w' },
  warmup: { type: 'string', short: 'W' },
  timeout: { type: 'string', short: 't' },
  bailout: { type: 'string', short: 'B' },
  drain: { type: 'boolean' },
  'connect-first': { type: 'boolean' },
  'socket-path': { type: 'string', short: 'S' },
  socketPath: { type: 'string' },
  'expect-body': { type: 'string', short: 'E' },
  expectBody: { type: 'string' },
  title: { type: 'string', short: 'T' },
  latency: { type: 'boolean', short: 'l' },
  'no-progress': { type: 'boolean', short: 'n' },
  verify: { type: 'boolean' },
  http2: { type: 'boolean' },
  grpc: { type: 'string' },
  ca: { type: 'string' },
  json: { type: 'boolean', short: 'j' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  'mc-op': { type: 'string' },
  'mc-set-ratio': { type: 'string' },
  'mc-keys': { type: 'string' },
  'mc-value-size': { type: 'string' },
  'mc-hit-ratio': { type: 'string' },
} as const;

export type CliCommand =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'run'; json: boolean; options: RunOptions; output: RunOutput }
  | { kind: 'merge'; json: boolean; files: string[] };

/** How the CLI shows a run (not part of the run itself). */
export interface RunOutput {
  /** Progress on stderr (false with -n or -j). */
  progress: boolean;
  /** Print the full latency distribution (-l). */
  latency: boolean;
  /** The run's name (-T), shown in the summary and the JSON. */
  title: string | undefined;
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function numberFlag(flag: string, value: string | undefined, expected: string): number | undefined {
  if (value === undefined) return undefined;
  if (!NUMBER.test(value.trim())) throw invalidOption(flag, value, expected);
  return Number(value);
}

function integerFlag(flag: string, value: string | undefined, expected: string, min = 1): number | undefined {
  const n = numberFlag(flag, value, expected);
  if (n !== undefined && (!Number.isInteger(n) || n < min)) throw invalidOption(flag, value, expected);
  return n;
}

function positive(flag: string, value: string | undefined, expected: string): number | undefined {
  const n = numberFlag(flag, value, expected);
  if (n !== undefined && n <= 0) throw invalidOption(flag, value, expected);
  return n;
}

const DURATION = /^(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)?$/;
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/**
 * A time in seconds from `10`, `10s`, `500ms`, `2m` or `1h`. With `timer`, at most what one
 * Node.js timer can wait (2^31-1 ms).
 */
export function durationFlag(
  flag: string,
  value: string | undefined,
  min: 'positive' | 'non-negative',
  timer: boolean,
): number | undefined {
  if (value === undefined) return undefined;
  const expected = `a time ${min === 'positive' ? '> 0' : '>= 0'} such as 10, 10s, 500ms or 2m`;
  const match = DURATION.exec(value.trim());
  if (match === null) throw invalidOption(flag, value, expected);
  const unit = UNIT_SECONDS[match[2] ?? 's'];
  const seconds = unit === undefined ? Number.NaN : Number(match[1]) * unit;
  if (!Number.isFinite(seconds) || (min === 'positive' && seconds <= 0))
    throw invalidOption(flag, value, expected);
  if (timer && seconds > MAX_TIMER_SECONDS)
    throw invalidOption(
      flag,
      value,
      `at most ${MAX_TIMER_SECONDS} seconds (2^31-1 ms, the longest a timer can wait)`,
    );
  return seconds;
}

/** parseArgs' errors, in one line: `unknown option --foo (see --help)`. */
function usageError(cause: unknown): HotpathLoadError {
  const code = (cause as { code?: string }).code;
  const message = cause instanceof Error ? cause.message : String(cause);
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown !== null)
    return new HotpathLoadError('HP_LOAD_INVALID_OPTION', `unknown option ${unknown[1]} (see --help)`, {
      cause,
    });
  const first = (message.split('\n')[0] ?? message).replace(/\.$/, '');
  return new HotpathLoadError('HP_LOAD_INVALID_OPTION', `${first} (see --help)`, { cause });
}

/** Options that take a value: a value that starts with "-" (e.g. -c -1) is still their value. */
const VALUE_OPTIONS = new Set(
  Object.entries(RUN_OPTIONS).flatMap(([name, o]) =>
    o.type === 'string' ? [`--${name}`, ...('short' in o ? [`-${o.short}`] : [])] : [],
  ),
);

/**
 * `-c -1` → `-c=-1`-like tokens that parseArgs reads as a value (it would otherwise call the
 * value an option, or "ambiguous"), so the value check can name it: `invalid -c "-1"`.
 */
export function joinDashValues(argv: readonly string[], valueOptions: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const next = argv[i + 1];
    if (valueOptions.has(arg) && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(arg.startsWith('--') ? `${arg}=${next}` : `${arg}${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** "Name: value" (curl, wrk) or "name=value" (autocannon) → [name, value]. */
export function splitHeader(header: string): [string, string] {
  const colon = header.indexOf(':');
  const equals = header.indexOf('=');
  // The first separator wins: "a=b:c" is a=b:c, "X-T: a=b" is X-T: a=b.
  const at = colon > 0 && (equals < 0 || colon < equals) ? colon : equals;
  const name = at > 0 ? header.slice(0, at).trim() : '';
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name))
    throw invalidOption('-H', header, '"Name: value" or name=value');
  return [name, header.slice(at + 1).trim()];
}

/** Parses argv (without node and script) into a command; throws HotpathLoadError on bad input. */
export function parseCli(argv: string[]): CliCommand {
  if (argv[0] === 'merge') return parseMerge(argv.slice(1));
  let parsed: ReturnType<typeof parseWithNode>;
  try {
    parsed = parseWithNode(joinDashValues(argv, VALUE_OPTIONS));
  } catch (cause) {
    throw usageError(cause);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  const [url] = positionals;
  if (values['no-progress'] && positionals.length > 1) {
    // -n was hotpath-load's amount; in autocannon (and now here) it is --no-progress.
    const amount = argv[argv.indexOf('-n') + 1];
    if (amount !== undefined && /^\d+$/.test(amount))
      throw new HotpathLoadError(
        'HP_LOAD_INVALID_OPTION',
        `-n takes no value (got ${describe(amount)}): -n is --no-progress, as in autocannon; -a ${amount} sends ${amount} requests`,
      );
  }
  if (url === undefined || positionals.length !== 1) {
    throw new HotpathLoadError(
      'HP_LOAD_INVALID_OPTION',
      positionals.length === 0
        ? 'missing target URL: expected hotpath-load [options] <url> (see --help)'
        : `too many arguments ${describe(positionals.join(' '))}: expected one target URL`,
    );
  }
  const headers: Record<string, string> = {};
  for (const header of [...(values.header ?? []), ...(values.headers ?? [])]) {
    const [name, value] = splitHeader(header);
    headers[name] = value;
  }
  if (values.body !== undefined && values.input !== undefined)
    throw invalidOption('-i', values.input, 'either -b or -i, not both');
  let body: string | Buffer | undefined = values.body;
  const bodyFile = values.input ?? (body?.startsWith('@') ? body.slice(1) : undefined);
  if (bodyFile !== undefined) {
    try {
      body = readFileSync(bodyFile);
    } catch (cause) {
      throw new HotpathLoadError('HP_LOAD_INVALID_OPTION', `cannot read body file ${describe(bodyFile)}`, {
        cause,
      });
    }
  }
  const op = values['mc-op'];
  if (op !== undefined && op !== 'get' && op !== 'set' && op !== 'mix')
    throw invalidOption('--mc-op', op, 'get, set or mix');
  const options: RunOptions = {
    url,
    connections: integerFlag('-c', values.connections, 'a whole number of connections >= 1'),
    duration: durationFlag('-d', values.duration, 'positive', true),
    amount: integerFlag('-a', values.amount, 'a whole number of requests >= 1'),
    pipelining: integerFlag('-p', values.pipelining, 'a whole number >= 1'),
    rate: positive('-R', values.rate, 'requests per second > 0'),
    warmup: durationFlag('-W', values.warmup, 'non-negative', true),
    timeout: durationFlag('-t', values.timeout, 'positive', false),
    workers: integerFlag('-w', values.workers, 'a whole number of worker threads >= 1 (-W is the warm-up)'),
    bailout: integerFlag('-B', values.bailout, 'a whole number of failed requests >= 1'),
    ...(values.drain ? { drain: true } : {}),
    ...(values['connect-first'] ? { connectFirst: true } : {}),
    socketPath: values['socket-path'] ?? values.socketPath,
    expectBody: values['expect-body'] ?? values.expectBody,
    method: values.method,
    headers: Object.keys(headers).length > 0 ? headers : undefined,
    body,
  };
  if (options.socketPath === '') throw invalidOption('-S', '', 'the path of a Unix domain socket');
  const title = values.title;
  if (title !== undefined && (title.trim() === '' || /[\u0000-\u001f\u007f]/.test(title)))
    throw invalidOption('-T', title, 'a one-line title');
  if (options.url.startsWith('memcache:')) {
    options.memcache = {
      operation: op as MemcacheOperation | undefined,
      setRatio: numberFlag('--mc-set-ratio', values['mc-set-ratio'], 'a number from 0 to 1'),
      keySpace: integerFlag('--mc-keys', values['mc-keys'], 'a whole number of keys >= 1'),
      valueSize: integerFlag('--mc-value-size', values['mc-value-size'], 'a whole number of bytes', 0),
      hitRatio: numberFlag('--mc-hit-ratio', values['mc-hit-ratio'], 'a number from 0 to 1'),
    };
  }
  if (values.grpc !== undefined) {
    if (options.url.startsWith('memcache:'))
      throw invalidOption('--grpc', values.grpc, 'an http:// or https:// target');
    if (!GRPC_METHOD.test(values.grpc))
      throw invalidOption('--grpc', values.grpc, 'a gRPC method path like /package.Service/Method');
    if (values.method !== undefined)
      throw invalidOption('-m', values.method, 'no method with --grpc (calls are POST)');
    options.grpc = { method: values.grpc, message: options.body };
    options.body = undefined;
  }
  if (values.http2) {
    if (options.url.startsWith('memcache:'))
      throw invalidOption('--http2', true, 'an http:// or https:// target');
    options.http2 = true;
  }
  if (values.verify || values.ca !== undefined) {
    if (!options.url.startsWith('https:'))
      throw invalidOption(
        values.ca !== undefined ? '--ca' : '--verify',
        values.ca ?? true,
        'an https:// target',
      );
    let ca: Buffer | undefined;
    if (values.ca !== undefined) {
      try {
        ca = readFileSync(values.ca);
      } catch (cause) {
        throw new HotpathLoadError('HP_LOAD_INVALID_OPTION', `cannot read --ca file ${describe(values.ca)}`, {
          cause,
        });
      }
    }
    options.tls = { verify: true, ca };
  }
  for (const key of Object.keys(options) as (keyof RunOptions)[]) {
    if (options[key] === undefined) delete options[key];
  }
  const json = values.json ?? false;
  return {
    kind: 'run',
    json,
    options,
    output: { progress: !json && !values['no-progress'], latency: values.latency ?? false, title },
  };
}

function parseMerge(argv: string[]): CliCommand {
  let parsed: ReturnType<typeof parseMergeArgs>;
  try {
    parsed = parseMergeArgs(argv);
  } catch (cause) {
    throw usageError(cause);
  }
  if (parsed.values.help) return { kind: 'help' };
  if (parsed.values.json && parsed.values.text)
    throw new HotpathLoadError('HP_LOAD_INVALID_OPTION', 'merge takes --json or --text, not both');
  if (parsed.positionals.length === 0)
    throw new HotpathLoadError(
      'HP_LOAD_INVALID_OPTION',
      'missing result files: expected hotpath-load merge <result.json>... (see --help)',
    );
  return { kind: 'merge', json: !parsed.values.text, files: parsed.positionals };
}

function parseMergeArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { json: { type: 'boolean' }, text: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
}

function parseWithNode(argv: string[]) {
  return parseArgs({ args: argv, allowPositionals: true, strict: true, options: RUN_OPTIONS });
}
