import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../src/index.js';
import { cli } from './cli-runner.js';

// gRPC unary calls against a real @grpc/grpc-js server. The service uses raw bytes for its
// messages (identity serialisers): what matters here is the framing, not protobuf.
const identity = (bytes: Buffer) => bytes;
const method = (path: string) => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity,
});
const service = {
  Echo: method('/hotpath.test.Echo/Say'),
  Fail: method('/hotpath.test.Echo/Fail'),
} as unknown as ServiceDefinition;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function grpcServer(): Promise<{ url: string; calls: () => number; seen: () => Buffer[] }> {
  let calls = 0;
  const seen: Buffer[] = [];
  const server = new Server();
  server.addService(service, {
    Echo: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      calls++;
      if (seen.length < 3) seen.push(call.request);
      callback(null, Buffer.concat([Buffer.from('echo:'), call.request]));
    },
    Fail: (_call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      calls++;
      callback({ code: status.RESOURCE_EXHAUSTED, details: 'no more' });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  closers.push(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  return { url: `http://127.0.0.1:${port}`, calls: () => calls, seen: () => seen };
}

describe('gRPC unary calls', () => {
  it('calls a method with the message bytes and counts every call exactly', async () => {
    const server = await grpcServer();
    const message = Buffer.from([0x0a, 0x03, 0x61, 0x6e, 0x61]);
    const result = await run({
      url: server.url,
      grpc: { method: '/hotpath.test.Echo/Say', message },
      connections: 3,
      pipelining: 5,
      amount: 1000,
    });
    expect(result.statusCodes).toEqual({ 200: 1000 });
    expect(result.errors).toBe(0);
    expect(server.calls()).toBe(1000);
    expect(server.seen()).toEqual([message, message, message]);
  });

  it('a non-zero grpc-status is a `grpc` error named by its code', async () => {
    const server = await grpcServer();
    const failing = await run({ url: server.url, grpc: { method: '/hotpath.test.Echo/Fail' }, amount: 50 });
    expect(failing.requests.total).toBe(0);
    expect(failing.errorsByKind).toEqual({ grpc: 50 });
    expect(failing.errorMessages.grpc).toBe('HP_LOAD_GRPC_STATUS: grpc-status 8 (RESOURCE_EXHAUSTED)');
    expect(server.calls()).toBe(50);
    const unknown = await run({ url: server.url, grpc: { method: '/hotpath.test.Echo/Nope' }, amount: 5 });
    expect(unknown.errorMessages.grpc).toBe('HP_LOAD_GRPC_STATUS: grpc-status 12 (UNIMPLEMENTED)');
  });

  it('the CLI: --grpc with the message from a file; a bad method exits 2 naming it', async () => {
    const server = await grpcServer();
    const file = join(tmpdir(), `hotpath-grpc-${process.pid}.bin`);
    writeFileSync(file, Buffer.from([1, 2, 3]));
    const ran = await cli([
      '--grpc',
      '/hotpath.test.Echo/Say',
      '-b',
      `@${file}`,
      '-a',
      '200',
      '-j',
      server.url,
    ]);
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout).statusCodes).toEqual({ 200: 200 });
    expect(server.seen()[0]).toEqual(Buffer.from([1, 2, 3]));
    const bad = await cli(['--grpc', 'Echo.Say', '-a', '1', server.url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe(
      'hotpath-load: invalid --grpc "Echo.Say": expected a gRPC method path like /package.Service/Method',
    );
  });
});
