// A gRPC scenario's request message from JSON: the method's input type read from the scenario's
// .proto (source/proto.ts), the JSON encoded in protobuf's wire format — the bytes every call of
// the scenario sends, to both sides. Field names as written in the .proto or lowerCamelCase;
// 64-bit integers as numbers or decimal text; bytes as base64; enums by name or number; maps as
// objects; repeated numbers packed (every parser reads packed and unpacked alike). A value that
// does not fit its field is refused, naming the field's path, the value and what was expected.
import { HotpathCompareError } from '../errors.js';
import { type ProtoField, type ProtoFile, parseProto, resolveType } from '../source/proto.js';
import { show } from './coerce.js';

type Wire = 0 | 1 | 2 | 5;

const VARINT = new Set(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'bool']);
const FIXED64 = new Set(['fixed64', 'sfixed64', 'double']);
const FIXED32 = new Set(['fixed32', 'sfixed32', 'float']);
/** Well-known types a .proto imports rather than defines, with no field a request sets. */
const EMPTY_TYPES = new Set(['google.protobuf.Empty']);

const INTEGER_RANGE: Record<string, [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

class Refused extends Error {}

/** Messages nested at most this deep in a request. */
const MAX_DEPTH = 64;

function varint(value: bigint): number[] {
  let v = value < 0n ? value + 2n ** 64n : value;
  const out: number[] = [];
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return out;
}

const tag = (number: number, wire: Wire) => varint(BigInt(number) * 8n + BigInt(wire));

const lowerCamel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The wire type a scalar or enum is written with. */
function wireOf(type: string, isEnum: boolean): Wire {
  if (isEnum || VARINT.has(type)) return 0;
  if (FIXED64.has(type)) return 1;
  if (FIXED32.has(type)) return 5;
  return 2;
}

function integer(value: unknown, type: string, path: string): bigint {
  const text = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : '') : value;
  if (typeof text !== 'string' || !/^-?\d{1,20}$/.test(text.trim()))
    throw new Refused(`${path}: expected an integer (${type}), got ${show(value)}`);
  const n = BigInt(text.trim());
  const [lo, hi] = INTEGER_RANGE[type] ?? [0n, 0n];
  if (n < lo || n > hi) throw new Refused(`${path}: ${show(value)} is out of ${type}'s range`);
  return n;
}

/** One scalar's bytes (without its tag). */
function scalar(type: string, value: unknown, path: string, enumValues?: Map<string, number>): number[] {
  if (enumValues) {
    const n = typeof value === 'string' ? enumValues.get(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n))
      throw new Refused(
        `${path}: expected one of ${[...enumValues.keys()].join(', ')} (or its number), got ${show(value)}`,
      );
    return varint(BigInt(n));
  }
  switch (type) {
    case 'bool':
      if (typeof value !== 'boolean')
        throw new Refused(`${path}: expected true or false, got ${show(value)}`);
      return [value ? 1 : 0];
    case 'string': {
      if (typeof value !== 'string') throw new Refused(`${path}: expected text, got ${show(value)}`);
      const bytes = Buffer.from(value, 'utf8');
      return [...varint(BigInt(bytes.length)), ...bytes];
    }
    case 'bytes': {
      if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value))
        throw new Refused(`${path}: expected bytes as base64, got ${show(value)}`);
      const bytes = Buffer.from(value, 'base64');
      return [...varint(BigInt(bytes.length)), ...bytes];
    }
    case 'double':
    case 'float': {
      if (typeof value !== 'number')
        throw new Refused(`${path}: expected a number (${type}), got ${show(value)}`);
      const b = Buffer.alloc(type === 'double' ? 8 : 4);
      if (type === 'double') b.writeDoubleLE(value);
      else b.writeFloatLE(value);
      return [...b];
    }
    case 'sint32':
    case 'sint64': {
      const n = integer(value, type, path);
      return varint(n >= 0n ? n * 2n : -n * 2n - 1n);
    }
    case 'fixed32':
    case 'sfixed32':
    case 'fixed64':
    case 'sfixed64': {
      const n = integer(value, type, path);
      const b = Buffer.alloc(type.endsWith('32') ? 4 : 8);
      if (type.endsWith('32')) b.writeUInt32LE(Number(n < 0n ? n + 2n ** 32n : n));
      else b.writeBigUInt64LE(n < 0n ? n + 2n ** 64n : n);
      return [...b];
    }
    default:
      if (type in INTEGER_RANGE) return varint(integer(value, type, path));
      throw new Refused(`${path}: the .proto's type ${show(type)} is not one hotpath encodes`);
  }
}

/** A field's value (one element of a repeated field) with its tag. */
function fieldBytes(
  file: ProtoFile,
  field: ProtoField,
  type: string,
  value: unknown,
  path: string,
): number[] {
  const resolved = resolveType(file, type, field.scope);
  if (resolved?.kind === 'message' || EMPTY_TYPES.has(type.replace(/^\./, ''))) {
    const inner =
      resolved?.kind === 'message'
        ? message(file, resolved.name, value, path)
        : message(file, '', value, path);
    return [...tag(field.number, 2), ...varint(BigInt(inner.length)), ...inner];
  }
  const enumValues = resolved?.kind === 'enum' ? file.enums.get(resolved.name) : undefined;
  return [
    ...tag(field.number, wireOf(type, enumValues !== undefined)),
    ...scalar(type, value, path, enumValues),
  ];
}

function encodeField(file: ProtoFile, field: ProtoField, value: unknown, path: string): number[] {
  if (field.map) {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new Refused(
        `${path}: expected an object (a map<${field.map.key}, ${field.map.value}>), got ${show(value)}`,
      );
    const out: number[] = [];
    for (const [k, v] of Object.entries(value)) {
      const key = field.map.key === 'bool' ? k === 'true' : k;
      const keyField = { ...field, number: 1, map: undefined };
      const entry = [
        ...fieldBytes(file, keyField, field.map.key, key, `${path}.${k}`),
        ...fieldBytes(file, { ...keyField, number: 2 }, field.map.value, v, `${path}.${k}`),
      ];
      out.push(...tag(field.number, 2), ...varint(BigInt(entry.length)), ...entry);
    }
    return out;
  }
  if (!field.repeated) return fieldBytes(file, field, field.type, value, path);
  if (!Array.isArray(value))
    throw new Refused(`${path}: expected an array (repeated ${field.type}), got ${show(value)}`);
  const resolved = resolveType(file, field.type, field.scope);
  const packable = resolved?.kind === 'enum' || (resolved === undefined && wireOf(field.type, false) !== 2);
  if (!packable) return value.flatMap((v, k) => fieldBytes(file, field, field.type, v, `${path}[${k}]`));
  const enumValues = resolved?.kind === 'enum' ? file.enums.get(resolved.name) : undefined;
  const packed = value.flatMap((v, k) => scalar(field.type, v, `${path}[${k}]`, enumValues));
  return [...tag(field.number, 2), ...varint(BigInt(packed.length)), ...packed];
}

/** The message `name` (an empty one for ''), encoded from the JSON object `value`. */
function message(file: ProtoFile, name: string, value: unknown, path: string): number[] {
  // a path's dots count the messages it is in: a message nested deeper is refused, not recursed
  if (path.split('.').length > MAX_DEPTH)
    throw new Refused(`${path}: nested more than ${MAX_DEPTH} messages deep`);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Refused(
      `${path}: expected an object (message ${name || 'google.protobuf.Empty'}), got ${show(value)}`,
    );
  const fields = name ? (file.messages.get(name) ?? []) : [];
  const out: number[] = [];
  for (const [key, v] of Object.entries(value)) {
    const field = fields.find((f) => f.name === key || lowerCamel(f.name) === key);
    if (!field)
      throw new Refused(
        `${path}.${key}: message ${name || 'google.protobuf.Empty'} has no field ${show(key)} (its fields: ${fields.map((f) => f.name).join(', ') || 'none'})`,
      );
    if (v !== null) out.push(...encodeField(file, field, v, `${path}.${key}`));
  }
  return out;
}

/**
 * The request bytes of the unary method `method` (`/package.Service/Method`) defined in the
 * .proto text, from the message as JSON text. Throws HP_COMPARE_INVALID_SETTING naming `where`.
 */
export function encodeRequest(protoText: string, method: string, json: string, where: string): Buffer {
  const file = parseProto(protoText);
  const refuse = (why: string) =>
    new HotpathCompareError('HP_COMPARE_INVALID_SETTING', `invalid "message" of ${where}: ${why}`);
  const found = file.methods.find((m) => m.path === method);
  if (!found)
    throw refuse(
      `the .proto defines no method ${show(method)} (its methods: ${file.methods.map((m) => m.path).join(', ') || 'none'})`,
    );
  const input = resolveType(file, found.input, found.scope);
  const empty = EMPTY_TYPES.has(found.input.replace(/^\./, ''));
  if (input?.kind !== 'message' && !empty)
    throw refuse(
      `the method's input type ${show(found.input)} is not a message of the .proto (imports are not read)`,
    );
  try {
    return Buffer.from(
      message(file, input?.kind === 'message' ? input.name : '', JSON.parse(json), 'message'),
    );
  } catch (err) {
    if (err instanceof Refused) throw refuse(err.message);
    throw err;
  }
}
