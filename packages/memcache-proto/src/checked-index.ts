import { HotpathMcError } from './errors.js';

/**
 * Reads of typed arrays at an index the caller's own bounds already guarantee: a token slot
 * below MAX_TOKENS, a header field of the chunk a live handle names, a byte before a line's end.
 * Under `noUncheckedIndexedAccess` such a read is `number | undefined`; these return the number
 * and throw HP_MC_INTERNAL when the index is out of range after all (a bug here, never bad
 * input). One function per array type keeps each element load monomorphic, and each is small
 * enough for V8 to inline, where a typed-array load is already bounds-checked: the undefined
 * test then costs nothing.
 */

export function byteAt(bytes: Uint8Array, i: number): number {
  return bytes[i] ?? outOfRange(bytes, i);
}

export function int32At(words: Int32Array, i: number): number {
  return words[i] ?? outOfRange(words, i);
}

export function uint32At(words: Uint32Array, i: number): number {
  return words[i] ?? outOfRange(words, i);
}

export function float64At(doubles: Float64Array, i: number): number {
  return doubles[i] ?? outOfRange(doubles, i);
}

/** Adds delta to doubles[i] (per-LRU counters). */
export function addAt(doubles: Float64Array, i: number, delta: number): void {
  doubles[i] = float64At(doubles, i) + delta;
}

/** Kept out of the readers above so that they stay small enough to inline (V8's small-function limit). */
function outOfRange(array: ArrayLike<number>, i: number): never {
  throw internalError(`index ${i} outside a ${array.constructor.name} of ${array.length}`);
}

/** The error for a broken invariant: something this package's own code guarantees did not hold. */
export function internalError(what: string): HotpathMcError {
  return new HotpathMcError('HP_MC_INTERNAL', `internal invariant broken: ${what}`);
}
