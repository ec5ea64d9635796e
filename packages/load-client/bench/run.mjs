// Serialisation cost (done once per run, so this only guards against surprises).
import { serializeRequest } from '../dist/index.js';

const n = 100_000;
const start = process.hrtime.bigint();
for (let i = 0; i < n; i++) serializeRequest('127.0.0.1:8080', { method: 'POST', path: '/x', body: 'hello' });
const ns = Number(process.hrtime.bigint() - start) / n;
console.log(`serializeRequest: ${ns.toFixed(0)} ns per call`);
