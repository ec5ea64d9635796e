// hotpath init on servers that speak HTTP/2 or gRPC: .proto services read by a tokenizer, the
// server's http2 module seen in its source, and a written gRPC config measured for real against
// a @grpc/grpc-js server.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { detectProject } from '../src/init/detect.js';
import { protoMethods } from '../src/init/protocol.js';
import { configFile } from '../src/init/templates.js';
import { expectCallsAnswered } from './helpers/grpc-calls.js';
import { CLI_BIN } from './helpers/repo.js';

const root = mkdtempSync(join(tmpdir(), 'hotpath-init-protocol-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function project(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

const PROTO = `// the work service
syntax = "proto3";
package hotpath.test;
import "google/protobuf/empty.proto";
/* a comment with rpc Fake (A) returns (B); inside */
message Req { string name = 1; }
service Work {
  rpc Hash (Req) returns (Req);
  rpc Watch (Req) returns (stream Req);
  rpc Upload (stream Req) returns (Req) { option deprecated = true; }
  rpc Ping (google.protobuf.Empty) returns (google.protobuf.Empty) {}
}
service Other { rpc Get (Req) returns (Req); }
`;

describe('.proto services', () => {
  it('names each method /package.Service/Method, streaming ones marked, comments and options skipped', () => {
    expect(protoMethods(PROTO)).toEqual([
      { path: '/hotpath.test.Work/Hash', streaming: false },
      { path: '/hotpath.test.Work/Watch', streaming: true },
      { path: '/hotpath.test.Work/Upload', streaming: true },
      { path: '/hotpath.test.Work/Ping', streaming: false },
      { path: '/hotpath.test.Other/Get', streaming: false },
    ]);
    expect(protoMethods('service S { rpc M (A) returns (B); }')).toEqual([
      { path: '/S/M', streaming: false },
    ]);
    expect(protoMethods('service { rpc ( ')).toEqual([]);
  });
});

describe('what the server speaks', () => {
  const pkg = (deps: Record<string, string>) =>
    JSON.stringify({ name: 'x', scripts: { start: 'node server.js' }, dependencies: deps });

  it('gRPC: the unary methods of the .proto files, streaming ones left out', () => {
    const dir = project('grpc', {
      'package.json': pkg({ '@grpc/grpc-js': '^1' }),
      'proto/work.proto': PROTO,
      'server.js': 'server.addService(def.Work.service, handlers);',
    });
    const { grpc, http2 } = detectProject(dir).protocol;
    expect(http2).toBeUndefined();
    expect(grpc?.methods.map((m) => m.path)).toEqual([
      '/hotpath.test.Work/Hash',
      '/hotpath.test.Work/Ping',
      '/hotpath.test.Other/Get',
    ]);
    expect(grpc?.methods[0]?.file).toBe('proto/work.proto');
    expect(grpc?.streaming).toEqual(['/hotpath.test.Work/Watch', '/hotpath.test.Work/Upload']);
  });

  it('a REST server that only calls a gRPC service: no gRPC scenarios', () => {
    const dir = project('grpc-client', {
      'package.json': pkg({ '@grpc/grpc-js': '^1', express: '^4' }),
      'proto/work.proto': PROTO,
      'server.js':
        "const client = new Work('localhost:50051', creds);\nrequire('express')().get('/a', h).listen(1);",
    });
    expect(detectProject(dir).protocol.grpc).toBeUndefined();
  });

  it.each([
    [
      'h2c',
      "const http2 = require('node:http2');\nhttp2.createServer((q, s) => s.end()).listen(process.env.PORT);",
      false,
    ],
    [
      'TLS',
      "import { createSecureServer } from 'http2';\ncreateSecureServer({ key, cert }).listen(process.env.PORT);",
      true,
    ],
    [
      'fastify',
      "const app = require('fastify')({ http2: true });\napp.listen({ port: process.env.PORT });",
      false,
    ],
  ] as const)('HTTP/2 (%s) from the server source', (name, source, tls) => {
    const dir = project(`h2-${name}`, { 'package.json': pkg({}), 'server.js': source });
    expect(detectProject(dir).protocol.http2?.tls).toBe(tls);
  });

  it('a plain HTTP/1.1 server: neither', () => {
    const dir = project('h1', {
      'package.json': pkg({}),
      'server.js': "require('node:http').createServer().listen(1);",
    });
    expect(detectProject(dir).protocol).toEqual({});
  });

  it('the config: gRPC methods as grpc scenarios, HTTP/2 over TLS as https:// URLs', () => {
    const grpc = { methods: [{ path: '/a.B/C', file: 'x.proto' }], streaming: [], evidence: '' };
    expect(
      JSON.parse(configFile('node s.js', ['/a.B/C', '/health'], undefined, undefined, { grpc })).scenarios,
    ).toEqual([
      { name: '/a.B/C', url: '/a.B/C', grpc: true, proto: 'x.proto', message: {} },
      { name: '/health', url: '/health' },
    ]);
    const tls = JSON.parse(
      configFile('node s.js', ['/'], undefined, undefined, { http2: { tls: true, evidence: '' } }),
    );
    expect(tls.http2).toBe(true);
    expect(tls.scenarios).toEqual([{ name: '/', url: 'https://127.0.0.1:$PORT/' }]);
  });
});

describe('hotpath init on a @grpc/grpc-js server, then hotpath compare with what it wrote', () => {
  it('writes the unary methods as gRPC scenarios that measure real calls', async () => {
    const dir = project('grpc-app', {
      'package.json': JSON.stringify({
        name: 'svc',
        scripts: { start: 'node server.js' },
        dependencies: { '@grpc/grpc-js': '^1' },
      }),
      'proto/work.proto':
        'syntax = "proto3";\npackage hotpath.test;\nmessage R { string name = 1; }\nservice Work { rpc Hash (R) returns (R); rpc Tail (R) returns (stream R); }\n',
    });
    copyFileSync(
      fileURLToPath(new URL('./fixtures/grpc-work-server.cjs', import.meta.url)),
      join(dir, 'server.js'),
    );
    // the server's dependency, as an install would have put it there
    mkdirSync(join(dir, 'node_modules', '@grpc'), { recursive: true });
    symlinkSync(
      fileURLToPath(new URL('../node_modules/@grpc/grpc-js', import.meta.url)),
      join(dir, 'node_modules', '@grpc', 'grpc-js'),
    );
    const r = spawnSync(process.execPath, [CLI_BIN, 'init', '--no-install'], {
      cwd: dir,
      encoding: 'utf8',
      input: '',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'hotpath init: gRPC (@grpc/grpc-js in package.json, addService in server.js): 1 unary method(s) in .proto files; written: /hotpath.test.Work/Hash (proto/work.proto), each with its .proto and an empty request message',
    );
    expect(r.stderr).toContain('hotpath init: left out: /hotpath.test.Work/Tail — streaming methods');
    const config = JSON.parse(readFileSync(join(dir, 'hotpath.config.json'), 'utf8'));
    expect(config.scenarios).toEqual([
      {
        name: '/hotpath.test.Work/Hash',
        url: '/hotpath.test.Work/Hash',
        grpc: true,
        proto: 'proto/work.proto',
        message: {},
      },
    ]);
    await expectCallsAnswered(dir, config.start, config.scenarios);
  }, 60_000);
});
