// A .proto file as hotpath reads it: a one-pass tokenizer (comments and strings skipped, no
// regular expression over the file) and a recursive reader of what a unary call needs — the
// package, the messages with their fields (nested ones, oneofs, maps), the enums and the
// services' methods. Options, reservations, extensions and imports are passed over.

/** A message's field as written: `repeated Type name = 3;` or `map<K, V> name = 3;`. */
export interface ProtoField {
  name: string;
  number: number;
  /** The type as written (a scalar, or a message or enum name to resolve from `scope`). */
  type: string;
  repeated: boolean;
  map?: { key: string; value: string };
  /** The full name of the message the field is in (where its type names are resolved from). */
  scope: string;
}

export interface ProtoMethod {
  /** `/package.Service/Method`. */
  path: string;
  input: string;
  output: string;
  streaming: boolean;
  /** The full name of the service (where input and output are resolved from). */
  scope: string;
}

export interface ProtoFile {
  package: string;
  /** Messages by full name (`package.Outer.Inner`). */
  messages: Map<string, ProtoField[]>;
  /** Enums by full name: value name → number. */
  enums: Map<string, Map<string, number>>;
  methods: ProtoMethod[];
}

const MAX_TEXT = 512 * 1024;
const PUNCTUATION = '{}();=<>,[]-';

/** The tokens of a .proto file: names (dotted), numbers, punctuation; comments and strings skipped. */
export function protoTokens(text: string): string[] {
  const tokens: string[] = [];
  const n = Math.min(text.length, MAX_TEXT);
  let i = 0;
  while (i < n) {
    const c = text[i] as string;
    if (c === '/' && text[i + 1] === '/') {
      while (i < n && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      tokens.push('""');
      i = end < 0 ? n : end + 1;
    } else if (/[\w.]/.test(c)) {
      let j = i + 1;
      while (j < n && /[\w.]/.test(text[j] as string)) j++;
      tokens.push(text.slice(i, j));
      i = j;
    } else {
      if (PUNCTUATION.includes(c)) tokens.push(c);
      i++;
    }
  }
  return tokens;
}

/** Reads the tokens into a ProtoFile (lenient: what it cannot read it passes over). */
export function parseProto(text: string): ProtoFile {
  const t = protoTokens(text);
  const file: ProtoFile = { package: '', messages: new Map(), enums: new Map(), methods: [] };
  let i = 0;
  const at = (k = 0) => t[i + k] ?? '';
  const skipStatement = () => {
    let depth = 0;
    while (i < t.length) {
      const w = t[i++];
      if (w === '{') depth++;
      else if (w === '}' && --depth <= 0) return;
      else if (w === ';' && depth === 0) return;
    }
  };
  const full = (scope: string, name: string) => (scope ? `${scope}.${name}` : name);
  const readEnum = (name: string) => {
    const values = new Map<string, number>();
    file.enums.set(name, values);
    i++; // {
    while (i < t.length && at() !== '}') {
      if (/^[A-Za-z_]\w*$/.test(at()) && at(1) === '=' && at() !== 'option' && at() !== 'reserved') {
        const negative = at(2) === '-';
        const number = Number(at(negative ? 3 : 2));
        if (Number.isInteger(number)) values.set(at(), negative ? -number : number);
      }
      skipStatement();
    }
    i++; // }
  };
  const readField = (scope: string, fields: ProtoField[]) => {
    const repeated = at() === 'repeated';
    if (repeated || at() === 'optional' || at() === 'required') i++;
    let type = 'map';
    let map: ProtoField['map'];
    if (at() === 'map' && at(1) === '<') {
      map = { key: at(2), value: at(4) };
      i += 6; // map < K , V >
    } else {
      type = at();
      i++;
    }
    const [name, eq, num] = [at(), at(1), at(2)];
    if (eq === '=' && /^\d+$/.test(num) && /^[A-Za-z_]\w*$/.test(name))
      fields.push({
        name,
        number: Number(num),
        type,
        repeated: repeated || map !== undefined,
        scope,
        ...(map ? { map } : {}),
      });
    skipStatement();
  };
  const readMessage = (name: string) => {
    const fields: ProtoField[] = [];
    file.messages.set(name, fields);
    i++; // {
    while (i < t.length && at() !== '}') {
      const w = at();
      if ((w === 'message' || w === 'enum') && at(2) === '{') {
        const inner = full(name, at(1));
        i += 2;
        if (w === 'message') readMessage(inner);
        else readEnum(inner);
      } else if (w === 'oneof' && at(2) === '{') {
        i += 3;
        while (i < t.length && at() !== '}') readField(name, fields);
        i++;
      } else if (['option', 'reserved', 'extensions', 'extend', 'group', ';'].includes(w)) skipStatement();
      else readField(name, fields);
    }
    i++; // }
  };
  const readService = (name: string) => {
    i++; // {
    while (i < t.length && at() !== '}') {
      if (at() === 'rpc' && at(2) === '(') {
        const method = at(1);
        i += 3;
        const inStream = at() === 'stream';
        if (inStream) i++;
        const input = at();
        while (i < t.length && at() !== '(') i++;
        i++;
        const outStream = at() === 'stream';
        if (outStream) i++;
        const output = at();
        if (/^\w+$/.test(method))
          file.methods.push({
            path: `/${name}/${method}`,
            input,
            output,
            streaming: inStream || outStream,
            scope: name,
          });
        while (i < t.length && at() !== ')') i++;
        i++;
        if (at() === '{') skipStatement();
        else if (at() === ';') i++;
      } else skipStatement();
    }
    i++; // }
  };
  while (i < t.length) {
    const w = at();
    if (w === 'package') {
      file.package = at(1);
      skipStatement();
    } else if ((w === 'message' || w === 'enum' || w === 'service') && at(2) === '{') {
      const name = full(file.package, at(1));
      i += 2;
      if (w === 'message') readMessage(name);
      else if (w === 'enum') readEnum(name);
      else readService(name);
    } else skipStatement();
  }
  return file;
}

/**
 * The message or enum a type name means from `scope` (protobuf's rule: the innermost scope
 * first, then outwards; a leading dot is absolute). Undefined when the file defines none.
 */
export function resolveType(
  file: ProtoFile,
  type: string,
  scope: string,
): { kind: 'message' | 'enum'; name: string } | undefined {
  const has = (name: string) =>
    file.messages.has(name) ? ('message' as const) : file.enums.has(name) ? ('enum' as const) : undefined;
  if (type.startsWith('.')) {
    const kind = has(type.slice(1));
    return kind ? { kind, name: type.slice(1) } : undefined;
  }
  for (let s = scope; ; s = s.includes('.') ? s.slice(0, s.lastIndexOf('.')) : '') {
    const name = s ? `${s}.${type}` : type;
    const kind = has(name);
    if (kind) return { kind, name };
    if (!s) return undefined;
  }
}
