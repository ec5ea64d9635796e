// A gRPC scenario's message from JSON and its .proto: the bytes hotpath encodes, decoded by
// protobufjs (what @grpc/proto-loader servers use) field by field; the errors that name what does
// not fit; and real calls to a @grpc/grpc-js server that checks what it decoded.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { afterAll, describe, expect, it } from 'vitest';
import { withGrpcMessages } from '../src/settings/grpc.js';
import { encodeRequest } from '../src/settings/protobuf.js';
import { resolveSettings } from '../src/settings/schema.js';
import { parseProto } from '../src/source/proto.js';
import { expectCallsAnswered } from './helpers/grpc-calls.js';
import { seeded } from './helpers/random.js';

const PROTO = `syntax = "proto3";
package shop.v1;
import "google/protobuf/empty.proto";
enum Kind { KIND_UNSPECIFIED = 0; BOOK = 1; FOOD = 2; }
message Money { int64 units = 1; sint32 nanos = 2; }
message Order {
  string name = 1;
  int64 count = 2;
  repeated int32 sizes = 3;
  Kind kind = 4;
  repeated Kind kinds = 5;
  Money price = 6;
  map<string, int32> stock = 7;
  bytes token = 8;
  double weight = 9;
  fixed64 big = 10;
  bool gift = 11;
  repeated Line lines = 12;
  oneof ship { string address = 13; uint32 locker = 14; }
  message Line { string sku = 1; uint32 qty = 2; }
  int32 delta = 15;
}
service Shop {
  rpc Place (Order) returns (Money);
  rpc Ping (google.protobuf.Empty) returns (google.protobuf.Empty);
  rpc Watch (Order) returns (stream Money);
}
`;

const ORDER = {
  name: 'ana',
  count: '9007199254740993',
  sizes: [1, 2, 300],
  kind: 'FOOD',
  kinds: ['BOOK', 2],
  price: { units: 12, nanos: -5 },
  stock: { a: 1, b: 70000 },
  token: Buffer.from('tok').toString('base64'),
  weight: 1.5,
  big: '18446744073709551615',
  gift: true,
  lines: [{ sku: 'x', qty: 2 }, {}],
  locker: 7,
  delta: -3,
};

describe('a message from JSON and its .proto', () => {
  const root = protobuf.parse(PROTO, { keepCase: true }).root;
  const decoded = (bytes: Buffer, type = 'shop.v1.Order') =>
    root
      .lookupType(type)
      .toObject(root.lookupType(type).decode(bytes), { longs: String, enums: String, bytes: String });

  it('encodes every field kind as protobufjs decodes it', () => {
    const bytes = encodeRequest(PROTO, '/shop.v1.Shop/Place', JSON.stringify(ORDER), 'the scenario');
    expect(decoded(bytes)).toEqual({
      ...ORDER,
      count: '9007199254740993',
      price: { units: '12', nanos: -5 },
      kinds: ['BOOK', 'FOOD'],
      lines: [{ sku: 'x', qty: 2 }, {}],
    });
  });

  it('takes lowerCamelCase names and an empty request', () => {
    const proto =
      'syntax = "proto3"; package p; message R { string user_name = 1; } service S { rpc M (R) returns (R); }';
    const root2 = protobuf.parse(proto, { keepCase: true }).root.lookupType('p.R');
    expect(root2.toObject(root2.decode(encodeRequest(proto, '/p.S/M', '{"userName":"b"}', 'x')))).toEqual({
      user_name: 'b',
    });
    expect(encodeRequest(PROTO, '/shop.v1.Shop/Ping', '{}', 'x')).toHaveLength(0);
  });

  it.each([
    ['{"nope":1}', /message\.nope: message shop\.v1\.Order has no field "nope" \(its fields: name, count,/],
    ['{"count":"12x"}', /message\.count: expected an integer \(int64\), got "12x"/],
    ['{"delta":3000000000}', /message\.delta: 3000000000 is out of int32's range/],
    [
      '{"kind":"TOY"}',
      /message\.kind: expected one of KIND_UNSPECIFIED, BOOK, FOOD \(or its number\), got "TOY"/,
    ],
    ['{"sizes":5}', /message\.sizes: expected an array \(repeated int32\), got 5/],
    ['{"price":{"units":true}}', /message\.price\.units: expected an integer \(int64\), got true/],
  ])('refuses %s naming the field', (json, why) => {
    expect(() => encodeRequest(PROTO, '/shop.v1.Shop/Place', json, 'the gRPC scenario "place"')).toThrow(why);
  });

  it('reads any text without throwing: token soup, unclosed blocks, a flood of braces', () => {
    const random = seeded(5);
    const words = [
      'message',
      'service',
      'rpc',
      'enum',
      'map',
      '<',
      '>',
      '{',
      '}',
      '(',
      ')',
      ';',
      '=',
      'stream',
      'returns',
      'oneof',
      '1',
      '-',
      'x',
      '"s',
      '/*',
      '//',
      '\n',
    ];
    for (let k = 0; k < 300; k++) {
      const text = Array.from(
        { length: 1 + Math.floor(random() * 60) },
        () => words[Math.floor(random() * words.length)],
      ).join(' ');
      expect(() => parseProto(text)).not.toThrow();
    }
    const flood = parseProto(`message M { ${'{'.repeat(200_000)}`);
    expect(flood.messages.get('M')).toEqual([]);
    // nesting past 32 levels is passed over, not recursed into
    const deep = parseProto(`${'message a { '.repeat(50_000)}`);
    expect(deep.messages.size).toBe(33);
  });

  it('refuses a message nested deeper than 64', () => {
    const proto = 'package p; message N { N n = 1; } service S { rpc M (N) returns (N); }';
    const json = `${'{"n":'.repeat(5000)}{}${'}'.repeat(5000)}`;
    expect(() => encodeRequest(proto, '/p.S/M', json, 'x')).toThrow(/nested more than 64 messages deep/);
  });

  it('refuses a method the .proto does not define', () => {
    expect(() => encodeRequest(PROTO, '/shop.v1.Shop/Gone', '{}', 'the gRPC scenario "x"')).toThrow(
      'invalid "message" of the gRPC scenario "x": the .proto defines no method "/shop.v1.Shop/Gone" (its methods: /shop.v1.Shop/Place, /shop.v1.Shop/Ping, /shop.v1.Shop/Watch)',
    );
  });
});

const dir = mkdtempSync(join(tmpdir(), 'hotpath-grpc-message-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'shop.proto'), PROTO);

describe('the settings', () => {
  const settings = (scenario: Record<string, unknown>) => () =>
    resolveSettings({
      config: { start: 'node s.js', scenarios: [{ name: 'place', ...scenario }] },
      configName: 'hotpath.config.json',
    });

  it('encode the message from the .proto into the body both sides get', () => {
    const s = settings({
      url: '/shop.v1.Shop/Place',
      grpc: true,
      proto: 'shop.proto',
      message: { name: 'ana' },
    })();
    expect(s.scenarios[0]?.message).toBe('{"name":"ana"}');
    const body = withGrpcMessages(s, dir).scenarios[0]?.body;
    expect(Buffer.from(body ?? '', 'base64')).toEqual(Buffer.from([10, 3, 97, 110, 97]));
  });

  it('refuse a message without proto, beside a body, or without grpc; an unreadable proto names its path', () => {
    expect(settings({ url: '/a.B/C', grpc: true, message: {} })).toThrow(
      /invalid "proto" of the gRPC scenario "place" .*: expected the \.proto file/,
    );
    expect(settings({ url: '/a.B/C', grpc: true, proto: 'x.proto', message: {}, body: '' })).toThrow(
      /either a message \(JSON, with proto\) or a body/,
    );
    expect(settings({ url: '/', message: { a: 1 } })).toThrow(
      /invalid "message" of the scenario "place" .*: expected it only with "grpc": true/,
    );
    expect(settings({ url: '/a.B/C', grpc: true, proto: 'x.proto', message: '[1]' })).toThrow(
      /expected a JSON object/,
    );
    const s = settings({ url: '/a.B/C', grpc: true, proto: 'missing.proto', message: {} })();
    expect(() => withGrpcMessages(s, dir)).toThrow(
      /invalid "proto" of the gRPC scenario "place": .*missing\.proto cannot be read/,
    );
  });
});

const require = createRequire(import.meta.url);

describe('real calls with the encoded message', () => {
  it('a @grpc/grpc-js server with proto-loader decodes what hotpath sends, on both sides', async () => {
    // answers only an order it decoded as sent: a wrong byte would count as an error
    writeFileSync(
      join(dir, 'server.cjs'),
      `const grpc = require(${JSON.stringify(require.resolve('@grpc/grpc-js'))});
const loader = require(${JSON.stringify(require.resolve('@grpc/proto-loader'))});
const def = loader.loadSync(${JSON.stringify(join(dir, 'shop.proto'))}, { keepCase: true, longs: String, enums: String, includeDirs: [] });
const pkg = grpc.loadPackageDefinition(def);
const server = new grpc.Server();
server.addService(pkg.shop.v1.Shop.service, {
  Place(call, cb) {
    const o = call.request;
    const ok = o.name === 'ana' && o.count === '9007199254740993' && o.kind === 'FOOD' && o.sizes.join() === '1,2,300' && o.stock.b === 70000 && o.locker === 7;
    cb(ok ? null : { code: grpc.status.INVALID_ARGUMENT, details: JSON.stringify(o) }, { units: '1', nanos: 0 });
  },
  Ping(call, cb) { cb(null, {}); },
  Watch(call) { call.end(); },
});
server.bindAsync('127.0.0.1:' + process.env.PORT, grpc.ServerCredentials.createInsecure(), (e) => { if (e) throw e; });
`,
    );
    await expectCallsAnswered(dir, 'node server.cjs', [
      { name: 'place', url: '/shop.v1.Shop/Place', grpc: true, proto: 'shop.proto', message: ORDER },
    ]);
  }, 60_000);
});
