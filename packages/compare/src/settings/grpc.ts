// A scenario's `grpc`: unary calls to the method its url names, with its body as the request
// message in base64. Checked where the settings are resolved, so a config that cannot make a call
// is refused before any server starts, naming the scenario and the value.
import { HotpathCompareError } from '../errors.js';
import { show } from './coerce.js';
import type { Scenario } from './types.js';

/** A gRPC method path, `/package.Service/Method` (what @hotpath/load-client accepts too). */
const METHOD = /^\/[A-Za-z_][A-Za-z0-9_.]*\/[A-Za-z_][A-Za-z0-9_]*$/;
/** Base64 as RFC 4648 writes it: groups of four, padding only at the end. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The request message's bytes from a gRPC scenario's body (base64; absent: empty). */
export const grpcMessage = (body: string | undefined): Buffer => Buffer.from(body ?? '', 'base64');

/** Refuses a gRPC scenario whose url is no method, whose body is no base64, or that lists requests. */
export function checkGrpc(scenario: Scenario, where: string): void {
  if (!scenario.grpc) return;
  const refuse = (what: string, value: unknown, expected: string) =>
    new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `invalid "${what}" of the gRPC scenario ${JSON.stringify(scenario.name)} in ${where}: expected ${expected}, got ${show(value)}`,
    );
  if (!METHOD.test(scenario.url))
    throw refuse('url', scenario.url, 'a gRPC method path like /package.Service/Method');
  const body = scenario.body?.replace(/\s+/g, '');
  if (body !== undefined && !BASE64.test(body))
    throw refuse('body', scenario.body, 'the request message as base64 (its encoded protobuf bytes)');
  if (scenario.requests) throw refuse('requests', '[…]', 'no requests list (a gRPC scenario makes one call)');
}
