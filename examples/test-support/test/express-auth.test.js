import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { busyShareOf, compareBriefly, shareOf, sideMean } from '../compare.js';

const cwd = fileURLToPath(new URL('../../express-auth/', import.meta.url));

describe('express-auth story: pbkdf2Sync (base) vs pbkdf2 (head)', () => {
  it('the sync hash blocks the event loop, and PBKDF2 leaves the main thread', async () => {
    const report = await compareBriefly({
      cwd,
      baseStart: 'HASH_MODE=sync node server.js',
      headStart: 'HASH_MODE=async node server.js',
      // the story reads the event loop and the CPU profile: no memory windows (their collections)
      args: ['--url', '/auth?username=demo&password=secret', '--connections', '20', '--memory', 'off'],
    });
    expect(sideMean(report, 'base', 'errors')).toBe(0);
    // pbkdf2Sync holds the event loop for every hash: the loop is busy all the time and every
    // timer waits. (Throughput gains less on 2 cores, where the load generator shares the CPU.)
    expect(report.diagnosis.base.utilization).toBeGreaterThan(0.9);
    expect(report.diagnosis.base.delayMean).toBeGreaterThan(3 * report.diagnosis.head.delayMean);
    // In the base, the hash runs on the main thread and dominates its busy samples (the window
    // also holds head's slices, in which base is idle) ...
    expect(busyShareOf(report, 'base', /pbkdf2/i)).toBeGreaterThan(0.5);
    // ... and in the head it has left it.
    expect(shareOf(report, 'head', /pbkdf2/i)).toBeLessThan(0.1);
  });
});
