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
  HP_LOAD_H2_ALPN: 'an https:// server did not agree to HTTP/2 in the TLS handshake (ALPN h2)',
  HP_LOAD_H2_PROTOCOL: 'an HTTP/2 server broke the framing or HPACK rules; the connection was dropped',
  HP_LOAD_H2_HEADERS_TOO_LARGE:
    'an HTTP/2 response header list or block passed the limit (64 KiB, 128 CONTINUATION frames)',
  HP_LOAD_H2_FLOOD:
    'an HTTP/2 server sent too many PING or SETTINGS frames between two responses, or too many header blocks on one stream',
  HP_LOAD_H2_STREAM_RESET: 'an HTTP/2 server reset a stream (RST_STREAM)',
  HP_LOAD_H2_REFUSED: 'an HTTP/2 server refused a stream unprocessed (GOAWAY, REFUSED_STREAM)',
  HP_LOAD_GRPC_STATUS: 'a gRPC call ended with a non-zero grpc-status, or without one',
  HP_LOAD_H2_WINDOW: "a request body waited on the HTTP/2 server's flow-control window until the timeout",
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
