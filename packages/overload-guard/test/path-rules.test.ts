import { describe, expect, it } from 'vitest';
import { normalizePath, PathRules } from '../src/path-rules.js';

describe('normalizePath', () => {
  it.each([
    ['/', '/'],
    ['/health', '/health'],
    ['/health?probe=1', '/health'],
    ['/health/', '/health'],
    ['/health//', '/health'],
    ['//health', '/health'],
    ['/a//b///c/', '/a/b/c'],
    ['/health#top', '/health'],
    ['/health?next=/a//b/', '/health'],
    ['/?x', '/'],
    ['//', '/'],
    ['http://host/health', '/health'],
    ['HTTPS://host:8080/health/?x=1', '/health'],
    ['http://host', '/'],
    ['http://host?x=1', '/'],
    ['http://user@host//health', '/health'],
    ['/Health', '/Health'],
    ['/heal%74h', '/heal%74h'],
    ['*', '*'],
    ['host:443', 'host:443'],
  ])('%j -> %j', (target, path) => {
    expect(normalizePath(target)).toBe(path);
  });
});

describe('PathRules', () => {
  const rules = new PathRules('/health/', ['/metrics', '/status/', /^\/static\//]);

  it.each([
    ['/health', 'health'],
    ['http://x/health?probe=1', 'health'],
    ['//health/', 'health'],
    ['/metrics/?format=prom', 'excluded'],
    ['/status', 'excluded'],
    ['//static/app.js', 'excluded'],
    ['/healthz', 'none'],
    ['/', 'none'],
    ['/metrics/x', 'none'],
    ['*', 'none'],
  ])('%j is %s', (target, rule) => {
    expect(rules.match(target)).toBe(rule);
  });

  it('is empty without health path or exclusions, and matches nothing then', () => {
    const none = new PathRules(undefined, []);
    expect(none.empty).toBe(true);
    expect(none.match('/health')).toBe('none');
  });

  it('tests a global RegExp from the start every time', () => {
    const global = new PathRules(undefined, [/^\/x/g]);
    expect([global.match('/x'), global.match('/x'), global.match('/x')]).toEqual([
      'excluded',
      'excluded',
      'excluded',
    ]);
  });
});
