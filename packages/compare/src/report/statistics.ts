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

/** ln Γ(x) (Lanczos approximation, |error| < 2e-10 for x > 0). */
function logGamma(x: number): number {
  const g = [
    676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  let a = 0.99999999999980993;
  const t = x - 1 + 7.5;
  for (const [i, gi] of g.entries()) a += gi / (x - 1 + i + 1);
  return 0.5 * Math.log(2 * Math.PI) + (x - 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the regularised incomplete beta function (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-14) break;
  }
  return h;
}

/** Regularised incomplete beta I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2)
    ? (front * betaFraction(a, b, x)) / a
    : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T <= t) for Student's t with `df` degrees of freedom. */
export function tCdf(t: number, df: number): number {
  if (!Number.isFinite(t)) return t > 0 ? 1 : 0;
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The `p` quantile of Student's t with `df` degrees of freedom (0 < p < 1). */
export function tQuantile(p: number, df: number): number {
  if (!(df > 0)) return p >= 0.5 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  if (p === 0.5) return 0;
  if (p < 0.5) return -tQuantile(1 - p, df);
  let lo = 0;
  let hi = 1;
  while (tCdf(hi, df) < p && hi < 1e12) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * Math.max(1, hi); i++) {
    const mid = (lo + hi) / 2;
    if (tCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** A paired comparison: the mean of per-pair differences with a two-sided interval. */
export interface PairedDifference {
  /** Pairs used. */
  n: number;
  mean: number;
  /** Standard deviation of the differences. */
  sd: number;
  /** Two-sided interval at level 1 - alpha (infinite with fewer than two pairs). */
  ci: [number, number];
  /** Two-sided p-value of "mean difference = 0" (1 with fewer than two pairs). */
  p: number;
}

/** Student's paired t interval on differences `d` (head − base per pair), at level 1 − alpha. */
export function pairedDifference(d: readonly number[], alpha = 0.05): PairedDifference {
  const n = d.length;
  if (n === 0) throw new RangeError('need at least one pair');
  const m = mean(d);
  if (n < 2) return { n, mean: m, sd: 0, ci: [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY], p: 1 };
  const sd = Math.sqrt(variance(d, m));
  const se = sd / Math.sqrt(n);
  if (se === 0) return { n, mean: m, sd, ci: [m, m], p: m === 0 ? 1 : 0 };
  const half = tQuantile(1 - alpha / 2, n - 1) * se;
  const p = 2 * (1 - tCdf(Math.abs(m / se), n - 1));
  return { n, mean: m, sd, ci: [m - half, m + half], p };
}
