import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describe, HotpathLoadError, invalidOption } from './errors.js';
import type { MemcacheOperation, RunOptions } from './options.js';

export const USAGE = `Usage: hotpath-load [options] <url>

  <url>                    http://host[:port]/path or memcache://host:port

Load model
  -c, --connections N      concurrent connections (default 10)
  -d, --duration SECONDS   measured seconds (default 10 when -n is not given)
  -n, --amount N           send exactly N measured requests, then stop
  -p, --pipelining N       requests in flight per connection (default 1)
  -R, --rate N             open model: N requests/second over all connections,
                           latency counted from each request's intended send time
      --warmup SECONDS     load before measuring, excluded from the results
  -t, --timeout SECONDS    per-request timeout (default 10)
  -w, --workers N          worker threads (default 1); histograms are merged exactly

HTTP request
  -m, --method METHOD      request method (default GET)
  -H, --header "K: V"      request header, repeatable
  -b, --body TEXT|@FILE    request body, literal or read from FILE

memcache target
      --mc-op get|set|mix  operation (default get)
      --mc-set-ratio R     share of sets in mix mode, 0..1 (default 0.1)
      --mc-keys N          key space (default 10000)
      --mc-value-size B    value size in bytes (default 100)
      --mc-hit-ratio R     share of keys stored before the run, 0..1 (default 1)

Output
      --json               print the result as JSON on stdout
  -h, --help               print this help

Exit status: 0 done, 1 the run failed (e.g. unreachable target), 2 bad usage,
130 interrupted (Ctrl-C; the partial result is printed first).`;

export interface CliCommand {
  help: boolean;
  json: boolean;
  options: RunOptions;
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

/** Parses argv (without node and script) into run options; throws HotpathLoadError on bad input. */
export function parseCli(argv: string[]): CliCommand {
  let parsed: ReturnType<typeof parseWithNode>;
  try {
    parsed = parseWithNode(argv);
  } catch (cause) {
    const message = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    throw new HotpathLoadError('HP_LOAD_INVALID_OPTION', `${message} (see --help)`, { cause });
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true, json: false, options: { url: '' } };
  if (positionals.length !== 1) {
    throw new HotpathLoadError(
      'HP_LOAD_INVALID_OPTION',
      positionals.length === 0
        ? 'missing target URL: expected hotpath-load [options] <url> (see --help)'
        : `too many arguments ${describe(positionals.join(' '))}: expected one target URL`,
    );
  }
  const headers: Record<string, string> = {};
  for (const header of values.header ?? []) {
    const colon = header.indexOf(':');
    if (colon <= 0) throw invalidOption('-H', header, '"Name: value"');
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  let body: string | Buffer | undefined = values.body;
  if (body?.startsWith('@')) {
    try {
      body = readFileSync(body.slice(1));
    } catch (cause) {
      throw new HotpathLoadError(
        'HP_LOAD_INVALID_OPTION',
        `cannot read body file ${describe(body.slice(1))}`,
        {
          cause,
        },
      );
    }
  }
  const op = values['mc-op'];
  if (op !== undefined && op !== 'get' && op !== 'set' && op !== 'mix')
    throw invalidOption('--mc-op', op, 'get, set or mix');
  const options: RunOptions = {
    url: positionals[0],
    connections: integerFlag('-c', values.connections, 'a whole number of connections >= 1'),
    duration: positive('-d', values.duration, 'a number of seconds > 0'),
    amount: integerFlag('-n', values.amount, 'a whole number of requests >= 1'),
    pipelining: integerFlag('-p', values.pipelining, 'a whole number >= 1'),
    rate: positive('-R', values.rate, 'requests per second > 0'),
    warmup: numberFlag('--warmup', values.warmup, 'a number of seconds >= 0'),
    timeout: positive('-t', values.timeout, 'a number of seconds > 0'),
    workers: integerFlag('-w', values.workers, 'a whole number of threads >= 1'),
    method: values.method,
    headers: Object.keys(headers).length > 0 ? headers : undefined,
    body,
  };
  if (options.url.startsWith('memcache:')) {
    options.memcache = {
      operation: op as MemcacheOperation | undefined,
      setRatio: numberFlag('--mc-set-ratio', values['mc-set-ratio'], 'a number from 0 to 1'),
      keySpace: integerFlag('--mc-keys', values['mc-keys'], 'a whole number of keys >= 1'),
      valueSize: integerFlag('--mc-value-size', values['mc-value-size'], 'a whole number of bytes', 0),
      hitRatio: numberFlag('--mc-hit-ratio', values['mc-hit-ratio'], 'a number from 0 to 1'),
    };
  }
  for (const key of Object.keys(options) as (keyof RunOptions)[]) {
    if (options[key] === undefined) delete options[key];
  }
  return { help: false, json: values.json ?? false, options };
}

function parseWithNode(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      connections: { type: 'string', short: 'c' },
      duration: { type: 'string', short: 'd' },
      amount: { type: 'string', short: 'n' },
      pipelining: { type: 'string', short: 'p' },
      rate: { type: 'string', short: 'R' },
      method: { type: 'string', short: 'm' },
      header: { type: 'string', short: 'H', multiple: true },
      body: { type: 'string', short: 'b' },
      workers: { type: 'string', short: 'w' },
      timeout: { type: 'string', short: 't' },
      warmup: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      'mc-op': { type: 'string' },
      'mc-set-ratio': { type: 'string' },
      'mc-keys': { type: 'string' },
      'mc-value-size': { type: 'string' },
      'mc-hit-ratio': { type: 'string' },
    },
  });
}
