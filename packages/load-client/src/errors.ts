import { createErrorClass } from './error-class.js';

/** Every error this package throws on purpose carries one of these stable codes. */
export const LOAD_ERROR_CODES = {
  HP_LOAD_INVALID_URL: 'the target URL is not an http://, https:// or memcache:// URL with a host',
  HP_LOAD_INVALID_OPTION: 'an option has a value outside what it accepts',
  HP_LOAD_INVALID_REQUEST: 'a request (method, path, header) cannot be serialised safely',
  HP_LOAD_UNREACHABLE: 'no connection to the target could be opened',
  HP_LOAD_TLS: 'the TLS handshake with the target failed (e.g. its certificate is not trusted with verify)',
  HP_LOAD_INVALID_RESULT: 'a file given to merge is not a hotpath-load JSON result',
  HP_LOAD_WORKER_FAILED: 'a worker thread ended without a result',
} as const;

export type LoadErrorCode = keyof typeof LOAD_ERROR_CODES;

/** Base class of the errors of @hotpath/load-client; `code` is stable, the message names the bad value. */
export class HotpathLoadError extends createErrorClass('HotpathLoadError', LOAD_ERROR_CODES) {}

export function invalidOption(name: string, value: unknown, expected: string): HotpathLoadError {
  return new HotpathLoadError(
    'HP_LOAD_INVALID_OPTION',
    `invalid ${name} ${describe(value)}: expected ${expected}`,
  );
}

export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (Buffer.isBuffer(value)) return `<Buffer ${value.length} bytes>`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
