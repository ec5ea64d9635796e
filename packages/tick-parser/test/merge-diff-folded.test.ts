import { describe, expect, it } from 'vitest';
import { diffProfiles, mergeProfiles, parseCpuProfile, toFolded } from '../src/index.js';
import { profileOf } from './helpers/profiles.js';

describe('mergeProfiles', () => {
  it('sums functions and identical stacks across profiles', () => {
    const merged = mergeProfiles([profileOf(3, 1), profileOf(5, 1)]);
    expect(merged.totalTicks).toBe(10);
    expect(merged.functions[0]).toMatchObject({ name: 'hash', self: 8, total: 8 });
    expect(merged.functions.find((f) => f.name === 'handler')).toMatchObject({ self: 0, total: 10 });
    expect(merged.stacks).toHaveLength(2);
    expect(merged.stacks[0].count).toBe(8);
  });

  it('of nothing is an empty profile', () => {
    const empty = mergeProfiles([]);
    expect(empty.totalTicks).toBe(0);
    expect(empty.functions).toEqual([]);
  });
});

describe('diffProfiles', () => {
  it('matches functions by name and file, not line, and reports share changes', () => {
    const base = profileOf(2, 8, 10);
    // The hash function moved down 5 lines and got hotter; a new function appears.
    const head = profileOf(6, 2, 15, ['sanitize', 2]);
    const diff = diffProfiles(base, head);
    expect(diff.baseTotal).toBe(10);
    expect(diff.headTotal).toBe(10);
    const byName = Object.fromEntries(diff.functions.map((f) => [f.name, f]));
    expect(byName.hash).toMatchObject({ baseSelf: 2, headSelf: 6, line: 16, status: 'changed' });
    expect(byName.hash.delta).toBeCloseTo(0.4);
    expect(byName.render.delta).toBeCloseTo(-0.6);
    expect(byName.sanitize).toMatchObject({ status: 'new', baseShare: 0, headShare: 0.2 });
    expect(diff.functions.map((f) => f.name)).toEqual(['render', 'hash', 'sanitize']);
  });

  it('reports vanished functions and honours minDelta and limit', () => {
    const base = profileOf(5, 3, 10, ['legacy', 2]);
    const head = profileOf(5, 5);
    const diff = diffProfiles(base, head);
    expect(diff.functions.find((f) => f.name === 'legacy')).toMatchObject({
      status: 'vanished',
      headSelf: 0,
    });
    expect(diffProfiles(base, head, { minDelta: 0.15 }).functions.map((f) => f.name)).toEqual([
      'render',
      'legacy',
    ]);
    expect(diffProfiles(base, head, { limit: 1 }).functions).toHaveLength(1);
  });
});

describe('toFolded', () => {
  it('writes one root-first line per stack whose counts sum to the total', () => {
    const folded = toFolded(profileOf(3, 1));
    expect(folded).toBe(
      'handler /srv/app.js:2:1;hash /srv/auth.js:11:1 3\nhandler /srv/app.js:2:1;render /srv/view.js:4:1 1\n',
    );
  });

  it('keeps frame names free of separators', () => {
    const profile = parseCpuProfile({
      startTime: 0,
      endTime: 1,
      nodes: [
        {
          id: 1,
          callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 },
          children: [2],
        },
        { id: 2, callFrame: { functionName: 'a;b\nc', url: '', lineNumber: -1, columnNumber: -1 } },
      ],
      samples: [2],
    });
    expect(toFolded(profile)).toBe('a:b c 1\n');
  });
});
