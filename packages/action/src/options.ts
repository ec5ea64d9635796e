import { z } from 'zod';
import { HotpathActionError } from './errors.js';

/**
 * The one description of the settings shared by the Action's inputs and the CLI's flags.
 * Both front doors hand over raw strings keyed by the input name (`hot-threshold`), and this
 * schema turns them into typed options once, at the boundary.
 */
export const INPUT_NAMES = [
  'start',
  'url',
  'setup-command',
  'install',
  'build',
  'working-directory',
  'connections',
  'duration',
  'warmup',
  'rounds',
  'pipelining',
  'rate',
  'method',
  'headers',
  'body',
  'profiler',
  'threshold',
  'hot-threshold',
  'fail-on-regression',
  'upload-artifact',
  'ready-timeout',
] as const;

export type InputName = (typeof INPUT_NAMES)[number];
export type RawInputs = Partial<Record<InputName, string | undefined>>;

const text = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? fallback : v));

const number = (fallback: number, check: (n: number) => boolean, expected: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const n = Number(v.trim());
      if (!Number.isFinite(n) || !check(n)) {
        ctx.addIssue({ code: 'custom', message: `expected ${expected}, got ${JSON.stringify(v)}` });
        return z.NEVER;
      }
      return n;
    });

const optionalNumber = (check: (n: number) => boolean, expected: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      const n = Number(v.trim());
      if (!Number.isFinite(n) || !check(n)) {
        ctx.addIssue({ code: 'custom', message: `expected ${expected}, got ${JSON.stringify(v)}` });
        return z.NEVER;
      }
      return n;
    });

const boolean = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const s = v.trim().toLowerCase();
      if (s === 'true' || s === '1' || s === 'yes') return true;
      if (s === 'false' || s === '0' || s === 'no') return false;
      ctx.addIssue({ code: 'custom', message: `expected true or false, got ${JSON.stringify(v)}` });
      return z.NEVER;
    });

const int = (n: number) => Number.isInteger(n);

const headerLines = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const headers: Record<string, string> = {};
    if (!v) return headers;
    for (const line of v.split(/\r?\n/)) {
      if (line.trim() === '') continue;
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon).trim() : '';
      if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) {
        ctx.addIssue({
          code: 'custom',
          message: `expected "Name: value" lines, got ${JSON.stringify(line)}`,
        });
        return z.NEVER;
      }
      headers[name] = line.slice(colon + 1).trim();
    }
    return headers;
  });

export const inputSchema = z.object({
  start: z
    .string({ error: 'expected the command that starts your server, got nothing' })
    .refine((v) => v.trim() !== '', { message: 'expected the command that starts your server, got ""' }),
  url: text('/').refine(
    (v) => (v.startsWith('/') && !/\s/.test(v)) || /^(https?|memcache):\/\/\S+$/.test(v),
    {
      message: 'expected a path starting with "/" or a full http:// (or memcache://) URL',
    },
  ),
  'setup-command': text(''),
  install: text(''),
  build: text(''),
  'working-directory': text('.'),
  connections: number(
    50,
    (n) => int(n) && n >= 1 && n <= 10_000,
    'a whole number of connections from 1 to 10000',
  ),
  duration: number(10, (n) => n > 0 && n <= 3600, 'a number of seconds > 0 and <= 3600'),
  warmup: number(3, (n) => n >= 0 && n <= 3600, 'a number of seconds >= 0'),
  rounds: number(3, (n) => int(n) && n >= 1 && n <= 50, 'a whole number of rounds from 1 to 50'),
  pipelining: number(1, (n) => int(n) && n >= 1 && n <= 1000, 'a whole number from 1 to 1000'),
  rate: optionalNumber((n) => n > 0, 'a request rate > 0 (req/s) or nothing'),
  method: text('GET').refine((v) => /^[A-Za-z]+$/.test(v), {
    message: 'expected an HTTP method such as GET',
  }),
  headers: headerLines,
  body: z.string().optional(),
  profiler: text('cpuprofile').refine((v) => v === 'cpuprofile' || v === 'prof' || v === 'none', {
    message: 'expected cpuprofile, prof or none',
  }),
  threshold: number(10, (n) => n >= 0 && n <= 1000, 'a percentage >= 0, e.g. 10'),
  'hot-threshold': number(5, (n) => n >= 0 && n <= 100, 'percentage points from 0 to 100, e.g. 5'),
  'fail-on-regression': boolean(false),
  'upload-artifact': boolean(true),
  'ready-timeout': number(30, (n) => n > 0 && n <= 600, 'a number of seconds > 0 and <= 600'),
});

export type Profiler = 'cpuprofile' | 'prof' | 'none';

/** Typed, validated settings of one comparison. */
export interface Settings {
  start: string;
  url: string;
  setupCommand: string;
  install: string;
  build: string;
  workingDirectory: string;
  connections: number;
  duration: number;
  warmup: number;
  rounds: number;
  pipelining: number;
  rate?: number;
  method: string;
  headers: Record<string, string>;
  body?: string;
  profiler: Profiler;
  /** Relative change that counts as a regression, as a fraction (0.1 = 10 %). */
  threshold: number;
  /** Growth of a function's self share that flags it, as a fraction (0.05 = 5 points). */
  hotThreshold: number;
  failOnRegression: boolean;
  uploadArtifact: boolean;
  /** Seconds to wait for the server to accept connections. */
  readyTimeout: number;
}

/**
 * Validates raw inputs (Action inputs or CLI flags, all strings) into Settings.
 * Throws HP_ACTION_INVALID_INPUT naming the first bad input, its value and what was expected.
 * `label` says how the user spells a name: 'input' (Action) or 'flag' (CLI: `--name`).
 */
export function parseSettings(raw: RawInputs, label: 'input' | 'flag' = 'input'): Settings {
  const parsed = inputSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue.path[0] ?? '?');
    const shown = label === 'flag' ? `--${name}` : `input "${name}"`;
    throw new HotpathActionError('HP_ACTION_INVALID_INPUT', `invalid ${shown}: ${issue.message}`);
  }
  const v = parsed.data;
  return {
    start: v.start,
    url: v.url,
    setupCommand: v['setup-command'],
    install: v.install,
    build: v.build,
    workingDirectory: v['working-directory'],
    connections: v.connections,
    duration: v.duration,
    warmup: v.warmup,
    rounds: v.rounds,
    pipelining: v.pipelining,
    rate: v.rate,
    method: v.method.toUpperCase(),
    headers: v.headers,
    body: v.body === '' ? undefined : v.body,
    profiler: v.profiler as Profiler,
    threshold: v.threshold / 100,
    hotThreshold: v['hot-threshold'] / 100,
    failOnRegression: v['fail-on-regression'],
    uploadArtifact: v['upload-artifact'],
    readyTimeout: v['ready-timeout'],
  };
}
