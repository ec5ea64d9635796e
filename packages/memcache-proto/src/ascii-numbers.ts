import { byteAt } from './checked-index.js';

/**
 * Decimal number parsing straight from protocol bytes, following memcached's safe_strto*
 * rules: an optional sign, digits, nothing else; values out of range are rejected.
 */

const MAX_U64 = 0xffff_ffff_ffff_ffffn;

/** Unsigned 32-bit (flags, verbosity); -1 when invalid. */
export function parseU32(buf: Buffer, start: number, end: number): number {
  let i = start;
  if (i < end && buf[i] === 43 /* + */) i++;
  if (i === end || end - i > 10) return -1;
  let value = 0;
  for (; i < end; i++) {
    const d = byteAt(buf, i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value > 0xffff_ffff ? -1 : value;
}

/** Signed 32-bit (exptime, lengths); NaN when invalid. */
export function parseI32(buf: Buffer, start: number, end: number): number {
  let i = start;
  let negative = false;
  if (i < end && (buf[i] === 45 /* - */ || buf[i] === 43)) {
    negative = buf[i] === 45;
    i++;
  }
  if (i === end || end - i > 10) return Number.NaN;
  let value = 0;
  for (; i < end; i++) {
    const d = byteAt(buf, i) - 48;
    if (d < 0 || d > 9) return Number.NaN;
    value = value * 10 + d;
  }
  if (negative) value = -value;
  return value > 0x7fff_ffff || value < -0x8000_0000 ? Number.NaN : value;
}

/** Unsigned 64-bit (cas uniques, incr/decr deltas); -1n when invalid. */
export function parseU64(buf: Buffer, start: number, end: number): bigint {
  let i = start;
  if (i < end && buf[i] === 43) i++;
  if (i === end || end - i > 20) return -1n;
  let small = 0;
  for (let j = i; j < end; j++) {
    const d = byteAt(buf, j) - 48;
    if (d < 0 || d > 9) return -1n;
    small = small * 10 + d;
  }
  if (small <= Number.MAX_SAFE_INTEGER) return BigInt(small);
  const value = BigInt(buf.toString('latin1', i, end));
  return value > MAX_U64 ? -1n : value;
}

/** Client flags as memcached 1.6 reads them: any unsigned 64-bit number, kept modulo 2^32. -1 when invalid. */
export function parseFlags(buf: Buffer, start: number, end: number): number {
  if (end - start <= 10) {
    const small = parseU32(buf, start, end);
    if (small >= 0 || end - start < 10) return small;
  }
  const wide = parseU64(buf, start, end);
  return wide < 0n ? -1 : Number(wide & 0xffff_ffffn);
}
