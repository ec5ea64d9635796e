/**
 * HPACK's Huffman code (RFC 7541, Appendix B). The code is canonical: codes of one length are
 * consecutive, in symbol order, and each length starts where the shorter ones end. So the bit
 * length of every symbol (0..255, and 256 = EOS) is all it takes to rebuild every code; the
 * decoder walks bits against the first code of each length.
 */

/** Bit length of each symbol's code, from RFC 7541 Appendix B. */
const LENGTHS: readonly number[] = [
  // 0..31: control characters
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28,
  28, 28, 28, 28, 28,
  // 32..126: printable ASCII
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5,
  6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13,
  // 127..255
  28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21,
  22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23,
  22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25,
  25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  // 256: EOS
  30,
];

const MAX_BITS = 30;
/** Per length: the first code of that length, the number of codes, and where its symbols start. */
const firstCode = new Int32Array(MAX_BITS + 2);
const countOf = new Int32Array(MAX_BITS + 2);
const startOf = new Int32Array(MAX_BITS + 2);
/** Symbols sorted by (length, symbol): the canonical order. */
const sorted = new Uint16Array(257);
/** Per symbol: its code (for the encoder and the tests). */
export const HUFFMAN_CODES = new Uint32Array(257);
export const HUFFMAN_LENGTHS = Uint8Array.from(LENGTHS);

{
  if (LENGTHS.length !== 257) throw new Error(`HPACK Huffman table has ${LENGTHS.length} lengths, not 257`);
  for (const length of LENGTHS) countOf[length] = (countOf[length] ?? 0) + 1;
  let code = 0;
  let start = 0;
  for (let length = 1; length <= MAX_BITS; length++) {
    code = (code + (countOf[length - 1] ?? 0)) << 1;
    firstCode[length] = code;
    startOf[length] = start;
    start += countOf[length] ?? 0;
  }
  const next = Int32Array.from(firstCode);
  const fill = Int32Array.from(startOf);
  for (let length = 1; length <= MAX_BITS; length++) {
    for (let symbol = 0; symbol < 257; symbol++) {
      if (LENGTHS[symbol] !== length) continue;
      HUFFMAN_CODES[symbol] = next[length] ?? 0;
      next[length] = (next[length] ?? 0) + 1;
      sorted[fill[length] ?? 0] = symbol;
      fill[length] = (fill[length] ?? 0) + 1;
    }
  }
}

/**
 * Decodes `src[start..end)` into `out` from `at`; returns the end offset in `out`, or -1 when the
 * bytes are not a valid Huffman string (EOS inside, padding longer than 7 bits or not all ones).
 * `out` must have room for `(end - start) * 8 / 5` bytes (the shortest code is 5 bits).
 */
export function huffmanDecode(src: Uint8Array, start: number, end: number, out: Buffer, at: number): number {
  let code = 0;
  let length = 0;
  let o = at;
  for (let i = start; i < end; i++) {
    const byte = src[i] as number;
    for (let bit = 7; bit >= 0; bit--) {
      code = (code << 1) | ((byte >> bit) & 1);
      length++;
      const offset = code - (firstCode[length] as number);
      if (offset >= 0 && offset < (countOf[length] as number)) {
        const symbol = sorted[(startOf[length] as number) + offset] as number;
        if (symbol === 256) return -1;
        out[o++] = symbol;
        code = 0;
        length = 0;
      } else if (length >= MAX_BITS) return -1;
    }
  }
  // Padding: at most 7 bits, the most significant bits of EOS (all ones).
  if (length > 7 || code !== (1 << length) - 1) return -1;
  return o;
}

/** The Huffman-encoded length of `src` in bytes. */
export function huffmanLength(src: Uint8Array): number {
  let bits = 0;
  for (let i = 0; i < src.length; i++) bits += HUFFMAN_LENGTHS[src[i] as number] as number;
  return (bits + 7) >> 3;
}

/** Encodes `src` into `out` at `at`; returns the end offset. */
export function huffmanEncode(src: Uint8Array, out: Uint8Array, at: number): number {
  let o = at;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < src.length; i++) {
    const symbol = src[i] as number;
    const length = HUFFMAN_LENGTHS[symbol] as number;
    const code = HUFFMAN_CODES[symbol] as number;
    // Feed the code in pieces of at most 16 bits so `acc` never exceeds 31 bits.
    let remaining = length;
    while (remaining > 0) {
      const take = Math.min(remaining, 16);
      remaining -= take;
      acc = (acc << take) | ((code >>> remaining) & ((1 << take) - 1));
      bits += take;
      while (bits >= 8) {
        bits -= 8;
        out[o++] = (acc >>> bits) & 0xff;
      }
      acc &= (1 << bits) - 1;
    }
  }
  if (bits > 0) out[o++] = ((acc << (8 - bits)) | ((1 << (8 - bits)) - 1)) & 0xff;
  return o;
}
