import type { ServerResponse } from 'node:http';
import type { ResolvedGuardOptions } from './guard-options.js';

/** The shed answer, serialised once: status, headers and body bytes. */
export interface ShedResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
  contentType: string;
  retryAfter: string;
}

export function buildShedResponse(options: ResolvedGuardOptions): ShedResponse {
  const statusCode = options.statusCode;
  let body: Buffer;
  let contentType: string;
  if (typeof options.body === 'string') {
    body = Buffer.from(options.body);
    contentType = 'text/plain; charset=utf-8';
  } else {
    body = Buffer.from(
      JSON.stringify(
        options.body ?? {
          statusCode,
          code: 'HP_GUARD_OVERLOADED',
          error: 'Service Unavailable',
          message: 'The server is overloaded; retry later.',
        },
      ),
    );
    contentType = 'application/json; charset=utf-8';
  }
  const retryAfter = String(options.retryAfter);
  return {
    statusCode,
    headers: {
      'content-type': contentType,
      'content-length': String(body.length),
      'retry-after': retryAfter,
      'cache-control': 'no-store',
    },
    body,
    contentType,
    retryAfter,
  };
}

/** Writes the prepared 503 on a node response (unless headers already went out). */
export function writeShed(res: ServerResponse, shed: ShedResponse): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(shed.statusCode, shed.headers);
  res.end(shed.body);
}
