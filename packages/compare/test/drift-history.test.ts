import { describe, expect, it } from 'vitest';
import {
  appendPoint,
  currentSeries,
  emptyHistory,
  HISTORY_SCHEMA,
  historyText,
  MAX_BYTES,
  MAX_POINTS_PER_SERIES,
  MAX_SERIES,
  parseHistory,
} from '../src/drift/history.js';
import { highestSemverTag } from '../src/drift/reference.js';
import { HotpathCompareError } from '../src/errors.js';
import { point, sha, v140 } from './helpers/history.js';

describe('the drift history', () => {
  it('round-trips through its text, validated', () => {
    const h = appendPoint(emptyHistory(), v140, point(1));
    expect(parseHistory(historyText(h), 'h.json')).toEqual(h);
  });

  it('refuses another schema, not-JSON and a malformed point with the path of the problem', () => {
    expect(() => parseHistory('{"schema":"hotpath-history/9","series":[]}', 'h.json')).toThrow(
      /h\.json is not a hotpath history of schema hotpath-history\/1 \(its schema is "hotpath-history\/9"\)/,
    );
    expect(() => parseHistory('nope', 'h.json')).toThrow(HotpathCompareError);
    const bad = JSON.parse(historyText(appendPoint(emptyHistory(), v140, point(1))));
    bad.series[0].points[0].commit = 'main';
    expect(() => parseHistory(JSON.stringify(bad), 'h.json')).toThrow(
      /series\.0\.points\.0\.commit: expected a full commit sha/,
    );
  });

  it('appends to the series of its reference, and a new reference starts a new series (the old one stays)', () => {
    let h = appendPoint(emptyHistory(), v140, point(1));
    h = appendPoint(h, v140, point(2));
    h = appendPoint(h, { ref: 'v1.5.0', sha: sha(2) }, point(3));
    expect(h.series.map((s) => [s.reference.ref, s.points.length])).toEqual([
      ['v1.4.0', 2],
      ['v1.5.0', 1],
    ]);
    expect(currentSeries(h)?.reference.ref).toBe('v1.5.0');
  });

  it('adds a point once however often it is appended (what a writer that lost a race does)', () => {
    let h = appendPoint(emptyHistory(), v140, point(1));
    h = appendPoint(h, v140, point(1));
    expect(h.series[0]?.points).toHaveLength(1);
  });

  it('keeps points in date order whatever order writers append them in', () => {
    let h = appendPoint(emptyHistory(), v140, point(3));
    h = appendPoint(h, v140, point(1));
    h = appendPoint(h, v140, point(2));
    expect(h.series[0]?.points.map((p) => p.id)).toEqual(['p1', 'p2', 'p3']);
  });

  it('is bounded: the oldest points and series are dropped', () => {
    let h = emptyHistory();
    for (let i = 0; i < MAX_POINTS_PER_SERIES + 5; i++) h = appendPoint(h, v140, point(i));
    expect(h.series[0]?.points).toHaveLength(MAX_POINTS_PER_SERIES);
    expect(h.series[0]?.points[0]?.id).toBe('p5');
    for (let i = 0; i < MAX_SERIES + 2; i++)
      h = appendPoint(h, { ref: `v2.${i}.0`, sha: sha(1000 + i) }, point(10_000 + i));
    expect(h.series).toHaveLength(MAX_SERIES);
    expect(h.series.some((s) => s.reference.ref === 'v1.4.0')).toBe(false);
    expect(h.schema).toBe(HISTORY_SCHEMA);
  });
});

describe('highestSemverTag', () => {
  it('picks the highest release by semver, not by text, leaving out pre-releases and non-versions', () => {
    expect(highestSemverTag(['v1.9.0', 'v1.10.0', 'v1.2.3', 'v2.0.0-rc.1', 'latest', 'v1.10.0-beta'])).toBe(
      'v1.10.0',
    );
    expect(highestSemverTag(['release-0.9.1', 'release-0.10.0'])).toBe('release-0.10.0');
    expect(highestSemverTag(['nightly'])).toBeUndefined();
  });
});

describe('the history file size', () => {
  it('stays within MAX_BYTES, dropping the oldest series first', () => {
    let h = emptyHistory();
    const big = (n: number) => {
      const p = point(n);
      const s = p.scenarios[0];
      if (s)
        s.functions = Array.from({ length: 5 }, (_, i) => ({
          name: 'f'.repeat(300),
          file: 'x'.repeat(300),
          line: i,
          delta: 0.01,
        }));
      return {
        ...p,
        scenarios: Array.from({ length: 25 }, (_, i) => ({
          ...(s ?? { metrics: [], functions: [] }),
          name: `s${i}`,
        })),
      };
    };
    for (let r = 0; r < 3; r++)
      for (let i = 0; i < 40; i++)
        h = appendPoint(h, { ref: `v${r}.0.0`, sha: sha(50 + r) }, big(r * 100 + i));
    const text = historyText(h);
    expect(text.length).toBeLessThanOrEqual(MAX_BYTES);
    const kept = parseHistory(text, 'h.json');
    expect(kept.series.at(-1)?.points).toHaveLength(40);
    expect(kept.series.at(-1)?.reference.ref).toBe('v2.0.0');
    expect(kept.series.reduce((n, s) => n + s.points.length, 0)).toBeLessThan(120);
  });
});
