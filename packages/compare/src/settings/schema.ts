import { z } from 'zod';
import { HotpathCompareError } from '../errors.js';
import { budgetHolding, pairSeconds } from './budget.js';
import { coerce, HEADER_NAME, SCENARIO_NAME, type Source, show } from './coerce.js';
import { checkGrpc } from './grpc.js';
import type { MetricName } from './metrics.js';
import { SCENARIO_KEYS, SCENARIO_SPECS, SETTINGS, type SettingSpec } from './table.js';

export type {
  CompareConfig,
  LoadConfig,
  MeasuredScenario,
  Profiler,
  RequestSpec,
  Scenario,
  ScenarioConfig,
  Settings,
} from './types.js';
export type { MetricName, Source };

import type { RequestSpec, Scenario, Settings } from './types.js';

const specs = SETTINGS as readonly SettingSpec[];

/** The zod schema of one request in a scenario's `requests`. */
const requestSchema = z.strictObject({
  method: z
    .string()
    .regex(/^[A-Za-z]+$/, 'expected an HTTP method such as GET')
    .transform((m) => m.toUpperCase())
    .optional(),
  path: z
    .string()
    .regex(/^\/\S*$/, 'expected a path starting with "/" without spaces')
    .optional(),
  headers: z.record(z.string().regex(HEADER_NAME, 'expected a header name'), z.string()).optional(),
  body: z.string().optional(),
});

/** zod schema of one setting, derived from its table entry (coerce does the work). */
function settingSchema(spec: SettingSpec, prefix: string) {
  return z.unknown().transform((value, ctx) => {
    try {
      return coerce(spec, value, 'config', `${prefix}${spec.key}`);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });
}

function scenarioSchema(index: number) {
  const shape: Record<string, z.ZodType> = {
    name: z
      .string()
      .regex(SCENARIO_NAME, 'expected a name of 1 to 80 letters, digits, spaces or . : / @ ( ) + -'),
    requests: z.array(requestSchema).min(1, 'expected at least one request').optional(),
  };
  for (const spec of SCENARIO_SPECS) shape[spec.key] = settingSchema(spec, `scenarios[${index}].`).optional();
  return z.strictObject(shape);
}

/** The most characters of one key an error names, and the most keys it lists. */
const SHOWN_KEY_CHARS = 80;
const SHOWN_KEYS = 10;

/**
 * Keys for an error message, each `"prefix.key"`, a key cut after SHOWN_KEY_CHARS characters
 * and at most SHOWN_KEYS of them: a results file may hold a key of megabytes, or millions.
 */
function shownKeys(keys: readonly string[], prefix: string): string {
  const shown = keys.slice(0, SHOWN_KEYS).map((k) => {
    const cut = k.length > SHOWN_KEY_CHARS ? `${k.slice(0, SHOWN_KEY_CHARS)}… (${k.length} characters)` : k;
    return `"${prefix}${cut}"`;
  });
  return `${shown.join(', ')}${keys.length > SHOWN_KEYS ? ` and ${keys.length - SHOWN_KEYS} more` : ''}`;
}

/** The zod schema of the config-file object (and of compare()'s options, minus runtime ones). */
export const configSchema = z.strictObject({
  $schema: z.string().optional(),
  ...Object.fromEntries(specs.map((s) => [s.key, settingSchema(s, '').optional()])),
  scenarios: z
    .array(z.unknown())
    .min(1, 'expected at least one scenario')
    .optional()
    .transform((list, ctx) => {
      if (!list) return undefined;
      const out: unknown[] = [];
      list.forEach((item, i) => {
        const parsed = scenarioSchema(i).safeParse(item);
        if (parsed.success) out.push(parsed.data);
        else
          for (const issue of parsed.error.issues) {
            const at = [`scenarios[${i}]`, ...issue.path.map(String)]
              .join('.')
              .replace(/\.(\d+)(?=\.|$)/g, '[$1]');
            const message =
              issue.code === 'unrecognized_keys'
                ? `unknown setting ${shownKeys(issue.keys, `${at}.`)} (expected name, requests or a scenario setting)`
                : issue.message.startsWith('invalid "')
                  ? issue.message
                  : `invalid "${at}": ${issue.message}`;
            ctx.addIssue({ code: 'custom', message, path: [i, ...issue.path] as PropertyKey[] });
          }
      });
      return out as (Record<string, unknown> & { name: string })[];
    }),
});

function configError(issue: z.core.$ZodIssue, where: string): HotpathCompareError {
  const path = issue.path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
  const message = /^(invalid "|unknown setting)/.test(issue.message)
    ? issue.message
    : issue.code === 'unrecognized_keys'
      ? `unknown setting${issue.keys.length > 1 ? 's' : ''} ${shownKeys(issue.keys, path ? `${path}.` : '')} (expected one of the documented settings)`
      : `invalid "${path}": ${issue.message}`;
  return new HotpathCompareError('HP_COMPARE_INVALID_SETTING', `${message} in ${where}`);
}

/** Raw values from one front door: strings (flags, inputs) keyed by setting key. */
export type RawValues = Partial<Record<string, unknown>>;

export interface SettingsSources {
  /** The config object (file or API). */
  config?: unknown;
  /** How to name the config in errors (its path, or "compare() options"). */
  configName?: string;
  /** Values from CLI flags or Action inputs, keyed by setting key; they override the config. */
  overrides?: RawValues;
  overridesSource?: 'flag' | 'input';
}

/**
 * Validates every source into Settings: overrides (flags or inputs) win over the config, which
 * wins over the table's defaults. The top-level load settings describe one unnamed scenario when
 * the config lists none, and are every scenario's defaults otherwise.
 */
export function resolveSettings(sources: SettingsSources): Settings {
  const where = sources.configName ?? 'the config';
  let config: Record<string, unknown> = {};
  if (sources.config !== undefined) {
    if (typeof sources.config !== 'object' || sources.config === null || Array.isArray(sources.config)) {
      throw new HotpathCompareError(
        'HP_COMPARE_INVALID_SETTING',
        `invalid ${where}: expected an object of settings, got ${show(sources.config)}`,
      );
    }
    const parsed = configSchema.safeParse(sources.config);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw issue
        ? configError(issue, where)
        : new HotpathCompareError('HP_COMPARE_INVALID_SETTING', `invalid ${where}: ${parsed.error.message}`);
    }
    config = parsed.data as Record<string, unknown>;
  }
  const values: Record<string, unknown> = {};
  /** Keys a flag, an input or the config gave a value (an empty input is none). */
  const given = new Set<string>();
  for (const spec of specs) {
    const override =
      sources.overrides && spec.key in sources.overrides
        ? coerce(spec, sources.overrides[spec.key], sources.overridesSource ?? 'flag')
        : undefined;
    if (override !== undefined || config[spec.key] !== undefined) given.add(spec.key);
    values[spec.key] = override ?? config[spec.key] ?? spec.default;
  }
  const top: Scenario = {
    name: 'default',
    url: values.url as string,
    method: values.method as string,
    headers: (values.headers as Record<string, string> | undefined) ?? {},
    body: values.body as string | undefined,
    connections: values.connections as number,
    pipelining: values.pipelining as number,
    http2: values.http2 as boolean,
    grpc: values.grpc as boolean,
    ...(values.proto !== undefined ? { proto: values.proto as string } : {}),
    ...(values.message !== undefined ? { message: values.message as string } : {}),
    rate: values.rate as Scenario['rate'],
    slo: values.slo as string | undefined,
  };
  const listed = config.scenarios as (Record<string, unknown> & { name: string })[] | undefined;
  let scenarios: Scenario[];
  if (!listed) {
    // a gRPC call is a POST on the wire; its name says what it is
    scenarios = [{ ...top, name: `${top.grpc ? 'gRPC' : top.method} ${top.url}` }];
  } else {
    const seen = new Set<string>();
    scenarios = listed.map((s) => {
      if (seen.has(s.name))
        throw new HotpathCompareError(
          'HP_COMPARE_INVALID_SETTING',
          `invalid "scenarios": the name ${JSON.stringify(s.name)} is used twice in ${where}; expected unique names`,
        );
      seen.add(s.name);
      const scenario: Scenario = { ...top, name: s.name };
      for (const key of SCENARIO_KEYS)
        if (s[key] !== undefined) (scenario as unknown as Record<string, unknown>)[key] = s[key];
      if (s.requests) scenario.requests = s.requests as RequestSpec[];
      return scenario;
    });
  }
  for (const scenario of scenarios) checkGrpc(scenario, sources.configName ?? 'the settings');
  // A scenario with an SLO asks about capacity, which waits for its answer (verdict/policy.ts), and
  // its searches add some 40 s a pair: the default 180 s held 3 pairs, where capacity at −20 %
  // read inconclusive in 5 runs of 10. Unless the budget was set, it holds six pairs, as the one
  // `hotpath init` writes for such a config does.
  const withSlo = scenarios.filter((s) => s.slo !== undefined).length;
  if (!given.has('maxTime') && withSlo > 0) {
    const pair = pairSeconds(scenarios.length, withSlo, values.warmup as number, values.duration as number);
    values.maxTime = Math.max(values.maxTime as number, budgetHolding(pair));
  }
  const settings = { ...values, scenarios } as unknown as Settings & Record<string, unknown>;
  for (const key of SCENARIO_KEYS) delete settings[key];
  return settings;
}

const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Settings that hotpath itself recorded (a Shard's, a results file's) read back like a config —
 * except a scenario's name, which may be the one hotpath made for an unnamed scenario
 * (`GET /auth?user=ana`, up to any URL's length) and which the rule for names users write would
 * refuse. Such a name must still be text of 1 to 2000 characters without control characters.
 */
export function resolveRecordedSettings(sources: SettingsSources): Settings {
  const raw = sources.config as { scenarios?: unknown } | undefined;
  const listed = raw && typeof raw === 'object' && Array.isArray(raw.scenarios) ? raw.scenarios : undefined;
  if (!listed) return resolveSettings(sources);
  const names = listed.map((s: unknown) =>
    s && typeof s === 'object' ? (s as { name?: unknown }).name : undefined,
  );
  const where = sources.configName ?? 'the config';
  names.forEach((name, i) => {
    if (typeof name !== 'string' || name.length === 0 || name.length > 2000 || CONTROL.test(name))
      throw new HotpathCompareError(
        'HP_COMPARE_INVALID_SETTING',
        `invalid "scenarios[${i}].name" in ${where}: expected text of 1 to 2000 characters without control characters, got ${show(name)}`,
      );
  });
  const placeholders = listed.map((s: unknown, i: number) => ({
    ...(s as object),
    name: `scenario ${i + 1}`,
  }));
  const settings = resolveSettings({ ...sources, config: { ...(raw as object), scenarios: placeholders } });
  if (new Set(names).size !== names.length)
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `invalid "scenarios" in ${where}: a name is used twice`,
    );
  return { ...settings, scenarios: settings.scenarios.map((s, i) => ({ ...s, name: String(names[i]) })) };
}
