const COMMA = 44;
const QUOTE = 34;
const BACKSLASH = 92;

/**
 * `Uint8Array.prototype.indexOf`, called as `findByte.call(buf, byte, from)`: the same answer as
 * `buf.indexOf(byte, from)` for a byte value, without Buffer's argument handling in JavaScript.
 * A short log is parsed before V8 optimises anything (see cli-tiering.ts), and there that
 * wrapper cost 3 to 5 times the search itself.
 */
export const findByte = Uint8Array.prototype.indexOf;

/** Value of each byte as a hexadecimal digit, -1 for other bytes (a table: no call per digit). */
const HEX_DIGIT = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX_DIGIT[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX_DIGIT[97 + i] = 10 + i;
  HEX_DIGIT[65 + i] = 10 + i;
}

/**
 * Finds the fields of a CSV line of a V8 log: `starts[i]..ends[i]` for field i. Commas inside
 * double-quoted fields (older V8 versions) do not split; newer versions escape commas as `\x2C`.
 * Returns the number of fields found, at most `starts.length`; the last one then runs to the end.
 */
export function splitFields(
  buf: Buffer,
  start: number,
  end: number,
  starts: Int32Array,
  ends: Int32Array,
): number {
  const max = starts.length;
  let count = 0;
  let pos = start;
  while (count < max) {
    starts[count] = pos;
    if (count === max - 1) {
      ends[count++] = end;
      break;
    }
    let next: number;
    if (pos < end && buf[pos] === QUOTE) {
      // Quoted field: up to the closing quote ("" is an escaped quote), then to the comma.
      let q = pos + 1;
      while (q < end) {
        if (buf[q] === QUOTE) {
          if (q + 1 < end && buf[q + 1] === QUOTE) q += 2;
          else break;
        } else q++;
      }
      next = findByte.call(buf, COMMA, Math.min(q, end));
      if (next >= end) next = -1;
    } else {
      next = findByte.call(buf, COMMA, pos);
      if (next >= end) next = -1;
    }
    if (next === -1) {
      ends[count++] = end;
      break;
    }
    ends[count++] = next;
    pos = next + 1;
    if (pos === end) {
      // Trailing empty field.
      if (count < max) {
        starts[count] = end;
        ends[count++] = end;
      }
      break;
    }
  }
  return count;
}

/**
 * Parses an integer field: decimal, or hexadecimal with `0x`, optionally signed. Returns NaN for
 * anything else (empty, stray characters, more than 20 digits). Values above 2^53 lose precision.
 */
export function parseIntField(buf: Buffer, start: number, end: number): number {
  let pos = start;
  let sign = 1;
  if (pos < end && (buf[pos] === 45 || buf[pos] === 43)) {
    if (buf[pos] === 45) sign = -1;
    pos++;
  }
  if (pos >= end || end - pos > 22) return Number.NaN;
  let value = 0;
  if (end - pos > 2 && buf[pos] === 48 && (buf[pos + 1] === 120 || buf[pos + 1] === 88)) {
    pos += 2;
    for (; pos < end; pos++) {
      // Per digit of every log line: a check here cost 3 % of a short log's (unoptimised) parse.
      // biome-ignore lint/style/noNonNullAssertion: pos < end, a field of a line inside buf, and HEX_DIGIT has all 256 bytes (past them d would be undefined and the value NaN, as for a bad digit)
      const d = HEX_DIGIT[buf[pos]!]!;
      if (d < 0) return Number.NaN;
      value = value * 16 + d;
    }
    return sign * value;
  }
  for (; pos < end; pos++) {
    // biome-ignore lint/style/noNonNullAssertion: pos < end, a field of a line inside buf (past it c would be NaN, and so the value; see the hex loop above)
    const c = buf[pos]! - 48;
    if (c < 0 || c > 9) return Number.NaN;
    value = value * 10 + c;
  }
  return sign * value;
}

/** Parses bare hexadecimal digits (stack frames: `7f12ab`, `0x7f12ab`, `+1a0`, `-40`). NaN when malformed. */
export function parseHexField(buf: Buffer, start: number, end: number): number {
  let pos = start;
  let sign = 1;
  if (pos < end && (buf[pos] === 45 || buf[pos] === 43)) {
    if (buf[pos] === 45) sign = -1;
    pos++;
  }
  if (end - pos > 2 && buf[pos] === 48 && (buf[pos + 1] === 120 || buf[pos + 1] === 88)) pos += 2;
  if (pos >= end || end - pos > 20) return Number.NaN;
  let value = 0;
  for (; pos < end; pos++) {
    // biome-ignore lint/style/noNonNullAssertion: as in parseIntField: pos < end inside buf, HEX_DIGIT has all 256 bytes (past them the value is NaN); every stack frame of every tick comes here
    const d = HEX_DIGIT[buf[pos]!]!;
    if (d < 0) return Number.NaN;
    value = value * 16 + d;
  }
  return sign * value;
}

/** Undoes the V8 log's escapes: `\\`, `\n`, `\r`, `\t`, `\xHH`, `\uHHHH`. */
export function unescapeLogString(text: string): string {
  if (!text.includes('\\')) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== BACKSLASH || i + 1 >= text.length) {
      out += text[i];
      continue;
    }
    const next = text[i + 1];
    if (next === 'n') {
      out += '\n';
      i++;
    } else if (next === 'r') {
      out += '\r';
      i++;
    } else if (next === 't') {
      out += '\t';
      i++;
    } else if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 2, i + 4))) {
      out += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 4), 16));
      i += 3;
    } else if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
      out += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16));
      i += 5;
    } else {
      out += next;
      i++;
    }
  }
  return out;
}

/** A string field: unquoted (`""` → `"`) and unescaped. */
export function stringField(buf: Buffer, start: number, end: number): string {
  if (end - start >= 2 && buf[start] === QUOTE && buf[end - 1] === QUOTE) {
    return unescapeLogString(buf.toString('utf8', start + 1, end - 1).replace(/""/g, '"'));
  }
  return unescapeLogString(buf.toString('utf8', start, end));
}

/** True when bytes start..end equal `word` (ASCII). */
export function fieldEquals(buf: Buffer, start: number, end: number, word: Buffer): boolean {
  if (end - start !== word.length) return false;
  for (let i = 0; i < word.length; i++) if (buf[start + i] !== word[i]) return false;
  return true;
}
