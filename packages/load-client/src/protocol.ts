import type { BuiltRequest, RequestSet } from './connection.js';
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
  };
}

/** The protocol a run speaks, chosen by its URL scheme. */
export function protocolFor(options: ResolvedOptions): Protocol {
  const target = options.target;
  if (target.kind === 'http') return httpProtocol(target);
  const requests = memcacheRequests(target);
  const set: RequestSet = { requests, noBody: requests.map(() => false) };
  return {
    requestsFor: () => set,
    buildRequest: null,
    createParser: (sink) => new MemcacheReplyParser(sink),
  };
}
