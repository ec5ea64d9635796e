import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compareBriefly, shareOf, sideMean } from '../compare.js';

const cwd = fileURLToPath(new URL('../../restify-etag/', import.meta.url));

describe('restify-etag story: hashing the payload per request (base) vs cached ETag (head)', () => {
  it('the slow middleware is slower and is named as the hot function', async () => {
    const report = await compareBriefly({
      cwd,
      baseStart: 'ETAG_MODE=slow node server.js',
      headStart: 'ETAG_MODE=fast node server.js',
      args: ['--url', '/seed/v1', '--connections', '20', '--memory', 'off'],
    });
    expect(sideMean(report, 'head', 'errors')).toBe(0);
    expect(sideMean(report, 'base', 'requestsPerSecond') * 2).toBeLessThan(
      sideMean(report, 'head', 'requestsPerSecond'),
    );
    expect(shareOf(report, 'base', /^etagger$|^update$/)).toBeGreaterThan(0.3);
    expect(shareOf(report, 'head', /^etagger$/)).toBeLessThan(0.05);
  });
});
