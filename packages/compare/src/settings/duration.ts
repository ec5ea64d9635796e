/** Longest duration a Node timer can hold (2^31 - 1 ms), in seconds. */
export const MAX_TIMER_SECONDS = 2_147_483;

/** Matched against trimmed text: linear (no `\s*` on both sides of the optional unit). */
const DURATION = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h)?$/;
/** The longest duration text read: longer is no duration, refused before the pattern sees it. */
const MAX_DURATION_TEXT = 64;
const FACTOR = { ms: 0.001, s: 1, m: 60, h: 3600 } as const;

/**
 * Parses a duration in seconds: a number (seconds) or text `10`, `10s`, `500ms`, `2m`, `1h`.
 * Returns undefined when the text is not a duration.
 */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (value.length > MAX_DURATION_TEXT) return undefined;
  const match = DURATION.exec(value.trim());
  if (!match) return undefined;
  const unit = (match[2] ?? 's') as keyof typeof FACTOR;
  return Number(match[1]) * FACTOR[unit];
}

/** Seconds as the shortest readable text: 10 → "10 s", 0.5 → "500 ms", 120 → "2 min". */
export function formatDuration(seconds: number): string {
  if (seconds > 0 && seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds >= 120 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
