/**
 * Statistics of a per-second series (requests or bytes in each whole second of a run), as
 * autocannon shows them: mean, population stdev, min, max and exact nearest-rank percentiles
 * over the seconds.
 */
export interface SeriesStats {
  /** Whole seconds in the series. */
  samples: number;
  mean: number;
  stdev: number;
  min: number;
  max: number;
  p1: number;
  p2_5: number;
  p10: number;
  p50: number;
  p90: number;
  p97_5: number;
  p99: number;
}

const PERCENTILES = [
  ['p1', 1],
  ['p2_5', 2.5],
  ['p10', 10],
  ['p50', 50],
  ['p90', 90],
  ['p97_5', 97.5],
  ['p99', 99],
] as const;

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Nearest-rank percentile of ascending `sorted`: the smallest sample with at least `p`% of
 * the samples at or below it (the same rule HdrHistogram uses for latencies).
 */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? 0; // (rank is 1..length)
}

export function seriesStats(series: readonly number[]): SeriesStats {
  const n = series.length;
  const sorted = [...series].sort((a, b) => a - b);
  let sum = 0;
  for (const x of series) sum += x;
  const mean = n === 0 ? 0 : sum / n;
  let squares = 0;
  for (const x of series) squares += (x - mean) * (x - mean);
  const stats: SeriesStats = {
    samples: n,
    mean: round2(mean),
    stdev: n === 0 ? 0 : round2(Math.sqrt(squares / n)),
    min: sorted[0] ?? 0, // 0 for no samples, as the other figures
    max: sorted[n - 1] ?? 0,
    p1: 0,
    p2_5: 0,
    p10: 0,
    p50: 0,
    p90: 0,
    p97_5: 0,
    p99: 0,
  };
  for (const [key, p] of PERCENTILES) stats[key] = nearestRank(sorted, p);
  return stats;
}
