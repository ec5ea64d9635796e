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
/** Nested messages read at most this deep. */
const MAX_NESTING = 32;

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

/** The reader over one file's tokens: a cursor and one method per kind of block. */
class ProtoReader {
  private i = 0;
  /** Messages open around the cursor: deeper ones are passed over (no recursion without end). */
  private depth = 0;
  readonly file: ProtoFile = { package: '', messages: new Map(), enums: new Map(), methods: [] };

  constructor(private readonly t: string[]) {}

  private at(k = 0): string {
    return this.t[this.i + k] ?? '';
  }

  private get more(): boolean {
    return this.i < this.t.length && this.at() !== '}';
  }

  /** Past the statement or block that starts here (`;`, or its `{ … }`). */
  private skipStatement(): void {
    let depth = 0;
    while (this.i < this.t.length) {
      const w = this.t[this.i++];
      if (w === '{') depth++;
      else if (w === '}' && --depth <= 0) return;
      else if (w === ';' && depth === 0) return;
    }
  }

  read(): ProtoFile {
    while (this.i < this.t.length) {
      const w = this.at();
      if (w === 'package') {
        this.file.package = this.at(1);
        this.skipStatement();
      } else if ((w === 'message' || w === 'enum' || w === 'service') && this.at(2) === '{') {
        const name = this.file.package ? `${this.file.package}.${this.at(1)}` : this.at(1);
        this.i += 2;
        if (w === 'message') this.message(name);
        else if (w === 'enum') this.enumeration(name);
        else this.service(name);
      } else this.skipStatement();
    }
    return this.file;
  }

  private enumeration(name: string): void {
    const values = new Map<string, number>();
    this.file.enums.set(name, values);
    this.i++; // {
    while (this.more) {
      if (/^[A-Za-z_]\w*$/.test(this.at()) && this.at(1) === '=') {
        const negative = this.at(2) === '-';
        const number = Number(this.at(negative ? 3 : 2));
        if (Number.isInteger(number)) values.set(this.at(), negative ? -number : number);
      }
      this.skipStatement();
    }
    this.i++; // }
  }

  private field(scope: string, fields: ProtoField[]): void {
    const repeated = this.at() === 'repeated';
    if (repeated || this.at() === 'optional' || this.at() === 'required') this.i++;
    let type = 'map';
    let map: ProtoField['map'];
    if (this.at() === 'map' && this.at(1) === '<') {
      map = { key: this.at(2), value: this.at(4) };
      this.i += 6; // map < K , V >
    } else {
      type = this.at();
      this.i++;
    }
    const [name, eq, num] = [this.at(), this.at(1), this.at(2)];
    if (eq === '=' && /^\d+$/.test(num) && /^[A-Za-z_]\w*$/.test(name))
      fields.push({
        name,
        number: Number(num),
        type,
        repeated: repeated || map !== undefined,
        scope,
        ...(map ? { map } : {}),
      });
    this.skipStatement();
  }

  private message(name: string): void {
    const fields: ProtoField[] = [];
    this.file.messages.set(name, fields);
    this.i++; // {
    while (this.more) {
      const w = this.at();
      if ((w === 'message' || w === 'enum') && this.at(2) === '{' && this.depth >= MAX_NESTING)
        this.skipStatement();
      else if ((w === 'message' || w === 'enum') && this.at(2) === '{') {
        const inner = `${name}.${this.at(1)}`;
        this.i += 2;
        this.depth++;
        if (w === 'message') this.message(inner);
        else this.enumeration(inner);
        this.depth--;
      } else if (w === 'oneof' && this.at(2) === '{') {
        this.i += 3;
        while (this.more) this.field(name, fields);
        this.i++;
      } else if (['option', 'reserved', 'extensions', 'extend', 'group', ';'].includes(w))
        this.skipStatement();
      else this.field(name, fields);
    }
    this.i++; // }
  }

  /** After `(`: the type, and whether `stream` came before it; the cursor past the `)`. */
  private argument(): { type: string; stream: boolean } {
    const stream = this.at() === 'stream';
    if (stream) this.i++;
    const type = this.at();
    while (this.i < this.t.length && this.at() !== ')') this.i++;
    this.i++;
    return { type, stream };
  }

  private service(name: string): void {
    this.i++; // {
    while (this.more) {
      if (this.at() !== 'rpc' || this.at(2) !== '(') {
        this.skipStatement();
        continue;
      }
      const method = this.at(1);
      this.i += 3;
      const input = this.argument();
      while (this.i < this.t.length && this.at() !== '(' && this.at() !== ';' && this.at() !== '}') this.i++;
      if (this.at() !== '(') continue;
      this.i++;
      const output = this.argument();
      if (/^\w+$/.test(method))
        this.file.methods.push({
          path: `/${name}/${method}`,
          input: input.type,
          output: output.type,
          streaming: input.stream || output.stream,
          scope: name,
        });
      if (this.at() === '{') this.skipStatement();
      else if (this.at() === ';') this.i++;
    }
    this.i++; // }
  }
}

/** Reads a .proto's text into a ProtoFile (lenient: what it cannot read it passes over). */
export function parseProto(text: string): ProtoFile {
  return new ProtoReader(protoTokens(text)).read();
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
