import { createRequire as __hotpathCreateRequire } from 'node:module'; const require = __hotpathCreateRequire(import.meta.url);

// src/statistics.ts
function mean(values) {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}
function variance(values, m) {
  if (values.length < 2) return 0;
  let sum = 0;
  for (const v of values) sum += (v - m) ** 2;
  return sum / (values.length - 1);
}
function tQuantile975(df) {
  const table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];
  if (!(df > 0)) return Number.POSITIVE_INFINITY;
  if (df <= table.length) {
    const lo = Math.floor(df);
    const hi = Math.ceil(df);
    if (lo === hi) return table[lo - 1];
    const a = lo >= 1 ? table[lo - 1] : 12.706 * 2;
    return a + (table[hi - 1] - a) * (df - lo);
  }
  const z = 1.959964;
  return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2);
}
function differenceOfMeans(base, head) {
  if (base.length === 0 || head.length === 0) {
    throw new RangeError(`need at least one sample per side, got base=${base.length} head=${head.length}`);
  }
  const mb = mean(base);
  const mh = mean(head);
  const vb = variance(base, mb) / base.length;
  const vh = variance(head, mh) / head.length;
  const se = Math.sqrt(vb + vh);
  const df = vb + vh === 0 ? Number.POSITIVE_INFINITY : (vb + vh) ** 2 / (vb ** 2 / (base.length - 1 || 1) + vh ** 2 / (head.length - 1 || 1));
  const t = base.length < 2 || head.length < 2 ? Number.POSITIVE_INFINITY : tQuantile975(df);
  const diff = mh - mb;
  const half = base.length < 2 || head.length < 2 ? Number.POSITIVE_INFINITY : se === 0 ? 0 : t * se;
  return { base: mb, head: mh, diff, ci: [diff - half, diff + half] };
}
function compareSamples(base, head) {
  const d = differenceOfMeans(base, head);
  const mb = d.base;
  const change = mb === 0 ? Number.NaN : d.diff / mb;
  const ci = mb === 0 ? [Number.NaN, Number.NaN] : [d.ci[0] / mb, d.ci[1] / mb];
  if (mb < 0) ci.reverse();
  return { base: mb, head: d.head, change, ci, significant: ci[0] > 0 || ci[1] < 0 };
}

// src/main.ts
async function run() {
  const start = process.env.INPUT_START;
  if (!start) {
    process.exitCode = 1;
    console.log('::error::input "start" is required: the command that starts your server');
    return;
  }
  const self = compareSamples([1, 1], [1, 1]);
  console.log(`hotpath: start=${JSON.stringify(start)} (engine self-check change=${self.change})`);
}

// src/action.ts
await run();
