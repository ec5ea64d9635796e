import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { busyShareOf, compareBriefly, sideMean } from '../compare.js';

const cwd = fileURLToPath(new URL('../../nodecached/', import.meta.url));

describe('nodecached story: naive server with Nagle on (base) vs memcache-proto (head)', () => {
  it('small writes under Nagle stall every reply; the Buffer server is many times faster', async () => {
    const report = await compareBriefly({
      cwd,
      baseStart: 'IMPL=naive node server.js',
      headStart: 'IMPL=proto node server.js',
      args: ['--url', 'memcache://127.0.0.1:$PORT', '--connections', '20', '--memory', 'off'],
    });
    expect(sideMean(report, 'base', 'errors')).toBe(0);
    expect(sideMean(report, 'head', 'errors')).toBe(0);
    expect(sideMean(report, 'base', 'requestsPerSecond') * 3).toBeLessThan(
      sideMean(report, 'head', 'requestsPerSecond'),
    );
    // Nagle holds the second small write of each reply until the client's delayed ACK.
    expect(sideMean(report, 'base', 'p50')).toBeGreaterThan(10);
    // The naive server converts to strings and writes them; memcache-proto's replies are Buffers.
    // (Base idles between Nagle's waits: its busy samples are the share that tells.)
    expect(busyShareOf(report, 'base', /^writeUtf8String/)).toBeGreaterThan(0.02);
    expect(busyShareOf(report, 'head', /^writeUtf8String/)).toBeLessThan(0.01);
    // The head's own work is memcache-proto's protocol code, named in the profile.
    const headRows = report.hotFunctions.rows.filter((row) => row.headShare > 0);
    expect(headRows.some((row) => /text-protocol|connection|output-buffer/.test(row.file))).toBe(true);
  });
});
