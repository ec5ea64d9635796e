// A JavaScript/TypeScript tokenizer just good enough for `hotpath init` to read how a server
// registers and mounts its routes: identifiers, string literals (template literals without
// `${…}` count as strings), single punctuation characters and `=>`. Comments, numbers and regular
// expression literals are skipped. It is one pass over the text, so its time is linear in the
// text's length whatever the text is — the repository is hostile data, and a regular expression
// over a whole source file is where backtracking hides.

export type Token =
  | { kind: 'id'; text: string }
  | { kind: 'str'; text: string }
  /** A template literal with `${…}` in it: a string whose value is not known. */
  | { kind: 'tpl' }
  /** `pair`: the index of the matching bracket, for `(`, `[`, `{` and their closers. */
  | { kind: 'punct'; text: string; pair?: number };

const isIdStart = (c: number): boolean =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 36 || c === 95 || c > 127;
const isIdPart = (c: number): boolean => isIdStart(c) || (c >= 48 && c <= 57);
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** A string's value: its escapes of quotes and backslashes undone, the rest kept as written. */
const unescaped = (raw: string): string => raw.replace(/\\(.)/g, '$1');

/** Whether a `/` after `prev` starts a regular expression literal (not a division). */
function regexAllowed(prev: Token | undefined): boolean {
  if (prev === undefined) return true;
  if (prev.kind === 'str' || prev.kind === 'tpl') return false;
  if (prev.kind === 'id') return prev.text === 'return' || prev.text === 'typeof' || prev.text === 'case';
  return prev.text !== ')' && prev.text !== ']' && prev.text !== '}';
}

/** The tokens of `text`, at most `limit` of them. */
export function tokenize(text: string, limit = 400_000): Token[] {
  const tokens: Token[] = [];
  const opened: number[] = [];
  const n = text.length;
  let i = 0;
  while (i < n && tokens.length < limit) {
    const c = text.charCodeAt(i);
    if (c <= 32) {
      i++;
    } else if (c === 47 && text.charCodeAt(i + 1) === 47) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end + 1;
    } else if (c === 47 && text.charCodeAt(i + 1) === 42) {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (isIdStart(c)) {
      const start = i;
      while (i < n && isIdPart(text.charCodeAt(i))) i++;
      tokens.push({ kind: 'id', text: text.slice(start, i) });
    } else if (isDigit(c)) {
      while (i < n && (isIdPart(text.charCodeAt(i)) || text.charCodeAt(i) === 46)) i++;
      tokens.push({ kind: 'punct', text: '0' });
    } else if (c === 34 || c === 39) {
      const start = ++i;
      while (i < n && text.charCodeAt(i) !== c && text.charCodeAt(i) !== 10)
        i += text.charCodeAt(i) === 92 ? 2 : 1;
      tokens.push({ kind: 'str', text: unescaped(text.slice(start, Math.min(i, n))) });
      i++;
    } else if (c === 96) {
      const start = ++i;
      let interpolated = false;
      while (i < n && text.charCodeAt(i) !== 96) {
        if (text.charCodeAt(i) === 36 && text.charCodeAt(i + 1) === 123) interpolated = true;
        i += text.charCodeAt(i) === 92 ? 2 : 1;
      }
      tokens.push(
        interpolated ? { kind: 'tpl' } : { kind: 'str', text: unescaped(text.slice(start, Math.min(i, n))) },
      );
      i++;
    } else if (c === 47 && regexAllowed(tokens.at(-1))) {
      // A regular expression literal: to its closing `/` outside a character class, on one line.
      i++;
      let inClass = false;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 10) break;
        if (d === 92) i++;
        else if (d === 91) inClass = true;
        else if (d === 93) inClass = false;
        else if (d === 47 && !inClass) break;
        i++;
      }
      i++;
      while (i < n && isIdPart(text.charCodeAt(i))) i++;
      tokens.push({ kind: 'punct', text: '0' });
    } else if (c === 61 && text.charCodeAt(i + 1) === 62) {
      tokens.push({ kind: 'punct', text: '=>' });
      i += 2;
    } else {
      const char = text[i] as string;
      const token: Token = { kind: 'punct', text: char };
      if (char === '(' || char === '[' || char === '{') opened.push(tokens.length);
      else if (char === ')' || char === ']' || char === '}') {
        const at = opened.pop();
        const open = at === undefined ? undefined : tokens[at];
        if (at !== undefined && open?.kind === 'punct') {
          open.pair = tokens.length;
          token.pair = at;
        }
      }
      tokens.push(token);
      i++;
    }
  }
  return tokens;
}
