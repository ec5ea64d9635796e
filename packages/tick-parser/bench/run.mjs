// Parses a synthetic .cpuprofile of 200k samples and reports throughput.
import { parseCpuProfile } from '../dist/index.js';

const nodes = [
  { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 }, children: [] },
];
for (let i = 2; i < 2000; i++) {
  nodes.push({
    id: i,
    callFrame: { functionName: `f${i}`, url: `file:///app/m${i % 50}.js`, lineNumber: i, columnNumber: 2 },
  });
}
const samples = Array.from({ length: 200_000 }, (_, i) => 2 + ((i * 7919) % 1998));
const json = JSON.stringify({ nodes, samples, startTime: 0, endTime: 1, timeDeltas: samples.map(() => 100) });
const start = process.hrtime.bigint();
const profile = parseCpuProfile(json);
const ms = Number(process.hrtime.bigint() - start) / 1e6;
console.log(`parseCpuProfile: ${profile.totalTicks} samples in ${ms.toFixed(1)} ms`);
