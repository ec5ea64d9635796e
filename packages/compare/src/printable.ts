// Text hotpath prints that came from a file, a server or git (a results file's keys, server
// output, git's stderr, a path in a cloned repository) is data: it must not reach a terminal or
// the workflow log as control characters, which set a terminal's title (OSC), move the cursor or
// erase lines (CSI), or rewrite what a line seems to say (carriage return, bidi overrides).
// Top-level, beside errors.ts, so that settings, measure, shard, render and init may all use it.

/**
 * What is escaped: C0 controls (U+0000–U+001F) but a line feed where lines are legitimate, DEL,
 * the C1 controls (U+0080–U+009F: U+009B is a one-character CSI, U+009D an OSC), the line and
 * paragraph separators U+2028/U+2029 (line breaks to some terminals and editors), and the bidi
 * controls — embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the
 * direction marks (U+200E, U+200F, U+061C) — which reorder how a line reads.
 */
const CONTROL =
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const CONTROL_OR_NEWLINE =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

const escaped = (char: string): string =>
  SHORT[char] ?? `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`;

/**
 * `text` with every control character written as an escape (`\u001b`, `\u009b`, `\t`, `\r`,
 * `\n`), as JSON writes it, so that it prints as what it is: one visible line (or, with
 * `newlines`, lines) that cannot act on the terminal or the log. Everything else is kept as it
 * is, a backslash included: the result is for reading, not for parsing back.
 */
export function printable(text: string, options: { newlines?: boolean } = {}): string {
  return text.replace(options.newlines ? CONTROL : CONTROL_OR_NEWLINE, escaped);
}

/**
 * `text` with every character printable() escapes (line feeds included) replaced by a space:
 * for a terminal line where an escape would only be noise (the report's table, a progress line).
 */
export function inert(text: string): string {
  return text.replace(CONTROL_OR_NEWLINE, ' ');
}
