import { HttpResponseParser } from './http-response-parser.js';
import type { Protocol } from './load-engine.js';
import { MemcacheReplyParser, memcacheRequests } from './memcache-protocol.js';
import type { ResolvedOptions } from './options.js';

/** The protocol a run speaks, chosen by its URL scheme. */
export function protocolFor(options: ResolvedOptions): Protocol {
  const target = options.target;
  if (target.kind === 'http') {
    return {
      requests: target.requests,
      noBody: target.noBody,
      createParser: (sink) => new HttpResponseParser(sink),
    };
  }
  const requests = memcacheRequests(target);
  return {
    requests,
    noBody: requests.map(() => false),
    createParser: (sink) => new MemcacheReplyParser(sink),
  };
}
