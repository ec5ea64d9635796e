import * as hdr from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { createRun, mergeHistograms, run, summarizeHistogram } from '../src/index.js';
import { splitEvenly } from '../src/worker-pool.js';
import { httpServer } from './servers.js';

describe('worker threads', () => {
  it('splits connections and amounts exactly', () => {
    expect(splitEvenly(10, 3)).toEqual([4, 3, 3]);
    expect(splitEvenly(20000, 3).reduce((a, b) => a + b)).toBe(20000);
  });

  it('sends exactly `amount` over several workers and merges their histograms exactly', async () => {
    let seen = 0;
    const sockets = new Set<unknown>();
    const server = await httpServer((req, res) => {
      seen++;
      sockets.add(req.socket);
      res.end('ok');
    });
    try {
      const result = await run({ url: `${server.url}/`, amount: 3001, connections: 6, workers: 3 });
      expect(result.workers).toBe(3);
      expect(result.requests.total).toBe(3001);
      expect(seen).toBe(3001);
      expect(sockets.size).toBe(6);
      expect(result.statusCodes).toEqual({ '200': 3001 });
      const merged = hdr.decodeFromCompressedBase64(result.histogram);
      expect(merged.totalCount).toBe(3001);
      expect(merged.maxValue / 1000).toBeCloseTo(result.latency.max, 0);
      // Histograms of separate runs merge by addition.
      const twice = hdr.decodeFromCompressedBase64(mergeHistograms([result.histogram, result.histogram]));
      expect(twice.totalCount).toBe(6002);
      // Merging a run with itself keeps its percentiles.
      expect(summarizeHistogram(mergeHistograms([result.histogram, result.histogram]))).toEqual(
        result.latency,
      );
    } finally {
      await server.close();
    }
  });

  it('rejects with HP_LOAD_UNREACHABLE when no worker can connect', async () => {
    const server = await httpServer((_req, res) => res.end());
    const url = server.url;
    await server.close();
    await expect(run({ url: `${url}/`, amount: 10, connections: 2, workers: 2 })).rejects.toMatchObject({
      code: 'HP_LOAD_UNREACHABLE',
    });
  });

  it('emits per-second ticks summed over workers and stops on request', async () => {
    const server = await httpServer((_req, res) => res.end('ok'));
    try {
      const loadRun = createRun({ url: `${server.url}/`, duration: 30, connections: 4, workers: 2 });
      const ticks: number[] = [];
      loadRun.on('tick', (tick) => {
        ticks.push(tick.requests);
        if (ticks.length === 2) loadRun.stop();
      });
      const result = await loadRun.result;
      expect(result.aborted).toBe(true);
      expect(ticks.length).toBeGreaterThanOrEqual(2);
      expect(ticks[0]).toBeGreaterThan(0);
      expect(result.duration).toBeLessThan(25);
      expect(result.requests.perSecond[0]).toBe(ticks[0]);
    } finally {
      await server.close();
    }
  });
});
