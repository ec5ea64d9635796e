import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  crossProfileKey,
  diffProfiles,
  mergeProfiles,
  parseCpuProfile,
  parseTickLog,
  toFolded,
} from '../src/index.js';
import { profileOf } from './helpers/profiles.js';

describe('mergeProfiles', () => {
  it('sums functions and identical stacks across profiles', () => {
    const merged = mergeProfiles([profileOf(3, 1), profileOf(5, 1)]);
    expect(merged.totalTicks).toBe(10);
    expect(merged.functions[0]).toMatchObject({ name: 'hash', self: 8, total: 8 });
    expect(merged.functions.find((f) => f.name === 'handler')).toMatchObject({ self: 0, total: 10 });
    expect(merged.stacks).toHaveLength(2);
    expect(merged.stacks[0]?.count).toBe(8);
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
    expect(byName.hash?.delta).toBeCloseTo(0.4);
    expect(byName.render?.delta).toBeCloseTo(-0.6);
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

describe('diffProfiles across formats', () => {
  it.each([
    ['file:///srv/app.js', '/srv/app.js'],
    ['file://localhost/srv/app.js', '/srv/app.js'],
    ['file:///srv/my%20app/a%2Bb.js', '/srv/my app/a+b.js'],
    ['file:///srv/app.mjs?v=2#x', '/srv/app.mjs'],
    ['file:///C:/srv/app.js', 'C:\\srv\\app.js'],
    ['/srv/app.js', '/srv/app.js'],
  ])('keys %s and %s alike', (url, path) => {
    expect(crossProfileKey({ name: 'f', file: url })).toBe(crossProfileKey({ name: 'f', file: path }));
  });

  it.each([
    ['node:fs', '/fs'],
    ['http://localhost/srv/app.js', '/srv/app.js'],
    ['file:///srv/a.js', '/srv/b.js'],
  ])('keeps %s and %s apart', (a, b) => {
    expect(crossProfileKey({ name: 'f', file: a })).not.toBe(crossProfileKey({ name: 'f', file: b }));
  });

  it('matches a .cpuprofile function at file:///x.js with the tick log one at /x.js', async () => {
    const cpu = parseCpuProfile({
      startTime: 0,
      endTime: 1,
      nodes: [
        {
          id: 1,
          callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 },
          children: [2],
        },
        {
          id: 2,
          callFrame: { functionName: 'hash', url: 'file:///srv/app.js', lineNumber: 9, columnNumber: 2 },
        },
      ],
      samples: [2, 2, 2, 2],
    });
    const log = await parseTickLog(
      Readable.from([
        'code-creation,JS,10,1,0x100000,256,hash /srv/app.js:10:3,0x900000,*\n',
        'tick,0x100010,1,0,0x0,0\ntick,0x100010,2,0,0x0,0\n',
      ]),
      { resolveSymbols: false },
    );
    const diff = diffProfiles(cpu, log);
    expect(diff.functions).toHaveLength(1);
    expect(diff.functions[0]).toMatchObject({ name: 'hash', baseSelf: 4, headSelf: 2, status: 'changed' });
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
