// The bounds of the probe's record of downstream calls, apart from their schema
// (downstream-model.ts): the probe, loaded into every server it measures, needs these numbers,
// not the schema library.

/** The bounds of one window's record (the probe keeps to them; the rest is counted as OTHER). */
export const DOWNSTREAM_LIMITS = {
  endpoints: 200,
  functions: 2000,
  stacks: 5000,
  /** Characters of an endpoint (host:port or socket path), a function's name or file. */
  text: 1024,
  /** User frames of one stack. */
  frames: 64,
} as const;

/** The name of the endpoint, function or stack that stands for everything past a bound. */
export const OTHER = '(other)';
