import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compareBriefly, sideMean } from '../compare.js';

const cwd = fileURLToPath(new URL('../../express-auth/', import.meta.url));

describe('express-auth story: an audit log of login attempts kept forever (head)', () => {
  it('retains KiBs per request more, and the survivors profile sees them', async () => {
    const report = await compareBriefly({
      cwd,
      baseStart: 'node server.js',
      headStart: 'AUDIT_LOG=forever node server.js',
      args: [
        '--url',
        '/auth?username=demo&password=secret',
        '--connections',
        '20',
        '--profiler',
        'none',
        // the audit log's hashing runs in the thread pool, which makes placement widen the
        // servers and measure round 1 again: some 15 s this story does not read
        '--placement',
        'off',
        '--warmup',
        '3',
      ],
    });
    // Each attempt keeps a record, a copy of its headers and the request object: several KiB (over
    // 2 rounds of 2 s, the mean of each side is within about ±100 bytes).
    const retained =
      sideMean(report, 'head', 'retainedBytesPerRequest') -
      sideMean(report, 'base', 'retainedBytesPerRequest');
    expect(retained).toBeGreaterThan(1000);
    // What the load after the first window left alive, by allocation site, holds those KiBs in head. (Which sites lead
    // varies: the requests the records keep were made by Node's HTTP code, whose sites fill most
    // of the 10 rows; the bench and the README's picture show recordAttempt among them.)
    expect(report.survivors.headTotal - report.survivors.baseTotal).toBeGreaterThan(1000);
    expect(report.survivors.rows.some((r) => r.change > 0 && r.base === 0)).toBe(true);
  });
});
