import type { Profile } from '@hotpath/tick-parser';
import { describe, expect, it } from 'vitest';
import { relativeLocation, withRelativeLocations } from '../src/measure/locations.js';
import { diffHotFunctions } from '../src/verdict/hot-functions.js';

describe('relativeLocation: the same function has the same location in two checkouts', () => {
  it.each([
    ['file:///tmp/wt/base/src/app.js', '/tmp/wt/base', 'src/app.js'],
    ['/tmp/wt/head/src/app.js', '/tmp/wt/head', 'src/app.js'],
    ['/tmp/wt/base/node_modules/content-type/index.js', '/tmp/wt/base', 'node_modules/content-type/index.js'],
    [
      '/tmp/wt/head/node_modules/.pnpm/express@5.1.0/node_modules/content-type/index.js',
      '/tmp/wt/head',
      'node_modules/content-type/index.js',
    ],
    ['/tmp/wt/base/node_modules/@scope/pkg/lib/a.js', '/tmp/wt/base', 'node_modules/@scope/pkg/lib/a.js'],
    ['node:internal/crypto/pbkdf2', '/tmp/wt/base', 'node:internal/crypto/pbkdf2'],
    ['/usr/bin/node', '/tmp/wt/base', '/usr/bin/node'],
    ['/elsewhere/x.js', '/tmp/wt/base', '/elsewhere/x.js'],
    ['file:///a/%E0%A4%A.js', '/a', 'file:///a/%E0%A4%A.js'],
    ['', '/tmp', ''],
  ])('%s under %s → %s', (file, root, expected) => {
    expect(relativeLocation(file, root)).toBe(expected);
  });

  it('a diff of the same code profiled from two directories flags nothing (express-style: a dependency at two paths)', () => {
    const profile = (root: string, layout: 'npm' | 'pnpm'): Profile => {
      const dep =
        layout === 'npm'
          ? `${root}/node_modules/content-type/index.js`
          : `${root}/node_modules/.pnpm/content-type@1.0.5/node_modules/content-type/index.js`;
      const functions = [
        {
          name: 'parse',
          file: `file://${dep}`,
          line: 106,
          column: 1,
          kind: 'js' as const,
          self: 40,
          total: 40,
        },
        {
          name: 'handler',
          file: `file://${root}/app/server.js`,
          line: 12,
          column: 1,
          kind: 'js' as const,
          self: 50,
          total: 90,
        },
        {
          name: 'work',
          file: `${root}/app/work.js`,
          line: 3,
          column: 1,
          kind: 'js' as const,
          self: 10,
          total: 10,
        },
      ];
      return {
        source: 'cpuprofile',
        totalTicks: 100,
        functions,
        stacks: [
          { frames: [1, 0], count: 40 },
          { frames: [1], count: 50 },
          { frames: [1, 2], count: 10 },
        ],
        warnings: [],
      };
    };
    const raw = diffHotFunctions(profile('/tmp/a/base', 'npm'), profile('/tmp/b/head', 'pnpm'), 0.05);
    expect(raw.flagged.length).toBeGreaterThan(0); // by absolute path, every function looks new
    const base = withRelativeLocations(profile('/tmp/a/base', 'npm'), '/tmp/a/base');
    const head = withRelativeLocations(profile('/tmp/b/head', 'pnpm'), '/tmp/b/head');
    const diff = diffHotFunctions(base, head, 0.05);
    expect(diff.flagged).toEqual([]);
    expect(diff.rows.map((r) => [r.name, r.file, r.delta])).toEqual(
      expect.arrayContaining([
        ['parse', 'node_modules/content-type/index.js', 0],
        ['handler', 'app/server.js', 0],
      ]),
    );
    expect(diff.rows.filter((r) => r.name === 'parse')).toHaveLength(1);
  });
});
