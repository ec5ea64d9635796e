// The settings' TypeScript types, derived from the one table (settings/table.ts): a setting added
// there is in Settings (resolved, in the table's units) and in CompareConfig (as a config file or
// compare() may write it) with no second declaration.
import type { SETTINGS } from './table.js';

type Spec = (typeof SETTINGS)[number];

/** A rate as a share of base's measured capacity, in percent: "70%". */
export type RateShare = `${number}%`;

/** A resolved value by kind (durations in seconds, percentages in percent). */
interface ResolvedKind {
  command: string;
  text: string;
  ref: string;
  path: string;
  url: string;
  method: string;
  integer: number;
  'integer-or-auto': number | 'auto';
  number: number;
  /** Requests per second, or a share of base's measured capacity ("70%"). */
  rate: number | RateShare;
  /** A service-level objective, as its canonical text (settings/slo.ts): "p99<=50ms,errors<=1%". */
  slo: string;
  /** A JSON value, as its canonical text (JSON.stringify of what was written). */
  json: string;
  duration: number;
  percent: number;
  boolean: boolean;
  headers: Record<string, string>;
  list: string[];
}

/** What a config file may write by kind (a duration also as text: "500ms", "2m"). */
interface WrittenKind extends Omit<ResolvedKind, 'duration' | 'text' | 'slo' | 'json'> {
  /** JSON text, or the value itself in a config (an object, for a gRPC message). */
  json: string | Record<string, unknown>;
  duration: number | string;
  /** Text, or an object of targets: { p99: "50 ms", errors: "1%" }. */
  slo:
    | string
    | { p50?: number | string; p90?: number | string; p99?: number | string; errors?: number | string };
  text: string;
}

type ValueOf<S, Kinds> = S extends { kind: 'enum'; values: readonly (infer V)[] }
  ? V
  : S extends { kind: 'choices'; values: readonly (infer V)[] }
    ? V[]
    : S extends { kind: infer K extends keyof Kinds }
      ? Kinds[K]
      : never;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Resolved values: a setting with a default always has a value; one without may be unset. */
type Resolved<S extends Spec> = Simplify<
  { [P in S as P extends { default: unknown } ? P['key'] : never]: ValueOf<P, ResolvedKind> } & {
    [P in S as P extends { default: unknown } ? never : P['key']]?: ValueOf<P, ResolvedKind>;
  }
>;

/** Written values: every one optional. */
type Written<S extends Spec> = { [P in S as P['key']]?: ValueOf<P, WrittenKind> };

type TopSpec = Exclude<Spec, { scenario: true }>;
type LoadSpec = Extract<Spec, { scenario: true }>;

/** One request of a scenario's `requests` list (sent in turn on each connection). */
export interface RequestSpec {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * One load scenario: a route (or a list of requests) with its own load shape. Its headers are
 * always resolved (no headers: an empty set).
 */
export type Scenario = Simplify<
  { name: string; requests?: RequestSpec[]; headers: Record<string, string> } & Omit<
    Resolved<LoadSpec>,
    'headers'
  >
>;

/**
 * A scenario as the rounds run it: its connections and its rate decided (a share of base's
 * capacity made a number; see measure/load-level.ts).
 */
export type MeasuredScenario = Simplify<
  Omit<Scenario, 'connections' | 'rate'> & { connections: number; rate?: number }
>;

/** Validated settings of one comparison, in the table's units (seconds, percent, points). */
export type Settings = Simplify<Resolved<TopSpec> & { scenarios: Scenario[] }>;

/** The load of one scenario: at the top level of a config (the unnamed scenario) or in `scenarios`. */
export type LoadConfig = Written<LoadSpec>;

/** A scenario as written in a config file or passed to compare(). */
export type ScenarioConfig = Simplify<LoadConfig & { name: string; requests?: RequestSpec[] }>;

/** The config-file object, which is also what compare() takes (plus its runtime options). */
export type CompareConfig = Simplify<
  Written<TopSpec> & LoadConfig & { $schema?: string; scenarios?: ScenarioConfig[] }
>;

/** The profiler setting's values. */
export type Profiler = Settings['profiler'];
