/**
 * `value` when it is there; otherwise the test fails here, naming what was missing (instead of a
 * `!` that lets `undefined` run on into a less clear failure further down).
 */
export function defined<T>(value: T | null | undefined, what = 'a value'): T {
  if (value === undefined || value === null) throw new Error(`expected ${what}, got ${value}`);
  return value;
}
