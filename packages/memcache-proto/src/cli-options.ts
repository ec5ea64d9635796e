import { isIPv6 } from 'node:net';
import { parseArgs } from 'node:util';

/** node:util parseArgs errors as one readable line, the same wording in every hotpath CLI. */
function usageLine(error: unknown): string {
  const e = error as { code?: string; message?: string };
  const [message = ''] = String(e.message ?? error).split('\n');
  const quoted = /'([^']+)'/.exec(message)?.[1];
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${quoted ?? message} (see --help)`;
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = /--[\w-]+/.exec(message)?.[0] ?? message;
    return `option ${option} ${/argument missing/.test(message) ? 'needs a value' : 'takes no value'} (see --help)`;
  }
  return `${message} (see --help)`;
}

import { HotpathMcError } from './errors.js';
import type { ServerOptions } from './server.js';

export const USAGE = `Usage: hotpath-memcached [options]

A drop-in memcached (text, meta and binary protocols) in Node.js. Flags follow memcached's.

  -p, --port <num>            TCP port to listen on (default 11211; 0 = any free port)
  -l, --listen <addr>         interface to listen on (default 127.0.0.1)
  -m, --memory-limit <mb>     item memory in megabytes (default 64)
  -c, --conn-limit <num>      max simultaneous connections (default 1024)
  -f, --slab-growth-factor <f>  chunk size growth factor between slab classes (default 1.25)
  -n, --slab-min-size <bytes> minimum key + value space of the smallest chunk (default 48)
  -I, --max-item-size <size>  largest item, e.g. 1m, 512k, 2097152 (default 1m; 1k..1024m)
  -U, --udp-port <num>        UDP port: only 0 (off) is accepted
  -Y, --auth-file <file>      authfile of user:password lines: clients must log in
                              (text: set <key> 0 0 <n> with data "user password"; binary: SASL PLAIN)
  -o, --extended <opt>        extended option; supported: idle_timeout=<seconds>
  -t, --threads <num>         accepted for compatibility (one event loop serves all)
  -u, --user <name>           accepted for compatibility (ignored)
  -v, --verbose               log errors; -vv also logs connections
  -V, --version               print the version and exit
  -h, --help                  print this help and exit
`;

export type CliAction =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'serve'; options: ServerOptions; warnings: string[] };

function bad(flag: string, value: string, expected: string): HotpathMcError {
  return new HotpathMcError('HP_MC_INVALID_OPTION', `${flag}: ${JSON.stringify(value)} is not ${expected}`);
}

function integer(flag: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw bad(flag, value, `an integer from ${min} to ${max}`);
  }
  return Number(value);
}

/** memcached's -I: a number with an optional k or m suffix. */
export function parseSize(flag: string, value: string): number {
  const match = /^(\d+)([kKmM]?)$/.exec(value);
  if (match === null) throw bad(flag, value, 'a size such as 1m, 512k or 2097152');
  const [, digits, suffix = ''] = match;
  const unit = suffix.toLowerCase();
  const bytes = Number(digits) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 * 1024 : 1);
  if (bytes < 1024 || bytes > 1024 * 1024 * 1024) throw bad(flag, value, 'a size from 1k to 1024m');
  return bytes;
}

/**
 * Whether a listen address means "every interface": `0.0.0.0` in any spelling inet_aton accepts
 * (`0`, `0.0`, `000.0.0.0`, `0x0`), the IPv6 unspecified address in any spelling (`::`, `::0`,
 * `0:0::0`, `[::]`, `::0.0.0.0`), `*` and the empty string.
 */
export function isAllInterfaces(address: string): boolean {
  let a = address.trim();
  if (a === '' || a === '*') return true;
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1);
  if (isIPv6(a)) {
    return a
      .split(':')
      .every((part) => part === '' || /^0+$/.test(part) || (part.includes('.') && isZeroIPv4(part)));
  }
  return isZeroIPv4(a);
}

function isZeroIPv4(a: string): boolean {
  const parts = a.split('.');
  return parts.length <= 4 && parts.every((part) => /^(0x0*|0+)$/i.test(part));
}

/** Parses argv (without node and script) into what the CLI should do. Throws HotpathMcError. */
export function parseCliArgs(argv: string[]): CliAction {
  let parsed: ReturnType<typeof parseArgs>;
  const config = {
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string', short: 'p' },
      listen: { type: 'string', short: 'l' },
      'memory-limit': { type: 'string', short: 'm' },
      'conn-limit': { type: 'string', short: 'c' },
      'max-item-size': { type: 'string', short: 'I' },
      'slab-growth-factor': { type: 'string', short: 'f' },
      'slab-min-size': { type: 'string', short: 'n' },
      'udp-port': { type: 'string', short: 'U' },
      'auth-file': { type: 'string', short: 'Y' },
      extended: { type: 'string', short: 'o', multiple: true },
      threads: { type: 'string', short: 't' },
      user: { type: 'string', short: 'u' },
      verbose: { type: 'boolean', short: 'v', multiple: true },
      version: { type: 'boolean', short: 'V' },
      help: { type: 'boolean', short: 'h' },
    },
  } as const;
  try {
    parsed = parseArgs(config);
  } catch (cause) {
    throw new HotpathMcError('HP_MC_INVALID_OPTION', usageLine(cause), { cause });
  }
  const v = parsed.values as Record<string, string | string[] | boolean | boolean[] | undefined>;
  if (v.help) return { kind: 'help' };
  if (v.version) return { kind: 'version' };
  const options: ServerOptions = {};
  const warnings: string[] = [];
  if (typeof v.port === 'string') options.port = integer('-p', v.port, 0, 65535);
  if (typeof v.listen === 'string') {
    options.host = v.listen;
    if (isAllInterfaces(v.listen)) {
      warnings.push(
        `warning: listening on all interfaces (${v.listen}); anyone who can reach this host can read and write the cache`,
      );
    }
  }
  if (typeof v['memory-limit'] === 'string') options.memoryMb = integer('-m', v['memory-limit'], 1, 1 << 20);
  if (typeof v['conn-limit'] === 'string')
    options.maxConnections = integer('-c', v['conn-limit'], 1, 1 << 20);
  if (typeof v['max-item-size'] === 'string') options.itemSizeMax = parseSize('-I', v['max-item-size']);
  const factor = v['slab-growth-factor'];
  if (typeof factor === 'string') {
    if (!/^\d+(\.\d+)?$/.test(factor) || Number(factor) <= 1 || Number(factor) > 8) {
      throw bad('-f', factor, 'a factor above 1 and at most 8, such as 1.25');
    }
    options.growthFactor = Number(factor);
  }
  const minSize = v['slab-min-size'];
  if (typeof minSize === 'string') options.minChunkBytes = integer('-n', minSize, 1, 1024 * 1024);
  if (typeof v['udp-port'] === 'string' && v['udp-port'] !== '0') {
    throw bad('-U', v['udp-port'], '0 (UDP is not supported: it enables amplification attacks)');
  }
  if (typeof v['auth-file'] === 'string') options.authfile = v['auth-file'];
  if (typeof v.threads === 'string') integer('-t', v.threads, 1, 1024);
  for (const opt of (v.extended as string[] | undefined) ?? []) {
    for (const part of opt.split(',')) {
      const [name, value = ''] = part.split('=');
      if (name === 'idle_timeout') options.idleTimeoutSeconds = integer('-o idle_timeout', value, 0, 1 << 30);
      else throw bad('-o', part, 'a supported extended option (idle_timeout=<seconds>)');
    }
  }
  const verbose = v.verbose as boolean[] | undefined;
  options.verbosity = Math.min(verbose?.length ?? 0, 2);
  return { kind: 'serve', options, warnings };
}
