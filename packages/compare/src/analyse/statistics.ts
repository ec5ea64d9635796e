/** Base-vs-head change of one metric, with a 95 % confidence interval on the relative change. */
export interface MetricComparison {
  base: number;
  head: number;
  /** (head - base) / base; NaN when base is 0. */
  change: number;
  /** 95 % confidence interval of the relative change. */
  ci: [number, number];
  /** The interval excludes 0. */
  significant: boolean;
}

function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

function variance(values: readonly number[], m: number): number {
  if (values.length < 2) return 0;
  let sum = 0;
  for (const v of values) sum += (v - m) ** 2;
  return sum / (values.length - 1);
}

/** Two-sided 97.5 % quantile of Student's t for `df` degrees of freedom. */
export function tQuantile975(df: number): number {
  const table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];
  const at = (i: number) => table[i] ?? Number.POSITIVE_INFINITY;
  if (!(df > 0)) return Number.POSITIVE_INFINITY;
  if (df <= table.length) {
    const lo = Math.floor(df);
    const hi = Math.ceil(df);
    if (lo === hi) return at(lo - 1);
    const a = lo >= 1 ? at(lo - 1) : 12.706 * 2;
    return a + (at(hi - 1) - a) * (df - lo);
  }
  // Cornish-Fisher expansion around the normal quantile, accurate to ~1e-3 for df > 10.
  const z = 1.959964;
  return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2);
}

/** Difference of means (head - base) with a 95 % Welch interval, in the metric's own unit. */
export interface Difference {
  base: number;
  head: number;
  diff: number;
  ci: [number, number];
}

/** Welch's t interval on the difference of means head - base. */
export function differenceOfMeans(base: readonly number[], head: readonly number[]): Difference {
  if (base.length === 0 || head.length === 0) {
    throw new RangeError(`need at least one sample per side, got base=${base.length} head=${head.length}`);
  }
  const mb = mean(base);
  const mh = mean(head);
  const vb = variance(base, mb) / base.length;
  const vh = variance(head, mh) / head.length;
  const se = Math.sqrt(vb + vh);
  const df =
    vb + vh === 0
      ? Number.POSITIVE_INFINITY
      : (vb + vh) ** 2 / (vb ** 2 / (base.length - 1 || 1) + vh ** 2 / (head.length - 1 || 1));
  const t = base.length < 2 || head.length < 2 ? Number.POSITIVE_INFINITY : tQuantile975(df);
  const diff = mh - mb;
  // With fewer than two samples a side there is no interval: it spans everything.
  const half = base.length < 2 || head.length < 2 ? Number.POSITIVE_INFINITY : se === 0 ? 0 : t * se;
  return { base: mb, head: mh, diff, ci: [diff - half, diff + half] };
}

/**
 * Relative change head vs base with a 95 % interval. Throughput, latency and CPU time are
 * positive and vary multiplicatively (a noisy round is 2x off, not 200 units off), so when
 * every sample is positive the comparison is Welch's interval on their logarithms, turned back
 * into a ratio: `base` and `head` are geometric means, `change` is their ratio minus one, and a
 * 40x difference
 * measured over two rounds is as significant as it looks. Otherwise (zeros or negatives) it is
 * Welch's interval on the difference of means, relative to the base mean.
 */
export function compareSamples(base: readonly number[], head: readonly number[]): MetricComparison {
  if (base.length > 0 && head.length > 0 && [...base, ...head].every((v) => v > 0)) {
    const d = differenceOfMeans(base.map(Math.log), head.map(Math.log));
    const ci: [number, number] = [Math.expm1(d.ci[0]), Math.expm1(d.ci[1])];
    return {
      base: Math.exp(d.base),
      head: Math.exp(d.head),
      change: Math.expm1(d.diff),
      ci,
      significant: ci[0] > 0 || ci[1] < 0,
    };
  }
  const d = differenceOfMeans(base, head);
  const mb = d.base;
  const change = mb === 0 ? Number.NaN : d.diff / mb;
  const ci: [number, number] = mb === 0 ? [Number.NaN, Number.NaN] : [d.ci[0] / mb, d.ci[1] / mb];
  if (mb < 0) ci.reverse();
  return { base: mb, head: d.head, change, ci, significant: ci[0] > 0 || ci[1] < 0 };
}
