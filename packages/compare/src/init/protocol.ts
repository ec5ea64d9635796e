// What the server speaks, as `hotpath init` reads it: HTTP/2 (node:http2's createServer or
// createSecureServer, fastify's `http2: true`) and gRPC (@grpc/grpc-js with .proto service
// definitions: each unary method is a scenario, /package.Service/Method). Read from the project's
// own files with the bounds of source/files.ts; a .proto by source/proto.ts.
import { listSourceFiles, readSource } from '../source/files.js';
import { parseProto } from '../source/proto.js';

export interface GrpcMethod {
  /** `/package.Service/Method`: the path a unary call is POSTed to. */
  path: string;
  /** The .proto file that defines it. */
  file: string;
}

export interface Protocol {
  /** HTTP/2 over cleartext (h2c, prior knowledge) or over TLS (ALPN h2). */
  http2?: { tls: boolean; evidence: string };
  /** A gRPC server: its unary methods, and the streaming ones left out. */
  grpc?: { methods: GrpcMethod[]; streaming: string[]; evidence: string };
}

const GRPC_PACKAGES = ['@grpc/grpc-js', 'grpc'];
const MAX_METHODS = 50;

/** The methods of a .proto's services, `/package.Service/Method`, streaming ones marked. */
export function protoMethods(text: string): { path: string; streaming: boolean }[] {
  return parseProto(text).methods.map((m) => ({ path: m.path, streaming: m.streaming }));
}

/** What the project's server speaks beside HTTP/1.1, from its dependencies and files. */
export function detectProtocol(
  dir: string,
  sources: readonly string[],
  deps: Record<string, unknown>,
): Protocol {
  const protocol: Protocol = {};
  const grpcPackage = GRPC_PACKAGES.find((name) => name in deps);
  // a gRPC server adds its services; a REST server that calls one only makes clients
  const serves = sources.find((file) => (readSource(dir, file) ?? '').includes('.addService('));
  if (grpcPackage && serves) {
    const methods: GrpcMethod[] = [];
    const streaming: string[] = [];
    for (const file of listSourceFiles(dir, undefined, /\.proto$/)) {
      for (const m of protoMethods(readSource(dir, file) ?? ''))
        if (m.streaming) streaming.push(m.path);
        else if (methods.length < MAX_METHODS && !methods.some((x) => x.path === m.path))
          methods.push({ path: m.path, file });
    }
    protocol.grpc = {
      methods,
      streaming,
      evidence: `${grpcPackage} in package.json, addService in ${serves}`,
    };
    return protocol;
  }
  for (const file of sources) {
    const text = readSource(dir, file) ?? '';
    const http2Module =
      text.includes("'node:http2'") ||
      text.includes("'http2'") ||
      text.includes('"node:http2"') ||
      text.includes('"http2"');
    if (http2Module && text.includes('createSecureServer(')) {
      protocol.http2 = { tls: true, evidence: `createSecureServer in ${file}` };
      break;
    }
    if (http2Module && text.includes('createServer(')) {
      protocol.http2 = { tls: false, evidence: `http2 createServer in ${file}` };
      break;
    }
    if (/\bhttp2\s*:\s*true\b/.test(text.slice(0, 512 * 1024)) && text.includes('fastify')) {
      protocol.http2 = { tls: /\bhttps\s*:/.test(text), evidence: `fastify http2: true in ${file}` };
      break;
    }
  }
  return protocol;
}
