// Statistics cost on recorded-size inputs (rounds x per-second samples).
import { compareSamples } from '../dist/lib/index.js';

const base = Array.from({ length: 300 }, (_, i) => 1000 + Math.sin(i) * 30);
const head = Array.from({ length: 300 }, (_, i) => 980 + Math.cos(i) * 30);
const n = 20_000;
const start = process.hrtime.bigint();
for (let i = 0; i < n; i++) compareSamples(base, head);
const us = Number(process.hrtime.bigint() - start) / n / 1e3;
console.log(`compareSamples(300 vs 300): ${us.toFixed(1)} µs per call`);
