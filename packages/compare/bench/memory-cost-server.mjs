// The server of bench/memory-cost.mjs: one route (ROUTE=json, the default: a small JSON body, or
// ROUTE=work: CPU for WORK iterations), and on the parent's messages the probe's own window-level
// memory parts (dist/measure: the record of collections and the sampling heap profiler at the
// interval the warm-up's rate of allocation sets) started and stopped around a window, or not.
// CPU time and requests are read between `open` and `close`, as the probe reads them.
import http from 'node:http';
import v8 from 'node:v8';
import {
  checkHeapSampling,
  prepareMemory,
  startHeapSampling,
  stopHeapSampling,
  windowSamplingInterval,
} from '../dist/measure/probe-heap-sampling.js';
import {
  allocationRate,
  endMemoryRecord,
  openMemory,
  startAllocationMeter,
  startMemoryRecord,
} from '../dist/measure/probe-memory.js';

const work = Number(process.env.WORK ?? 200_000);
let served = 0;
const routes = {
  json: () => {
    const items = Array.from({ length: 20 }, (_, i) => ({ i, s: `item ${i}`, even: i % 2 === 0 }));
    return JSON.stringify({ ok: true, served, items });
  },
  work: () => {
    let x = 0;
    for (let i = 0; i < work; i++) x += Math.sqrt(i) * 1e-9;
    return JSON.stringify({ x });
  },
};
const route = routes[process.env.ROUTE ?? 'json'];
if (!route) throw new Error(`ROUTE must be json or work, got ${JSON.stringify(process.env.ROUTE)}`);

http
  .createServer((_req, res) => {
    served++;
    res.setHeader('content-type', 'application/json');
    res.end(route());
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => process.send({ type: 'listening' }));

let meter;
let interval;
let window;
process.on('message', async (m) => {
  if (m.type === 'prepare') {
    // as the probe's activation with memory on: hidden classes kept, the sampler's check run (with
    // `maps` among the parts, the windows set how long hidden classes are kept instead)
    if (m.parts.includes('maps')) await checkHeapSampling();
    else prepareMemory();
    const note = await checkHeapSampling();
    meter = startAllocationMeter();
    process.send({ type: 'prepared', note: note ?? null });
  } else if (m.type === 'rate') {
    interval = windowSamplingInterval(allocationRate(meter));
    process.send({ type: 'rated', interval });
  } else if (m.type === 'edge') {
    // the probe's opening edge: V8's incremental collection (forced where it cannot), the heap read
    const edge = await openMemory();
    process.send({ type: 'edged', memory: edge !== undefined });
  } else if (m.type === 'open') {
    const parts = m.memory ? m.parts : [];
    // V8's default (2) or the probe's setting (RETAIN_MAPS_FOR_GCS), from the next collection on
    if (m.parts.includes('maps')) v8.setFlagsFromString(`--retain-maps-for-n-gc=${m.memory ? 32 : 2}`);
    const record = parts.includes('record')
      ? startMemoryRecord({ heapUsed: 0, external: 0, arrayBuffers: 0 })
      : undefined;
    const heap = parts.includes('sampler') ? await startHeapSampling(interval) : undefined;
    window = { record, heap, served, cpu: process.cpuUsage() };
    process.send({
      type: 'opened',
      memory:
        parts.length > 0 &&
        parts.filter((p) => p !== 'maps' && p !== 'edge').length === [record, heap].filter(Boolean).length,
    });
  } else if (m.type === 'close') {
    const cpu = process.cpuUsage(window.cpu);
    const requests = served - window.served;
    const ending = endMemoryRecord(window.record);
    await stopHeapSampling(window.heap);
    process.send({
      type: 'closed',
      micros: cpu.user + cpu.system,
      requests,
      gcs: ending?.records.length ?? null,
    });
  }
});
