/** The arithmetic mean (NaN for no values). */
export function mean(values: readonly number[]): number {
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

/** ln Γ(x) (Lanczos approximation, |error| < 2e-10 for x > 0). */
function logGamma(x: number): number {
  const g = [
    676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  let a = 0.99999999999980993;
  const t = x - 1 + 7.5;
  g.forEach((gi, i) => {
    a += gi / (x - 1 + i + 1);
  });
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

/**
 * Quantiles already found, by p and df: a run asks for the same few (its alpha shares, its pair
 * counts) for every metric, function and look, and each costs some 40 bisection steps.
 */
const quantiles = new Map<string, number>();

/** The `p` quantile of Student's t with `df` degrees of freedom (0 < p < 1). */
export function tQuantile(p: number, df: number): number {
  if (!(df > 0)) return p >= 0.5 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  if (p === 0.5) return 0;
  if (p < 0.5) return -tQuantile(1 - p, df);
  const key = `${p} ${df}`;
  const known = quantiles.get(key);
  if (known !== undefined) return known;
  if (quantiles.size >= 4096) quantiles.clear();
  const found = bisectQuantile(p, df);
  quantiles.set(key, found);
  return found;
}

function bisectQuantile(p: number, df: number): number {
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

/**
 * The smallest true shift of the mean difference that a paired t interval at level 1 − alpha
 * excludes zero for with probability `power` (80 % by default), given the spread of the pairs
 * observed: (t(1 − alpha/2) + t(power)) · sd / √n with n − 1 degrees of freedom. Infinite with
 * fewer than two pairs.
 */
export function detectableShift(sd: number, n: number, alpha: number, power = 0.8): number {
  if (n < 2) return Number.POSITIVE_INFINITY;
  return (tQuantile(1 - alpha / 2, n - 1) + tQuantile(power, n - 1)) * (sd / Math.sqrt(n));
}

/** The median (the mean of the two middle values for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
