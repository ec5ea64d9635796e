// A scenario's `grpc`: unary calls to the method its url names, with its body as the request
// message in base64. Checked where the settings are resolved, so a config that cannot make a call
// is refused before any server starts, naming the scenario and the value.
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { HotpathCompareError } from '../errors.js';
import { printable } from '../printable.js';
import { show } from './coerce.js';
import { encodeRequest } from './protobuf.js';
import type { Scenario } from './types.js';

/** A gRPC method path, `/package.Service/Method` (what @hotpath/load-client accepts too). */
const METHOD = /^\/[A-Za-z_][A-Za-z0-9_.]*\/[A-Za-z_][A-Za-z0-9_]*$/;
/** Base64 as RFC 4648 writes it: groups of four, padding only at the end. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The request message's bytes from a gRPC scenario's body (base64; absent: empty). */
export const grpcMessage = (body: string | undefined): Buffer => Buffer.from(body ?? '', 'base64');

/** Refuses a gRPC scenario whose url is no method, whose body is no base64, or that lists requests. */
export function checkGrpc(scenario: Scenario, where: string): void {
  if (!scenario.grpc && scenario.message !== undefined)
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `invalid "message" of the scenario ${JSON.stringify(scenario.name)} in ${where}: expected it only with "grpc": true (the request message of a gRPC call), got ${show(scenario.message)}`,
    );
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
  if (scenario.message !== undefined && scenario.body !== undefined)
    throw refuse(
      'message',
      scenario.message,
      'either a message (JSON, with proto) or a body (base64), not both',
    );
  if (scenario.message !== undefined && scenario.proto === undefined)
    throw refuse('proto', undefined, 'the .proto file that defines the method, to encode message with');
}

/** The most of a .proto file read. */
const MAX_PROTO_BYTES = 1024 * 1024;

/**
 * The settings with each gRPC scenario's `message` (JSON) encoded into its body (base64), from
 * its .proto read relative to `cwd` (the project's folder): the same bytes for both sides. The
 * measured settings carry the body, not the message.
 */
export function withGrpcMessages<S extends { scenarios: Scenario[] }>(settings: S, cwd: string): S {
  if (!settings.scenarios.some((s) => s.grpc && s.message !== undefined)) return settings;
  const scenarios = settings.scenarios.map((s) => {
    if (!s.grpc || s.message === undefined || s.proto === undefined) return s;
    const where = `the gRPC scenario ${JSON.stringify(s.name)}`;
    const path = resolve(cwd, s.proto);
    let text: string;
    try {
      if (statSync(path).size > MAX_PROTO_BYTES) throw new Error(`larger than ${MAX_PROTO_BYTES} bytes`);
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new HotpathCompareError(
        'HP_COMPARE_INVALID_SETTING',
        `invalid "proto" of ${where}: ${printable(path)} cannot be read (${printable((err as Error).message)}); expected a .proto file relative to ${printable(cwd)}`,
      );
    }
    // The bytes go on as the body; the JSON is not recorded beside them (one request, one form).
    const { message, ...scenario } = s;
    return { ...scenario, body: encodeRequest(text, s.url, message, where).toString('base64') };
  });
  return { ...settings, scenarios };
}
