// The settings a report decides (`hotpath report`, the Action's report mode): a module of its
// own, without the settings' schema, so that the CLI's usage text reads them without loading it.

/**
 * The settings a report decides, whoever measured: the verdict's rules and where files go.
 * Everything else (scenarios, rounds, windows, commands) describes the measurement and comes
 * from the shards; a reporter cannot change it after the fact.
 */
export const REPORTER_KEYS = [
  'threshold',
  'hotThreshold',
  'retainedThreshold',
  'metrics',
  'failOn',
  'failOnRegression',
  'failOnInconclusive',
  'out',
] as const;

export type ReporterKey = (typeof REPORTER_KEYS)[number];

export const isReporterKey = (key: string): key is ReporterKey =>
  (REPORTER_KEYS as readonly string[]).includes(key);
