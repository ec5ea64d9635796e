/**
 * The one table of hotpath's settings. Each setting is declared here once — its name in the API
 * and config file, type, default, unit, description, CLI flag and short alias, Action input —
 * and everything else is derived from it: the zod schema (settings/schema.ts), the CLI parser and
 * its --help (cli/args.ts), the JSON Schema of hotpath.config.json (settings/json-schema.ts) and
 * the Action's inputs (packages/action reads `input` names from here; a test compares action.yml).
 *
 * Units are the same at every front door: durations in seconds (text may say `500ms`, `2m`),
 * thresholds in percent / percentage points — as inputs, flags, config values, in the report's
 * `settings` and in the Action's outputs.
 */

import { VERDICT_SETTINGS } from './table-verdict.js';

export type { SettingKind, SettingSpec } from './setting-spec.js';

import type { SettingSpec } from './setting-spec.js';

export const SETTINGS = [
  // sides
  {
    key: 'start',
    kind: 'command',
    group: 'sides',
    arg: 'CMD',
    description: 'Command that starts your server, on both sides. It must listen on the port given in $PORT.',
  },
  {
    key: 'baseStart',
    kind: 'command',
    group: 'sides',
    comparisonOnly: true,
    arg: 'CMD',
    input: false,
    description: "Base's start command, run in the working tree (no git checkout); goes with headStart.",
  },
  {
    key: 'headStart',
    kind: 'command',
    group: 'sides',
    comparisonOnly: true,
    arg: 'CMD',
    input: false,
    description: "Head's start command, run in the working tree (no git checkout); goes with baseStart.",
  },
  {
    key: 'base',
    kind: 'ref',
    group: 'sides',
    comparisonOnly: true,
    arg: 'REF',
    input: false,
    description: 'Base git ref, checked out with git worktree (default: merge-base with the default branch).',
  },
  {
    key: 'head',
    kind: 'ref',
    group: 'sides',
    comparisonOnly: true,
    arg: 'REF',
    input: false,
    description: 'Head git ref, checked out with git worktree (default: the working tree as it is).',
  },
  {
    key: 'cwd',
    kind: 'path',
    group: 'sides',
    arg: 'DIR',
    default: '.',
    input: 'working-directory',
    description: 'Directory of the app inside the repository.',
  },
  {
    key: 'install',
    kind: 'command',
    group: 'sides',
    comparisonOnly: true,
    arg: 'CMD',
    default: '',
    description: 'Install command run in each checkout ("" = detected from the lockfile, "none" = skip).',
  },
  {
    key: 'build',
    kind: 'command',
    group: 'sides',
    comparisonOnly: true,
    arg: 'CMD',
    default: '',
    description: 'Build command run in each checkout after install.',
  },
  {
    key: 'setupCommand',
    kind: 'command',
    group: 'sides',
    arg: 'CMD',
    default: '',
    description:
      'Command run after the server is ready and before load (HOTPATH_URL is set), e.g. to seed data.',
  },
  {
    key: 'passEnv',
    kind: 'list',
    group: 'sides',
    arg: 'NAMES',
    input: 'env',
    description:
      'More environment variables passed to install, build, setup and the server (names, comma or newline separated). The Action passes only an allowlist (PATH, HOME, locale, TMPDIR, CI, NODE_OPTIONS, npm/pnpm/yarn settings) plus these; tokens never.',
  },
  {
    key: 'readyTimeout',
    kind: 'duration',
    group: 'sides',
    arg: 'TIME',
    unit: 's',
    default: 30,
    min: 0,
    minExclusive: true,
    max: 600,
    description: 'How long to wait for the server to accept connections on $PORT.',
  },
  // load
  {
    key: 'url',
    kind: 'url',
    group: 'load',
    arg: 'PATH|URL',
    default: '/',
    scenario: true,
    description: 'Path resolved against http://127.0.0.1:$PORT, or a full URL ($PORT is replaced).',
  },
  {
    key: 'method',
    kind: 'method',
    group: 'load',
    arg: 'METHOD',
    short: 'm',
    default: 'GET',
    scenario: true,
    description: 'HTTP method.',
  },
  {
    key: 'headers',
    kind: 'headers',
    group: 'load',
    arg: '"NAME: VALUE"',
    flag: 'header',
    short: 'H',
    input: 'headers',
    scenario: true,
    description: 'Request headers ("Name: value"; the flag repeats, the input takes one per line).',
  },
  {
    key: 'body',
    kind: 'text',
    group: 'load',
    arg: 'TEXT',
    short: 'b',
    scenario: true,
    description: 'Request body.',
  },
  {
    key: 'connections',
    kind: 'integer-or-auto',
    group: 'load',
    arg: 'N|auto',
    short: 'c',
    default: 50,
    min: 1,
    max: 10_000,
    scenario: true,
    description:
      "Concurrent connections, or auto: before the rounds, base's server and head's are each loaded at 1, 2, 4, … connections; each side's plateau is the smallest count within 10 % of its best throughput, and the larger of the two is held for both sides (50 with a fixed rate).",
  },
  {
    key: 'placement',
    kind: 'enum',
    group: 'load',
    arg: 'auto|off',
    default: 'auto',
    values: ['auto', 'off'],
    description:
      'auto: servers on every CPU but the last, load generator on the last (Linux, taskset); on a single server CPU, a side whose threads and processes beyond its event loop do 30 % of its CPU widens the servers to every CPU; off: the scheduler places them.',
  },
  {
    key: 'pipelining',
    kind: 'integer',
    group: 'load',
    arg: 'N',
    short: 'p',
    default: 1,
    min: 1,
    max: 1000,
    scenario: true,
    description: 'HTTP requests in flight per connection.',
  },
  {
    key: 'http2',
    kind: 'boolean',
    group: 'load',
    default: false,
    scenario: true,
    description:
      'Speak HTTP/2 to the server (gRPC servers, node:http2, fastify with http2): prior knowledge over http:// (h2c), ALPN h2 over https://, whose certificate may be self-signed; one stream per pipelined request.',
  },
  {
    key: 'grpc',
    kind: 'boolean',
    group: 'load',
    default: false,
    scenario: true,
    description:
      'gRPC unary calls over HTTP/2 (implies http2): url is the method, /package.Service/Method; body is the request message, its encoded (protobuf) bytes in base64 (none: an empty message); a non-zero grpc-status counts as an error.',
  },
  {
    key: 'proto',
    kind: 'path',
    group: 'load',
    arg: 'FILE',
    scenario: true,
    description:
      'gRPC: the .proto file (relative to cwd) that defines the method url names; with message, the request is encoded from it.',
  },
  {
    key: 'message',
    kind: 'json',
    group: 'load',
    arg: 'JSON',
    scenario: true,
    description:
      'gRPC: the request message as JSON (field names as in the .proto or lowerCamelCase; 64-bit integers as numbers or text, bytes as base64, enums by name), encoded with proto into the body sent to both sides.',
  },
  {
    key: 'rate',
    kind: 'rate',
    group: 'load',
    arg: 'N|N%',
    short: 'R',
    unit: 'req/s',
    min: 0,
    minExclusive: true,
    scenario: true,
    description:
      "Fixed request rate over all connections (open model), in req/s or as a share of base's capacity (70%: measured on base's server before the rounds, then held for both sides); unset for a closed model. A scenario with a rate is judged by its latency tail (p90, p99) instead of requests/s.",
  },
  {
    key: 'slo',
    kind: 'slo',
    group: 'load',
    arg: 'p99<=MS[,errors<=N%]',
    scenario: true,
    description:
      'Service-level objective for capacity at an SLO: latency percentiles (p50, p90, p99 in ms) and an error rate (errors, in percent; 1 % when unset). In every round, after the measured window, each side\'s highest arrival rate that meets it is searched (short open-model steps, a ramp then bisection to 5 %), and capacity (req/s) is a verdict metric of the scenario. Text (p99<=50ms,errors<=1%) or, in a config, an object ({"p99": "50 ms"}).',
  },
  {
    key: 'duration',
    kind: 'duration',
    group: 'load',
    arg: 'TIME',
    short: 'd',
    unit: 's',
    default: 5,
    min: 0,
    minExclusive: true,
    max: 3600,
    description: 'Measured load per round and scenario.',
  },
  {
    key: 'warmup',
    kind: 'duration',
    group: 'load',
    arg: 'TIME',
    short: 'W',
    unit: 's',
    default: 2,
    min: 0,
    max: 3600,
    description: 'Warm-up load per round and scenario before measuring.',
  },
  {
    key: 'slice',
    kind: 'duration',
    group: 'load',
    arg: 'TIME',
    unit: 's',
    default: 0.5,
    min: 0,
    max: 3600,
    description:
      "Slices of a comparison round's measured window: base's and head's servers run side by side and the load alternates between them every slice (B H, H B, …), so a change in the machine's speed meets both alike; 0: one server at a time, each side's window whole and in turn.",
  },
  {
    key: 'rounds',
    kind: 'integer-or-auto',
    group: 'load',
    arg: 'N|auto',
    short: 'r',
    default: 'auto',
    min: 1,
    max: 1000,
    description:
      'Interleaved rounds per side (B H B H ...): auto runs pairs until the answer is clear (or max-time / max-rounds is reached), a number runs that many. Each round starts the server once for all scenarios, and each base round pairs with the head round after it.',
  },
  {
    key: 'maxTime',
    kind: 'duration',
    group: 'load',
    comparisonOnly: true,
    arg: 'TIME',
    unit: 's',
    default: 180,
    min: 1,
    max: 86400,
    description:
      'With rounds auto: the time budget of the rounds (per shard); no new pair starts past it. Unset while a scenario has an slo, it is one that holds six pairs (420 s for one such scenario at the defaults).',
  },
  {
    key: 'maxRounds',
    kind: 'integer',
    group: 'load',
    comparisonOnly: true,
    arg: 'N',
    default: 30,
    min: 2,
    max: 1000,
    description: 'With rounds auto: the most rounds per side.',
  },
  ...VERDICT_SETTINGS,
] as const satisfies readonly SettingSpec[];

export type SettingKey = (typeof SETTINGS)[number]['key'];

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The long CLI flag of a setting, or undefined when it has none. */
export function flagOf(spec: SettingSpec): string | undefined {
  if (spec.flag === false) return undefined;
  return spec.flag ?? kebab(spec.key);
}

/** The Action input of a setting, or undefined when it has none. */
export function inputOf(spec: SettingSpec): string | undefined {
  if (spec.input === false) return undefined;
  return spec.input ?? flagOf(spec) ?? kebab(spec.key);
}

/** Settings that a scenario may set for itself. */
export const SCENARIO_SPECS = (SETTINGS as readonly SettingSpec[]).filter((s) => s.scenario);
export const SCENARIO_KEYS = SCENARIO_SPECS.map((s) => s.key);

/** A setting's default from the table (undefined when it has none or the key is unknown). */
export function settingDefault(key: string): SettingSpec['default'] {
  return (SETTINGS as readonly SettingSpec[]).find((s) => s.key === key)?.default;
}
