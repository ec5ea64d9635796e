import { type BuiltRequest, Connection, type RequestSet } from './connection.js';
import { H2Connection, type H2RequestPlan } from './h2-connection.js';
import type { HeaderField } from './hpack.js';
import { HttpResponseParser } from './http-response-parser.js';
import type { Protocol } from './load-engine.js';
import { MemcacheReplyParser, memcacheRequests } from './memcache-protocol.js';
import type { HttpTarget, ResolvedOptions } from './options.js';
import { type RequestSpec, serializeRequest } from './request.js';

function isHead(spec: RequestSpec): boolean {
  return (spec.method ?? 'GET').toUpperCase() === 'HEAD';
}

function serializeAll(target: HttpTarget, specs: RequestSpec[]): RequestSet {
  if (!Array.isArray(specs) || specs.length === 0) {
    throw new TypeError('setupConnection must return a non-empty array of requests');
  }
  return {
    requests: specs.map((spec) => serializeRequest(target.hostHeader, { path: target.path, ...spec })),
    noBody: specs.map(isHead),
  };
}

function httpProtocol(target: HttpTarget): Protocol {
  const fixed: RequestSet = { requests: target.requests, noBody: target.noBody };
  const setup = target.setupConnection;
  const onRequest = target.onRequest;
  return {
    requestsFor: setup ? (connection) => serializeAll(target, setup(connection)) : () => fixed,
    buildRequest: onRequest
      ? (connection, sequence): BuiltRequest => {
          const spec = onRequest({ connection, sequence });
          return {
            request: serializeRequest(target.hostHeader, { path: target.path, ...spec }),
            noBody: isHead(spec),
          };
        }
      : null,
    createParser: (sink) => new HttpResponseParser(sink, target.expectBody),
    createConnection: (owner, index) => new Connection(owner, index),
  };
}

/** Headers that belong to one HTTP/1.1 connection and are not sent over HTTP/2 (RFC 9113 8.2.2). */
const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

/** The requests of an HTTP/2 run as header fields (names lower-case) and bodies. */
export function h2Plan(target: HttpTarget): H2RequestPlan {
  const fields: HeaderField[][] = [];
  const bodies: (Buffer | null)[] = [];
  for (const spec of target.specs) {
    const body = spec.body === undefined ? null : Buffer.from(spec.body);
    const list: HeaderField[] = [
      [':method', spec.method ?? 'GET'],
      [':scheme', target.tls === null ? 'http' : 'https'],
      [':authority', target.hostHeader],
      [':path', spec.path ?? target.path],
    ];
    let length = false;
    for (const [name, value] of Object.entries(spec.headers ?? {})) {
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower) || (lower === 'te' && value.trim().toLowerCase() !== 'trailers')) continue;
      if (lower === 'content-length') length = true;
      list.push([lower, value.trim()]);
    }
    if (body !== null && body.length > 0 && !length && !target.grpc)
      list.push(['content-length', String(body.length)]);
    fields.push(list);
    bodies.push(body !== null && body.length > 0 ? body : null);
  }
  return { fields, bodies, grpc: target.grpc };
}

function http2Protocol(target: HttpTarget): Protocol {
  const plan = h2Plan(target);
  const fixed: RequestSet = { requests: target.requests, noBody: target.noBody };
  return {
    requestsFor: () => fixed,
    buildRequest: null,
    createParser: (sink) => new HttpResponseParser(sink, null),
    createConnection: (owner, index) => new H2Connection(owner, index, plan),
  };
}

/** The protocol a run speaks, chosen by its URL scheme. */
export function protocolFor(options: ResolvedOptions): Protocol {
  const target = options.target;
  if (target.kind === 'http') return target.http2 ? http2Protocol(target) : httpProtocol(target);
  const requests = memcacheRequests(target);
  const set: RequestSet = { requests, noBody: requests.map(() => false) };
  return {
    requestsFor: () => set,
    buildRequest: null,
    createParser: (sink) => new MemcacheReplyParser(sink),
    createConnection: (owner, index) => new Connection(owner, index),
  };
}
