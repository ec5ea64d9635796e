import { describe, expect, it } from 'vitest';

describe('the built package through its exports map', () => {
  it('exposes the documented API by its name, and it works', async () => {
    const api = await import('@hotpath/tick-parser');
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
    expect(api.mergeProfiles([profile, profile]).totalTicks).toBe(4);
    expect(api.diffProfiles(profile, profile).functions).toMatchObject([
      { name: 'f', delta: 0, status: 'changed' },
    ]);
    const error = (() => {
      try {
        api.parseCpuProfile('not json');
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(api.HotpathTicksError);
    expect(error).toMatchObject({ code: 'HP_TICKS_BAD_CPUPROFILE' });
  });
});
