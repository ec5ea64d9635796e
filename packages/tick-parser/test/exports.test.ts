import { describe, expect, it } from 'vitest';

describe('the built package through its exports map', () => {
  it('exposes the documented API by its name', async () => {
    const api = await import('@hotpath/tick-parser');
    for (const name of [
      'parseCpuProfile',
      'mergeProfiles',
      'diffProfiles',
      'toFolded',
      'HotpathTicksError',
    ]) {
      expect(typeof (api as Record<string, unknown>)[name]).toBe('function');
    }
    const profile = api.parseCpuProfile({
      startTime: 0,
      endTime: 1,
      nodes: [
        {
          id: 1,
          callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 },
          children: [2],
        },
        { id: 2, callFrame: { functionName: 'f', url: '/a.js', lineNumber: 0, columnNumber: 0 } },
      ],
      samples: [2, 2],
    });
    expect(api.toFolded(profile)).toBe('f /a.js:1:1 2\n');
  });
});
