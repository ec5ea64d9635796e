// Change points of a paired drift series: where did the level of "head vs the reference" step?
import { FAMILY_ALPHA } from '../verdict/policy.js';
import { median } from '../verdict/statistics.js';
//
// Every point is a paired comparison with its own standard error (from its run's interval), so
// the method weighs points by it: binary segmentation on the weighted two-sample statistic
//   Z(k) = |mean_w(left of k) − mean_w(right of k)| / sqrt(1/W_left + 1/W_right)
// whose null distribution (no step) depends only on the points' variances, so its p-value is
// found by simulating the segment under those variances (a parametric bootstrap, seeded: the same
// series gives the same answer). Runs on different machines and days may vary more than one run's
// interval says; a variance inflation factor estimated from successive differences (by their
// median, which the few steps barely move) widens every point's variance when they do.
//
// The npm libraries evaluated (karaul: PELT with a Gaussian cost that estimates one variance for
// the whole series; bayesian-changepoint: one release, no per-point variances) cannot use the
// per-point intervals, which carry most of the information here, so this small method is ours.

/** One observation: its value on the analysis scale and its standard error. */
export interface SeriesValue {
  value: number;
  se: number;
}

export interface ChangePoint {
  /** Index of the first point at the new level. */
  index: number;
  /**
   * Where the step may be: the first point at the new level is one of `first..last` (a range of
   * indices whose fit is close to the best one's).
   */
  first: number;
  last: number;
  /** Level after − level before (analysis scale), with a 95 % interval. */
  step: number;
  ci: [number, number];
  /** p-value of the segment's test that found it. */
  p: number;
}

export interface Segment {
  start: number;
  /** Exclusive. */
  end: number;
  /** Weighted mean of the segment (analysis scale), with a 95 % interval. */
  level: number;
  ci: [number, number];
}

export interface ChangePointResult {
  changePoints: ChangePoint[];
  segments: Segment[];
  /** Factor every point's variance was multiplied by (≥ 1). */
  inflation: number;
}

export interface ChangePointOptions {
  /** Level of each segment's test (default 0.05). */
  alpha?: number;
  /** Simulations per test (default 2000). */
  simulations?: number;
  /** Seed of the simulation (default 1). */
  seed?: number;
  /**
   * Widen the location range to the splits whose Z² is within this of the best, between the
   * neighbouring steps (default 3.84, the 95 % point of χ²₁).
   */
  locationSlack?: number;
  /** Where the variance inflation starts: 1 (trust the intervals; default) or successive differences. */
  startInflation?: 'one' | 'differences';
}

const Z95 = 1.959963984540054;
/** Median of the chi-square distribution with one degree of freedom. */
const CHI2_1_MEDIAN = 0.454936423119572;

/** A small seeded generator (mulberry32): deterministic simulations. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normals(random: () => number): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    let u = 0;
    while (u === 0) u = random();
    const v = random();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

/**
 * How much more the points vary from one to the next than their standard errors say, as a
 * variance factor ≥ 1 (1 with fewer than four points or when they vary as said).
 */
export function varianceInflation(points: readonly SeriesValue[]): number {
  if (points.length < 4) return 1;
  const ratios: number[] = [];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1];
    const b = points[i];
    if (!a || !b) continue;
    const v = a.se * a.se + b.se * b.se;
    if (v > 0) ratios.push(((b.value - a.value) * (b.value - a.value)) / v);
  }
  if (ratios.length < 3) return 1;
  return Math.max(1, median(ratios) / CHI2_1_MEDIAN);
}

/** Z(k) for every split of values[start, end): index k = first point of the right part. */
function splitStatistics(values: readonly number[], weights: readonly number[], start: number, end: number) {
  let total = 0;
  let weightedSum = 0;
  for (let i = start; i < end; i++) {
    const w = weights[i] ?? 0;
    total += w;
    weightedSum += w * (values[i] ?? 0);
  }
  const z: number[] = [];
  let wl = 0;
  let sl = 0;
  for (let k = start + 1; k < end; k++) {
    const w = weights[k - 1] ?? 0;
    wl += w;
    sl += w * (values[k - 1] ?? 0);
    const wr = total - wl;
    if (wl <= 0 || wr <= 0) {
      z.push(0);
      continue;
    }
    const diff = sl / wl - (weightedSum - sl) / wr;
    z.push(Math.abs(diff) / Math.sqrt(1 / wl + 1 / wr));
  }
  return z;
}

function maxOf(xs: readonly number[]): { value: number; at: number } {
  let best = { value: Number.NEGATIVE_INFINITY, at: -1 };
  xs.forEach((x, i) => {
    if (x > best.value) best = { value: x, at: i };
  });
  return best;
}

function weightedLevel(values: readonly number[], weights: readonly number[], start: number, end: number) {
  let w = 0;
  let s = 0;
  for (let i = start; i < end; i++) {
    w += weights[i] ?? 0;
    s += (weights[i] ?? 0) * (values[i] ?? 0);
  }
  const level = w > 0 ? s / w : 0;
  const half = w > 0 ? Z95 / Math.sqrt(w) : Number.POSITIVE_INFINITY;
  return { level, weight: w, ci: [level - half, level + half] as [number, number] };
}

/** Weighted residual variance within the segments, relative to the points' own variances. */
function residualInflation(
  values: readonly number[],
  variances: readonly number[],
  bounds: readonly number[],
) {
  let q = 0;
  for (let i = 0; i + 1 < bounds.length; i++) {
    const start = bounds[i] ?? 0;
    const end = bounds[i + 1] ?? values.length;
    const weights = variances.map((v) => 1 / v);
    const { level } = weightedLevel(values, weights, start, end);
    for (let j = start; j < end; j++) q += ((values[j] ?? 0) - level) ** 2 / (variances[j] ?? 1);
  }
  const df = values.length - (bounds.length - 1);
  return df >= 3 ? Math.max(1, q / df) : undefined;
}

/**
 * Finds the steps in a series of paired changes (oldest first). Points with a standard error of
 * zero or less, or not finite, get the smallest positive standard error of the series.
 *
 * The variance inflation starts from successive differences (which the steps inflate a little),
 * then is re-estimated from the residuals within the segments found, until the segmentation
 * stops changing (at most four passes).
 */
export function findChangePoints(
  points: readonly SeriesValue[],
  options: ChangePointOptions = {},
): ChangePointResult {
  const positive = points.map((p) => p.se).filter((se) => Number.isFinite(se) && se > 0);
  const floor = positive.length ? Math.min(...positive) : 1;
  const clean = points.map((p) => ({
    value: p.value,
    se: Number.isFinite(p.se) && p.se > 0 ? p.se : floor,
  }));
  const values = clean.map((p) => p.value);
  const own = clean.map((p) => p.se * p.se);
  let inflation = options.startInflation === 'differences' ? varianceInflation(clean) : 1;
  let result = segmentAt(values, own, inflation, options);
  for (let pass = 0; pass < 3; pass++) {
    const bounds = [0, ...result.changePoints.map((c) => c.index), values.length];
    const next = residualInflation(values, own, bounds);
    if (next === undefined || Math.abs(next - inflation) < 1e-9) break;
    const again = segmentAt(values, own, next, options);
    const same =
      again.changePoints.length === result.changePoints.length &&
      again.changePoints.every((c, i) => c.index === result.changePoints[i]?.index);
    inflation = next;
    result = again;
    if (same) break;
  }
  return result;
}

/**
 * Places each step where it fits best between its neighbours, and gives it its location range
 * there: binary segmentation places a step by the segment it was found in, whose other steps pull
 * the split off by a point or two in a staircase. Each step in turn moves to the best split of
 * the points between the steps before and after it (until none moves, at most ten passes); its
 * range is the contiguous splits around it whose Z² in that span is within `slack` of the best.
 */
function locate(
  values: readonly number[],
  weights: readonly number[],
  found: { index: number; first: number; last: number }[],
  slack: number,
) {
  for (let pass = 0; pass < 10; pass++) {
    let moved = false;
    for (let i = 0; i < found.length; i++) {
      const step = found[i];
      if (!step) continue;
      const lo = found[i - 1]?.index ?? 0;
      const hi = found[i + 1]?.index ?? values.length;
      const z = splitStatistics(values, weights, lo, hi);
      const best = maxOf(z);
      if (best.at < 0) continue;
      const index = lo + 1 + best.at;
      const close = (k: number) => (z[k - lo - 1] ?? 0) ** 2 >= best.value ** 2 - slack;
      let first = index;
      while (first - 1 > lo && close(first - 1)) first--;
      let last = index;
      while (last + 1 < hi && close(last + 1)) last++;
      if (index !== step.index) moved = true;
      step.index = index;
      step.first = first;
      step.last = last;
    }
    if (!moved) break;
  }
}

function segmentAt(
  values: readonly number[],
  own: readonly number[],
  inflation: number,
  options: ChangePointOptions,
): ChangePointResult {
  const alpha = options.alpha ?? FAMILY_ALPHA;
  const simulations = options.simulations ?? 2000;
  const slack = options.locationSlack ?? 3.84;
  const variances = own.map((v) => v * inflation);
  const weights = variances.map((v) => 1 / v);
  const sds = variances.map((v) => Math.sqrt(v));
  const normal = normals(generator(options.seed ?? 1));

  const found: { index: number; first: number; last: number; p: number }[] = [];
  const segment = (start: number, end: number) => {
    if (end - start < 2) return;
    const z = splitStatistics(values, weights, start, end);
    const best = maxOf(z);
    if (best.at < 0 || best.value <= 0) return;
    let exceed = 0;
    const segmentWeights = weights.slice(start, end);
    const simulated = new Array<number>(end - start);
    for (let s = 0; s < simulations; s++) {
      for (let i = start; i < end; i++) simulated[i - start] = normal() * (sds[i] ?? 0);
      const zs = splitStatistics(simulated, segmentWeights, 0, end - start);
      if (maxOf(zs).value >= best.value) exceed++;
    }
    const p = (exceed + 1) / (simulations + 1);
    if (p >= alpha) return;
    const index = start + 1 + best.at;
    found.push({ index, first: index, last: index, p });
    segment(start, index);
    segment(index, end);
  };
  segment(0, values.length);
  found.sort((a, b) => a.index - b.index);
  locate(values, weights, found, slack);

  const bounds = [0, ...found.map((f) => f.index), values.length];
  const segments: Segment[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const start = bounds[i] ?? 0;
    const end = bounds[i + 1] ?? values.length;
    if (end <= start) continue;
    const { level, ci } = weightedLevel(values, weights, start, end);
    segments.push({ start, end, level, ci });
  }
  const changePoints: ChangePoint[] = found.map((f, i) => {
    const before = weightedLevel(values, weights, bounds[i] ?? 0, f.index);
    const after = weightedLevel(values, weights, f.index, bounds[i + 2] ?? values.length);
    const step = after.level - before.level;
    const half = Z95 * Math.sqrt(1 / before.weight + 1 / after.weight);
    return { index: f.index, first: f.first, last: f.last, step, ci: [step - half, step + half], p: f.p };
  });
  return { changePoints, segments, inflation };
}
