import { readFileSync } from 'node:fs';
// The built package, through its own name and exports map.
import * as built from '@hotpath/load-client';
import { describe, expect, it } from 'vitest';
import { LOAD_ERROR_CODES } from '../src/errors.js';
import { ERROR_KINDS } from '../src/recorder.js';
import { httpServer } from './servers.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('package surface', () => {
  it('documents every error code and every error kind in the README', () => {
    for (const code of Object.keys(LOAD_ERROR_CODES)) expect(readme).toContain(`\`${code}\``);
    for (const kind of ERROR_KINDS) expect(readme).toContain(`\`${kind}\``);
  });

  it('works when imported by its package name', async () => {
    const server = await httpServer((_req, res) => res.end('ok'));
    try {
      const run = built.createRun({ url: `${server.url}/`, amount: 50, connections: 2 });
      const result = await run.result;
      expect(result.requests.total).toBe(50);
      expect(result.statusCodes).toEqual({ '200': 50 });
      expect(built.summarizeHistogram(result.histogram)).toEqual(result.latency);
      const merged = built.mergeHistograms([result.histogram, result.histogram]);
      expect(built.summarizeHistogram(merged)).toMatchObject({
        min: result.latency.min,
        max: result.latency.max,
      });
      const again = await built.run({ url: `${server.url}/`, amount: 20, connections: 1 });
      expect(again.requests.total).toBe(20);
    } finally {
      await server.close();
    }
  });

  it('rejects bad options with a coded error naming the value', () => {
    expect(() => built.createRun({ url: 'ftp://x/' })).toThrow(/invalid URL "ftp:\/\/x\/"/);
    expect(() => built.createRun({ url: 'http://127.0.0.1:1/', duration: 0 })).toThrow(
      /invalid duration 0: expected a number of seconds > 0/,
    );
    expect(() => built.createRun({ url: 'http://127.0.0.1:1/', duration: -1 })).toThrow(
      built.HotpathLoadError,
    );
    expect(() => built.createRun({ url: 'http://127.0.0.1:1/', amount: 1.5 })).toThrow(/invalid amount 1.5/);
    // A timer cannot wait longer than 2^31-1 ms: such a run would end at once instead.
    expect(() => built.createRun({ url: 'http://127.0.0.1:1/', duration: 3_000_000 })).toThrow(
      /invalid duration 3000000: expected at most 2147483.647 seconds/,
    );
    expect(() => built.createRun({ url: 'http://127.0.0.1:1/', warmup: 2_147_484 })).toThrow(
      /invalid warmup/,
    );
    expect(() => built.createRun({ url: 'http://127.0.0.1:1/', tls: { verify: true } })).toThrow(
      /invalid tls .*: expected no TLS settings for a target that is not https:\/\//,
    );
    expect(() => built.createRun({ url: 'http://127.0.0.1:1/', connections: 0 })).toThrow(
      /invalid connections/,
    );
  });
});
