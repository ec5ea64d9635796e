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

A drop-in memcached (text, meta and binary protocols) in Node.js. Flags follow memcached 1.6's;
the ones it cannot honour are refused with the reason.

  -p, --port <num>            TCP port to listen on (default 11211; 0 = any free port)
  -l, --listen <addr>         interface to listen on (default 127.0.0.1)
  -s, --unix-socket <file>    listen on a unix socket instead of TCP
  -a, --unix-mask <mask>      access mask of the unix socket, octal (default 700)
  -U, --udp-port <num>        UDP port: only 0 (off) is accepted
  -d, --daemon                run in the background (the parent exits once it listens)
  -P, --pidfile <file>        write the process id to <file> (removed on exit)
  -u, --user <name>           when run as root, switch to this user (dropping root's groups)
  -m, --memory-limit <mb>     item memory in megabytes (default 64)
  -M, --disable-evictions     answer SERVER_ERROR when memory is full instead of evicting
  -c, --conn-limit <num>      max simultaneous connections (default 1024)
  -b, --listen-backlog <num>  backlog of pending connections (default 1024)
  -f, --slab-growth-factor <f>  chunk size growth factor between slab classes (default 1.25)
  -n, --slab-min-size <bytes> minimum key + value space of the smallest chunk (default 48)
  -I, --max-item-size <size>  largest item, e.g. 1m, 512k, 2097152 (default 1m; 1k..1024m)
  -C, --disable-cas           no cas values (gets shows 0, cas answers EXISTS)
  -F, --disable-flush-all     refuse flush_all
  -A, --enable-shutdown       allow the text "shutdown" command
  -B, --protocol <name>       ascii, binary or auto (default auto)
  -R, --max-reqs-per-event <n>  commands served per connection before others get a turn
  -t, --threads <num>         accepted (one event loop serves all)
  -L, --enable-largepages     accepted; Node cannot ask for large pages (normal pages are used)
  -X, --disable-dumping       accepted (cachedump and metadump do not exist here)
  -W, --disable-watch         accepted (watch does not exist here)
  -Y, --auth-file <file>      authfile of user:password lines: clients must log in
                              (text: set <key> 0 0 <n> with data "user password"; binary: SASL PLAIN)
  -o, --extended <opt>        extended options, comma separated; supported: idle_timeout=<seconds>,
                              slab_automove=0|1 (default 1), slab_reassign,
                              read_buf_mem_limit=<mb> (all connections' buffers together;
                              default 64, 0 = no shared limit)
  -v, --verbose               log errors; -vv also logs connections
  -V, --version               print the version and exit
  -i, --license               print the license and exit
  -h, --help                  print this help and exit

Refused, with the reason: -r (core limit), -k (mlockall), -D (per-prefix stats), -S (SASL
library; use -Y), -e (memory file), -Z (TLS), -N (NAPI ids).
`;

/** What the CLI does besides serving: foreground or daemon, pid file, user switch. */
export interface ProcessOptions {
  daemon: boolean;
  pidFile: string | undefined;
  user: string | undefined;
}

export type CliAction =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'license' }
  | { kind: 'serve'; options: ServerOptions; warnings: string[]; process: ProcessOptions };

/**
 * memcached flags this server cannot honour, and why: refusing says so at start instead of
 * silently running without what the command line asked for.
 */
const REFUSED: Record<string, string> = {
  'enable-coredumps':
    '-r: Node cannot raise the core file limit; set it with `ulimit -c` or LimitCORE= instead',
  'lock-memory': '-k: Node cannot lock its memory (mlockall); set LimitMEMLOCK= and use memcached for this',
  'prefix-delimiter': '-D: per-prefix statistics (stats detail) are not implemented',
  'enable-sasl':
    '-S: there is no SASL library here; -Y <authfile> turns on SASL PLAIN (binary) and text logins',
  'memory-file': '-e: a restartable cache in a memory file is not implemented',
  'enable-ssl': '-Z: TLS is not implemented; put a TLS proxy in front',
  napi_ids: '-N: NAPI id thread steering does not apply to one event loop',
};

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
      'unix-socket': { type: 'string', short: 's' },
      'unix-mask': { type: 'string', short: 'a' },
      daemon: { type: 'boolean', short: 'd' },
      pidfile: { type: 'string', short: 'P' },
      'memory-limit': { type: 'string', short: 'm' },
      'disable-evictions': { type: 'boolean', short: 'M' },
      'conn-limit': { type: 'string', short: 'c' },
      'listen-backlog': { type: 'string', short: 'b' },
      'max-item-size': { type: 'string', short: 'I' },
      'slab-growth-factor': { type: 'string', short: 'f' },
      'slab-min-size': { type: 'string', short: 'n' },
      'udp-port': { type: 'string', short: 'U' },
      'auth-file': { type: 'string', short: 'Y' },
      'disable-cas': { type: 'boolean', short: 'C' },
      'disable-flush-all': { type: 'boolean', short: 'F' },
      'enable-shutdown': { type: 'boolean', short: 'A' },
      protocol: { type: 'string', short: 'B' },
      'max-reqs-per-event': { type: 'string', short: 'R' },
      'enable-largepages': { type: 'boolean', short: 'L' },
      'disable-dumping': { type: 'boolean', short: 'X' },
      'disable-watch': { type: 'boolean', short: 'W' },
      extended: { type: 'string', short: 'o', multiple: true },
      threads: { type: 'string', short: 't' },
      user: { type: 'string', short: 'u' },
      verbose: { type: 'boolean', short: 'v', multiple: true },
      version: { type: 'boolean', short: 'V' },
      license: { type: 'boolean', short: 'i' },
      help: { type: 'boolean', short: 'h' },
      'enable-coredumps': { type: 'boolean', short: 'r' },
      'lock-memory': { type: 'boolean', short: 'k' },
      'prefix-delimiter': { type: 'string', short: 'D' },
      'enable-sasl': { type: 'boolean', short: 'S' },
      'memory-file': { type: 'string', short: 'e' },
      'enable-ssl': { type: 'boolean', short: 'Z' },
      napi_ids: { type: 'string', short: 'N' },
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
  if (v.license) return { kind: 'license' };
  for (const [name, reason] of Object.entries(REFUSED)) {
    if (v[name] !== undefined) throw new HotpathMcError('HP_MC_INVALID_OPTION', `${reason} (see --help)`);
  }
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
  if (typeof v['unix-socket'] === 'string') {
    if (v['unix-socket'] === '') throw bad('-s', '', 'a path for the unix socket');
    options.socketPath = v['unix-socket'];
  }
  const mask = v['unix-mask'];
  if (typeof mask === 'string') {
    if (!/^[0-7]{1,4}$/.test(mask)) throw bad('-a', mask, 'an octal access mask such as 700 or 0770');
    if (options.socketPath === undefined)
      throw bad('-a', mask, "used without -s <file> (it is the unix socket's mask)");
    options.socketMask = Number.parseInt(mask, 8) & 0o777;
  }
  if (typeof v['memory-limit'] === 'string') options.memoryMb = integer('-m', v['memory-limit'], 1, 1 << 20);
  if (v['disable-evictions'] === true) options.evictions = false;
  if (typeof v['conn-limit'] === 'string')
    options.maxConnections = integer('-c', v['conn-limit'], 1, 1 << 20);
  if (typeof v['listen-backlog'] === 'string')
    options.backlog = integer('-b', v['listen-backlog'], 1, 1 << 20);
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
  if (v['disable-cas'] === true) options.casEnabled = false;
  if (v['disable-flush-all'] === true) options.flushEnabled = false;
  if (v['enable-shutdown'] === true) options.enableShutdown = true;
  const protocol = v.protocol;
  if (typeof protocol === 'string') {
    if (protocol !== 'ascii' && protocol !== 'binary' && protocol !== 'auto') {
      throw bad('-B', protocol, 'one of ascii, binary, auto');
    }
    options.protocol = protocol;
  }
  if (typeof v['max-reqs-per-event'] === 'string') {
    options.maxReqsPerEvent = integer('-R', v['max-reqs-per-event'], 1, 1 << 30);
  }
  if (v['enable-largepages'] === true) {
    warnings.push(
      'note: -L: Node cannot ask for large memory pages; normal pages are used (memcached does the same where they are unavailable)',
    );
  }
  if (typeof v.threads === 'string') integer('-t', v.threads, 1, 1024);
  if (typeof v.user === 'string' && !/^[A-Za-z0-9_.][A-Za-z0-9_.-]*\$?$/.test(v.user)) {
    throw bad('-u', v.user, 'a user name');
  }
  for (const opt of (v.extended as string[] | undefined) ?? []) {
    for (const part of opt.split(',')) {
      const [name, value = ''] = part.split('=');
      if (name === 'idle_timeout') options.idleTimeoutSeconds = integer('-o idle_timeout', value, 0, 1 << 30);
      else if (name === 'slab_automove')
        options.slabAutomove = integer('-o slab_automove', value, 0, 1) === 1;
      else if (name === 'slab_reassign' && part === name) options.slabAutomove ??= true;
      else if (name === 'read_buf_mem_limit')
        options.bufferMemoryLimitMb = integer('-o read_buf_mem_limit', value, 0, 1 << 20);
      else
        throw bad(
          '-o',
          part,
          'a supported extended option (idle_timeout=<seconds>, slab_automove=0|1, slab_reassign, read_buf_mem_limit=<mb>)',
        );
    }
  }
  const pidFile = v.pidfile;
  if (pidFile === '') throw bad('-P', '', 'a path for the pid file');
  const verbose = v.verbose as boolean[] | undefined;
  options.verbosity = Math.min(verbose?.length ?? 0, 2);
  return {
    kind: 'serve',
    options,
    warnings,
    process: {
      daemon: v.daemon === true,
      pidFile: typeof pidFile === 'string' ? pidFile : undefined,
      user: typeof v.user === 'string' ? v.user : undefined,
    },
  };
}
