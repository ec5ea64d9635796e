import type { Token } from './tokens.js';

// Small queries over a token list (source/tokens.ts) shared by init's readers: what a token is,
// where a bracket closes, a call's top-level arguments, a key of an object literal. Nested
// brackets are jumped over (the tokenizer paired them), so each query costs the top-level
// tokens it reads, at most SCAN, however deep the text nests.

export const id = (t: Token | undefined, text?: string): boolean =>
  t?.kind === 'id' && (text === undefined || t.text === text);
export const punct = (t: Token | undefined, text: string): boolean => t?.kind === 'punct' && t.text === text;
export const str = (t: Token | undefined): string | undefined => (t?.kind === 'str' ? t.text : undefined);

/** At most this many tokens of one call's arguments or one object literal are read. */
export const SCAN = 256;

/** The index of the token closing the bracket opened at `open`, or the end (the tokenizer paired them). */
export function closing(tokens: Token[], open: number): number {
  const t = tokens[open];
  return t?.kind === 'punct' && t.pair !== undefined ? t.pair : tokens.length;
}

/** The index after the bracketed group opened at `i`, or `i + 1` for any other token. */
export function skip(tokens: Token[], i: number): number {
  const t = tokens[i];
  return t?.kind === 'punct' && (t.text === '(' || t.text === '[' || t.text === '{') && t.pair !== undefined
    ? t.pair + 1
    : i + 1;
}

/**
 * The top-level arguments of the call whose `(` is at `open`, each as its token range. Nested
 * brackets are jumped over (the tokenizer paired them): the cost is the top-level tokens read,
 * at most SCAN, however deep the arguments nest.
 */
export function callArguments(tokens: Token[], open: number): [number, number][] {
  const end = closing(tokens, open);
  const args: [number, number][] = [];
  let start = open + 1;
  let steps = 0;
  let i = open + 1;
  for (; i < end && steps < SCAN; i = skip(tokens, i), steps++) {
    if (punct(tokens[i], ',')) {
      args.push([start, i]);
      start = i + 1;
    }
  }
  const last = Math.min(i, end);
  if (start < last) args.push([start, last]);
  return args;
}

/** `key: 'value'` at the top level of the object literal whose `{` is at `open`. */
export function objectKey(tokens: Token[], open: number, keys: readonly string[]): string | undefined {
  if (!punct(tokens[open], '{')) return undefined;
  const end = closing(tokens, open);
  let steps = 0;
  for (let i = open + 1; i < end && steps < SCAN; i = skip(tokens, i), steps++) {
    const t = tokens[i];
    if (t?.kind === 'id' && keys.includes(t.text) && punct(tokens[i + 1], ':')) {
      const value = tokens[i + 2];
      if (value?.kind === 'str') return value.text;
      if (punct(value, '[') && str(tokens[i + 3]) !== undefined) return str(tokens[i + 3]);
    }
  }
  return undefined;
}
