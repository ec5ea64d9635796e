import { createErrorClass } from './error-class.js';

/**
 * Every error this package throws or rejects with is a HotpathMcError with a stable code.
 * The README lists every code (a test checks it).
 */
export const ERROR_CODES = {
  HP_MC_INVALID_OPTION: 'an option or argument has a value outside what is accepted',
  HP_MC_INVALID_KEY: 'a key is empty, longer than 250 bytes, or contains spaces or control characters',
  HP_MC_VALUE_TOO_LARGE: 'a value is larger than the item size limit',
  HP_MC_CONNECTION_CLOSED: 'the connection closed before the reply arrived',
  HP_MC_CONNECT_FAILED: 'the client could not connect to the server',
  HP_MC_TIMEOUT: 'a request or connect did not complete within the timeout',
  HP_MC_PROTOCOL: 'the peer sent bytes that are not valid memcached protocol',
  HP_MC_SERVER_ERROR: 'the server replied ERROR, CLIENT_ERROR or SERVER_ERROR',
  HP_MC_NO_SERVERS: 'the client has no server to send a request to',
  HP_MC_AUTHFILE: 'the authfile cannot be read or has no valid user:password line',
  HP_MC_LISTEN: 'the server could not listen on the requested address and port',
  HP_MC_INTERNAL: 'an internal invariant did not hold: a bug in @hotpath/memcache-proto, not bad input',
} as const;

export type HotpathMcErrorCode = keyof typeof ERROR_CODES;

export class HotpathMcError extends createErrorClass('HotpathMcError', ERROR_CODES) {}
