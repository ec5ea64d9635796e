import { createErrorClass } from './error-class.js';

/** Every error this package raises on purpose carries one of these stable codes. */
export const GUARD_ERROR_CODES = {
  HP_GUARD_INVALID_OPTION: 'an option of createGuard or createMonitor has a value outside what it accepts',
  HP_GUARD_CLOSED: 'the guard was closed: it admits every request and cannot make new adapters',
  HP_GUARD_HEALTH_CHECK_FAILED:
    'the custom healthCheck threw, rejected or answered something other than true or false; the guard treats that as unhealthy until the next check',
  HP_GUARD_HEALTH_CHECK_TIMEOUT:
    'the custom healthCheck did not settle within healthCheckTimeout; the guard treats that as unhealthy until the next check',
  HP_GUARD_OVERLOADED: 'a request was shed (the code in the default 503 body)',
} as const;

export type GuardErrorCode = keyof typeof GUARD_ERROR_CODES;

/** Base class of the errors of @hotpath/overload-guard; `code` is stable, the message names the bad value. */
export class HotpathGuardError extends createErrorClass('HotpathGuardError', GUARD_ERROR_CODES) {}

export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (typeof value === 'function') return 'a function';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The error for one bad option: `<owner>: invalid <name> <value>: expected <expected>`. */
export function invalidOption(
  owner: string,
  name: string,
  value: unknown,
  expected: string,
): HotpathGuardError {
  return new HotpathGuardError(
    'HP_GUARD_INVALID_OPTION',
    `${owner}: invalid ${name} ${describeValue(value)}: expected ${expected}`,
  );
}
