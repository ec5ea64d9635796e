// What the server speaks, as `hotpath init` reads it: HTTP/2 (node:http2's createServer or
// createSecureServer, fastify's `http2: true`) and gRPC (@grpc/grpc-js with .proto service
// definitions: each unary method is a scenario, /package.Service/Method). Read from the project's
// own files with the bounds of source/files.ts; a .proto is read by a one-pass tokenizer.
import { listSourceFiles, readSource } from '../source/files.js';

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

/** The tokens of a .proto file: identifiers (dotted), punctuation; comments and strings skipped. */
export function protoTokens(text: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  const n = Math.min(text.length, 512 * 1024);
  while (i < n) {
    const c = text[i] as string;
    if (c === '/' && text[i + 1] === '/') {
      while (i < n && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      i = end < 0 ? n : end + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[\w.]/.test(text[j] as string)) j++;
      tokens.push(text.slice(i, j));
      i = j;
    } else {
      if ('{}();'.includes(c)) tokens.push(c);
      i++;
    }
  }
  return tokens;
}

/** The methods of a .proto's services: `rpc M ( [stream] A ) returns ( [stream] B )`. */
export function protoMethods(text: string): { path: string; streaming: boolean }[] {
  const t = protoTokens(text);
  let pkg = '';
  const out: { path: string; streaming: boolean }[] = [];
  let service: string | undefined;
  let depth = 0;
  let serviceDepth = -1;
  for (let i = 0; i < t.length; i++) {
    const w = t[i];
    if (w === '{') depth++;
    else if (w === '}') {
      depth--;
      if (depth === serviceDepth) service = undefined;
    } else if (w === 'package' && depth === 0) pkg = t[i + 1] ?? '';
    else if (w === 'service' && depth === 0 && t[i + 2] === '{') {
      service = t[i + 1];
      serviceDepth = depth;
    } else if (w === 'rpc' && service && t[i + 2] === '(') {
      const name = t[i + 1] ?? '';
      // ( [stream] Req ) returns ( [stream] Res )
      const close = t.indexOf(')', i + 2);
      const reqStream = t.slice(i + 3, close).includes('stream');
      const open2 = t.indexOf('(', close);
      const close2 = t.indexOf(')', open2);
      const resStream = open2 > 0 && close2 > 0 && t.slice(open2 + 1, close2).includes('stream');
      if (/^\w+$/.test(name) && /^\w+$/.test(service))
        out.push({ path: `/${pkg ? `${pkg}.` : ''}${service}/${name}`, streaming: reqStream || resStream });
    }
  }
  return out;
}

/** What the project's server speaks beside HTTP/1.1, from its dependencies and files. */
export function detectProtocol(
  dir: string,
  sources: readonly string[],
  deps: Record<string, unknown>,
): Protocol {
  const protocol: Protocol = {};
  const grpcPackage = GRPC_PACKAGES.find((name) => name in deps);
  if (grpcPackage) {
    const methods: GrpcMethod[] = [];
    const streaming: string[] = [];
    for (const file of listSourceFiles(dir, undefined, /\.proto$/)) {
      for (const m of protoMethods(readSource(dir, file) ?? ''))
        if (m.streaming) streaming.push(m.path);
        else if (methods.length < MAX_METHODS && !methods.some((x) => x.path === m.path))
          methods.push({ path: m.path, file });
    }
    protocol.grpc = { methods, streaming, evidence: `${grpcPackage} in package.json` };
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
