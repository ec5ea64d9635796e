// Cost of a monitor snapshot (the guard's admission check grows on top of this).
import { createMonitor } from '../dist/index.js';

const monitor = createMonitor();
const n = 200_000;
const start = process.hrtime.bigint();
for (let i = 0; i < n; i++) monitor.snapshot();
const ns = Number(process.hrtime.bigint() - start) / n;
monitor.close();
console.log(`monitor.snapshot(): ${ns.toFixed(0)} ns per call`);
