import { HotpathCompareError } from '../errors.js';
import { printable } from '../printable.js';
import { MAX_TIMER_SECONDS, parseDuration } from './duration.js';
import { canonicalSlo } from './slo.js';
import { flagOf, inputOf, type SettingSpec } from './table.js';

/** Where a value came from, to name it the way the user wrote it. */
export type Source = 'flag' | 'input' | 'config';

/** The largest share of base's capacity a rate can ask for, in percent (overload tests: 2×, 5×). */
export const MAX_RATE_SHARE = 1000;

export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
export const SCENARIO_NAME = /^[\w .:/@()+-]{1,80}$/;

function nameOf(spec: SettingSpec, source: Source, path: string): string {
  if (source === 'flag') return `--${flagOf(spec)}`;
  if (source === 'input') return `input "${inputOf(spec)}"`;
  return `"${printable(path)}"`;
}

function expected(spec: SettingSpec): string {
  const range = (what: string) => {
    const lo = spec.min === undefined ? '' : `${spec.minExclusive ? '>' : '>='} ${spec.min}`;
    const hi = spec.max === undefined ? '' : `<= ${spec.max}`;
    return [what, [lo, hi].filter(Boolean).join(' and ')].filter(Boolean).join(' ');
  };
  switch (spec.kind) {
    case 'integer':
      return range('a whole number');
    case 'integer-or-auto':
      return range('auto or a whole number');
    case 'number':
      return range(`a number${spec.unit ? ` (${spec.unit})` : ''}`);
    case 'rate':
      return `requests per second (a number > 0) or a share of base's measured capacity such as "70%" (> 0 and <= ${MAX_RATE_SHARE} %)`;
    case 'json':
      return 'a JSON object (in a config, the object itself; on the command line or as an input, its JSON text)';
    case 'slo':
      return 'an SLO such as p99<=50ms,errors<=1% (p50, p90, p99 in ms or s; errors in percent) or an object such as {"p99": "50 ms"}';
    case 'duration':
      return range('a duration such as 10, 10s, 500ms or 2m (seconds)');
    case 'percent':
      return range(spec.unit === 'points' ? 'percentage points, e.g. 5' : 'a percentage, e.g. 10');
    case 'boolean':
      return 'true or false';
    case 'enum':
      return (spec.values ?? []).join(', ');
    case 'url':
      return 'a path starting with "/" or a full http://, https:// or memcache:// URL';
    case 'method':
      return 'an HTTP method such as GET';
    case 'headers':
      return '"Name: value" (or name=value) lines or an object of header names to values';
    case 'command':
      return 'a command line';
    case 'list':
      return 'environment variable names, comma or newline separated';
    case 'choices':
      return `a comma-separated list of ${(spec.values ?? []).join(', ')}`;
    default:
      return 'text';
  }
}

/** The most of a value an error message echoes (a results file may hold megabytes of it). */
export const SHOWN_VALUE_CHARS = 120;

/**
 * A value for an error message: as JSON, with what JSON leaves raw (DEL, C1, U+2028) escaped
 * too, and cut after SHOWN_VALUE_CHARS characters (saying how long it was).
 */
export const show = (value: unknown) => {
  const json = String(JSON.stringify(value));
  return json.length <= SHOWN_VALUE_CHARS
    ? printable(json)
    : `${printable(json.slice(0, SHOWN_VALUE_CHARS))}… (${json.length} characters)`;
};

/**
 * The longest text read for a setting that is a number, a duration, an SLO, a choice or a
 * URL: longer text is refused before any pattern sees it (the value of a results file is
 * hostile data); commands and other free text are bounded by the results file's size.
 */
export const MAX_VALUE_TEXT = 2048;
/** Kinds whose text is free (a command line, headers, a list of names): not capped here. */
const FREE_TEXT_KINDS: ReadonlySet<string> = new Set(['command', 'headers', 'list', 'path', 'text', 'json']);

/** Matched against trimmed text: linear (no quantifiers that can take the same characters). */
const NUMERIC = /^[+-]?(\d+(?:\.\d*)?|\.\d+)\s*%?$/;

/** A number, or numeric text (`7.5`, ` 10 % `); NaN for anything else. */
const numeric = (v: unknown): number =>
  typeof v === 'number'
    ? v
    : typeof v === 'string' && NUMERIC.test(v.trim())
      ? Number.parseFloat(v)
      : Number.NaN;

/**
 * Turns one raw value (a string from a flag or input, or a typed value from a config file) into
 * the setting's typed value; returns `undefined` for "unset" (empty text). Throws
 * HP_COMPARE_INVALID_SETTING naming the setting, the value and what was expected.
 */
export function coerce(spec: SettingSpec, value: unknown, source: Source, path: string = spec.key): unknown {
  const fail = (): never => {
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `invalid ${nameOf(spec, source, path)}: expected ${expected(spec)}, got ${show(value)}`,
    );
  };
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && value.length > MAX_VALUE_TEXT && !FREE_TEXT_KINDS.has(spec.kind))
    return fail();
  if (typeof value === 'string' && value.trim() === '' && spec.kind !== 'text') return undefined;
  const inRange = (n: number) =>
    Number.isFinite(n) &&
    (spec.min === undefined || (spec.minExclusive ? n > spec.min : n >= spec.min)) &&
    (spec.max === undefined || n <= spec.max);
  switch (spec.kind) {
    case 'integer': {
      const n = numeric(value);
      return Number.isInteger(n) && inRange(n) ? n : fail();
    }
    case 'integer-or-auto': {
      if (typeof value === 'string' && value.trim().toLowerCase() === 'auto') return 'auto';
      const n = numeric(value);
      return Number.isInteger(n) && inRange(n) ? n : fail();
    }
    case 'number':
    case 'percent':
      return inRange(numeric(value)) ? numeric(value) : fail();
    case 'rate': {
      if (typeof value === 'string' && value.trim().endsWith('%')) {
        const share = numeric(value);
        return Number.isFinite(share) && share > 0 && share <= MAX_RATE_SHARE ? `${share}%` : fail();
      }
      const n = numeric(value);
      return inRange(n) ? n : fail();
    }
    case 'slo':
      return canonicalSlo(value) ?? fail();
    case 'json':
      return canonicalJsonObject(value) ?? fail();
    case 'duration': {
      const n = typeof value === 'number' || typeof value === 'string' ? parseDuration(value) : undefined;
      if (n === undefined || !inRange(n) || n > MAX_TIMER_SECONDS) return fail();
      return n;
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      const s = String(value).trim().toLowerCase();
      if (s === 'true' || s === '1' || s === 'yes') return true;
      if (s === 'false' || s === '0' || s === 'no') return false;
      return fail();
    }
    case 'enum':
      return typeof value === 'string' && spec.values?.includes(value.trim()) ? value.trim() : fail();
    case 'url': {
      if (typeof value !== 'string') return fail();
      const v = value.trim();
      return (v.startsWith('/') && !/\s/.test(v)) || /^(https?|memcache):\/\/\S+$/.test(v) ? v : fail();
    }
    case 'method':
      return typeof value === 'string' && /^[A-Za-z]+$/.test(value.trim())
        ? value.trim().toUpperCase()
        : fail();
    case 'headers':
      return parseHeaders(value) ?? fail();
    case 'choices': {
      const names = [...new Set(textList(value) ?? [''])];
      return names.length > 0 && names.every((n) => spec.values?.includes(n)) ? names : fail();
    }
    case 'list': {
      const names = textList(value) ?? [''];
      return names.every((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n)) ? names : fail();
    }
    default:
      return typeof value === 'string' ? value : fail();
  }
}

/** A JSON object (or its text) as canonical JSON text; undefined for anything else. */
function canonicalJsonObject(value: unknown): string | undefined {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
    ? JSON.stringify(parsed)
    : undefined;
}

/** Words of a comma/space separated text or an array of strings; undefined for anything else. */
export function textList(value: unknown): string[] | undefined {
  const items = typeof value === 'string' ? value.split(/[\s,]+/) : Array.isArray(value) ? value : undefined;
  if (!items?.every((v) => typeof v === 'string')) return undefined;
  return (items as string[]).map((v) => v.trim()).filter(Boolean);
}

/** Headers from "Name: value" lines (a string or list of them) or an object. */
export function parseHeaders(value: unknown): Record<string, string> | undefined {
  const headers: Record<string, string> = {};
  if (typeof value === 'string' || Array.isArray(value)) {
    const lines = Array.isArray(value) ? value : value.split(/\r?\n/);
    for (const line of lines) {
      if (typeof line !== 'string') return undefined;
      if (line.trim() === '') continue;
      // "Name: value", or autocannon's name=value: the first separator wins.
      const colon = line.indexOf(':');
      const equals = line.indexOf('=');
      const at = colon > 0 && (equals < 0 || colon < equals) ? colon : equals;
      const name = at > 0 ? line.slice(0, at).trim() : '';
      if (!HEADER_NAME.test(name)) return undefined;
      headers[name] = line.slice(at + 1).trim();
    }
    return headers;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [name, v] of Object.entries(value)) {
      if (!HEADER_NAME.test(name) || typeof v !== 'string' || /[\r\n]/.test(v)) return undefined;
      headers[name] = v;
    }
    return headers;
  }
  return undefined;
}
