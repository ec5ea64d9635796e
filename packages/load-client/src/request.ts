import { HotpathLoadError } from './errors.js';

export interface RequestSpec {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Serialises one HTTP/1.1 request once, so the request loop only writes a ready Buffer.
 * Adds Host, Content-Length (when there is a body) and keep-alive unless given.
 */
export function serializeRequest(host: string, spec: RequestSpec = {}): Buffer {
  const method = spec.method ?? 'GET';
  if (!TOKEN.test(method))
    throw new HotpathLoadError(
      'HP_LOAD_INVALID_REQUEST',
      `invalid HTTP method ${JSON.stringify(method)}: expected a token`,
    );
  const path = spec.path ?? '/';
  if (!path.startsWith('/') || /[\s]/.test(path)) {
    throw new HotpathLoadError(
      'HP_LOAD_INVALID_REQUEST',
      `invalid request path ${JSON.stringify(path)}: expected an absolute path without spaces`,
    );
  }
  const body = spec.body === undefined ? undefined : Buffer.from(spec.body);
  const headers = new Map<string, string>();
  headers.set('host', `Host: ${host}`);
  for (const [name, value] of Object.entries(spec.headers ?? {})) {
    if (!TOKEN.test(name))
      throw new HotpathLoadError(
        'HP_LOAD_INVALID_REQUEST',
        `invalid header name ${JSON.stringify(name)}: expected a token`,
      );
    if (/[\r\n]/.test(value))
      throw new HotpathLoadError(
        'HP_LOAD_INVALID_REQUEST',
        `invalid value for header ${name}: contains a line break`,
      );
    headers.set(name.toLowerCase(), `${name}: ${value}`);
  }
  if (body && !headers.has('content-length')) headers.set('content-length', `Content-Length: ${body.length}`);
  if (!headers.has('connection')) headers.set('connection', 'Connection: keep-alive');
  const head = Buffer.from(
    `${method} ${path} HTTP/1.1\r\n${[...headers.values()].join('\r\n')}\r\n\r\n`,
    'latin1',
  );
  return body ? Buffer.concat([head, body]) : head;
}
