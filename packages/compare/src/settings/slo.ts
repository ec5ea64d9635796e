// A scenario's service-level objective (`slo`): the latency percentiles and the error rate a
// server must keep at a rate for that rate to count as within its capacity (see
// measure/capacity.ts). Written as text — `p99<=50ms,errors<=1%` (a flag, an input) — or as an
// object — `{ "p99": "50 ms", "errors": "1%" }` (a config, compare()); held as the canonical text,
// which is what the report echoes and the command that repeats a run passes.

/** The targets an SLO can set: latency percentiles in ms, the error rate in percent. */
export interface SloTargets {
  p50?: number;
  p90?: number;
  p99?: number;
  /** Failed requests (errors and non-2xx) over all requests, percent. */
  errors: number;
}

export type SloLatency = 'p50' | 'p90' | 'p99';
export const SLO_LATENCIES: readonly SloLatency[] = ['p50', 'p90', 'p99'];

// The shape of the capacity search (measure/capacity.ts), here so the words that describe it
// (render) and the search itself read the same numbers.
/** Steps per side and round at most (a missed rate is tried twice). */
export const CAPACITY_STEPS = 12;
/** The search ends once the lowest rate missed is within this ratio of the highest met (5 %). */
export const CAPACITY_PRECISION = 1.05;
/**
 * The first step's rate, as a share of the round's throughput (the higher side's; a side below that
 * rate, its own). Capacity at an SLO came out above the closed model's throughput at the default
 * connections in every search seen (1.04–1.30×, 122 searches at the defaults; 1.4× in a test with
 * few connections): from half of it, the first four steps were met far below the knee; from three
 * quarters, two.
 */
export const CAPACITY_START = 0.75;
/** A step's measured seconds: long enough for the requests a step aims for, within these bounds. */
export const STEP_SECONDS = { min: 1, max: 3 } as const;

/** The error rate an SLO allows when it does not say (percent): a rate served by failing fast is no capacity. */
export const DEFAULT_SLO_ERRORS = 1;
/** The longest latency target (ms): an hour. */
const MAX_LATENCY_MS = 3_600_000;

/**
 * The longest SLO text read (the canonical form of all four targets is about 60 characters):
 * longer text is no SLO, refused before any pattern sees it (a results file is hostile data).
 */
export const MAX_SLO_TEXT = 200;

// Every pattern here is matched against trimmed text and is linear: no two neighbouring
// quantifiers can take the same characters (a trailing `\s*` after an optional unit, once
// quadratic on a long run of spaces, is gone with the trim).
const LATENCY = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s)?$/;
const PERCENT = /^(\d+(?:\.\d+)?|\.\d+)\s*%?$/;
/** An entry's name and operator; the value is the rest, trimmed. */
const ENTRY_HEAD = /^([A-Za-z0-9]+)\s*(<=|≤|=|:|<)/;

/** A latency target in ms from `50`, `50ms`, `50 ms` or `0.05s`; undefined when it is none. */
function latencyMs(value: unknown): number | undefined {
  if (typeof value === 'number') return value > 0 && value <= MAX_LATENCY_MS ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = LATENCY.exec(value.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * (match[2] === 's' ? 1000 : 1);
  return ms > 0 && ms <= MAX_LATENCY_MS ? ms : undefined;
}

/** An error rate in percent from `1`, `1%` or `0.5 %`; undefined when it is none. */
function errorPercent(value: unknown): number | undefined {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && PERCENT.test(value.trim())
        ? Number.parseFloat(value)
        : Number.NaN;
  return Number.isFinite(n) && n >= 0 && n <= 100 ? n : undefined;
}

/**
 * The entries of a written SLO, each trimmed: separated by `,`, `;` or the word `and` between
 * spaces. Words are found by one split on whitespace (linear), not by a pattern around `and`.
 */
function sloParts(text: string): string[] {
  const parts: string[] = [];
  for (const piece of text.split(/[,;]/)) {
    let words: string[] = [];
    for (const word of piece.trim().split(/\s+/)) {
      if (word.toLowerCase() === 'and') {
        parts.push(words.join(' '));
        words = [];
      } else if (word !== '') words.push(word);
    }
    parts.push(words.join(' '));
  }
  return parts.filter((p) => p !== '');
}

/** The entries of a written SLO as [name, value] pairs; undefined when the shape is wrong. */
function entriesOf(value: unknown): [string, unknown][] | undefined {
  if (typeof value === 'string') {
    if (value.length > MAX_SLO_TEXT) return undefined;
    const entries: [string, unknown][] = [];
    for (const part of sloParts(value)) {
      const match = ENTRY_HEAD.exec(part);
      const rest = match ? part.slice(match[0].length).trim() : '';
      if (!match || rest === '') return undefined;
      entries.push([(match[1] as string).toLowerCase(), rest]);
    }
    return entries;
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) return Object.entries(value);
  return undefined;
}

/**
 * The targets of a written SLO; undefined when it is not one (an unknown name, a value out of
 * range, a name twice, no latency and no error target).
 */
export function parseSlo(value: unknown): SloTargets | undefined {
  const entries = entriesOf(value);
  if (!entries || entries.length === 0) return undefined;
  const seen = new Set<string>();
  const targets: Partial<SloTargets> = {};
  for (const [name, raw] of entries) {
    if (seen.has(name)) return undefined;
    seen.add(name);
    if (name === 'errors') {
      const percent = errorPercent(raw);
      if (percent === undefined) return undefined;
      targets.errors = percent;
    } else if ((SLO_LATENCIES as readonly string[]).includes(name)) {
      const ms = latencyMs(raw);
      if (ms === undefined) return undefined;
      targets[name as SloLatency] = ms;
    } else return undefined;
  }
  return { ...targets, errors: targets.errors ?? DEFAULT_SLO_ERRORS };
}

/** The canonical text of an SLO's targets: `p99<=50ms,errors<=1%`. */
export function formatSlo(targets: SloTargets): string {
  const latencies = SLO_LATENCIES.flatMap((p) => (targets[p] === undefined ? [] : [`${p}<=${targets[p]}ms`]));
  return [...latencies, `errors<=${targets.errors}%`].join(',');
}

/** The canonical text of a written SLO; undefined when it is not one. */
export function canonicalSlo(value: unknown): string | undefined {
  const targets = parseSlo(value);
  return targets && formatSlo(targets);
}

/** An SLO for people: `p99 ≤ 50 ms, errors ≤ 1 %`. */
export function describeSlo(targets: SloTargets): string {
  const latencies = SLO_LATENCIES.flatMap((p) =>
    targets[p] === undefined ? [] : [`${p} ≤ ${targets[p]} ms`],
  );
  return [...latencies, `errors ≤ ${targets.errors} %`].join(', ');
}

/** The targets of a held (canonical) SLO text; throws on text that is not one (a bug upstream). */
export function sloTargets(slo: string): SloTargets {
  const targets = parseSlo(slo);
  if (!targets) throw new Error(`not an SLO: ${JSON.stringify(slo)}`);
  return targets;
}
