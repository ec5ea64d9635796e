import { describe, expect, it } from 'vitest';
import {
  parseCpuProfile,
  renderDiffFlameGraph,
  renderFlameGraph,
  renderTextReport,
  toJsonReport,
  toSpeedscope,
} from '../src/index.js';
import { defined } from './helpers/defined.js';
import { profileOf } from './helpers/profiles.js';

describe('renderTextReport', () => {
  it('prints the --prof-process sections with matching numbers', () => {
    const text = renderTextReport(profileOf(6, 4), { fileName: 'app.cpuprofile' });
    expect(text.split('\n')[0]).toBe(
      'Statistical profiling result from app.cpuprofile, (10 ticks, 0 unaccounted, 0 excluded).',
    );
    for (const section of ['Shared libraries', 'JavaScript', 'C++', 'Summary', 'Bottom up (heavy) profile']) {
      expect(text).toContain(` [${section}]:`);
    }
    expect(text).toContain('      6   60.0%   60.0%  hash /srv/auth.js:11:1\n');
    expect(text).toContain('     10  100.0%  100.0%  JavaScript\n');
    // Bottom up: hash (60 % of all), called by handler in 100 % of its samples.
    expect(text).toMatch(
      / {6}6 {3}60\.0% {2}hash \/srv\/auth\.js:11:1\n {6}6 {2}100\.0% {4}handler \/srv\/app\.js:2:1\n/,
    );
    expect(text).toContain(' [Top down (heavy) profile]:');
  });

  it('limits flat sections to --top entries', () => {
    const text = renderTextReport(profileOf(6, 4), { top: 1, topDown: false });
    const js = text.slice(text.indexOf('[JavaScript]'), text.indexOf('[C++]'));
    expect(js).toContain('hash');
    expect(js).not.toContain('render');
    expect(text).not.toContain('Top down');
  });
});

describe('toJsonReport', () => {
  it('has the tick buckets and functions without tier markers', () => {
    const report = toJsonReport(profileOf(6, 4), { top: 1 });
    expect(report.ticks).toEqual({ total: 10, unaccounted: 0, js: 10, cpp: 0, gc: 0, shared: 0, other: 0 });
    expect(report.functions).toEqual([
      { name: 'hash', file: '/srv/auth.js', line: 11, column: 1, kind: 'js', self: 6, total: 6 },
    ]);
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });
});

describe('toSpeedscope', () => {
  it('writes a sampled profile whose weights sum to the total', () => {
    const profile = profileOf(6, 4);
    const file = toSpeedscope(profile, { name: 'app' });
    expect(file.$schema).toMatch(/file-format-schema\.json$/);
    expect(file.shared.frames[0]).toEqual({ name: 'hash', file: '/srv/auth.js', line: 11, col: 1 });
    const p = defined(file.profiles[0], 'a profile');
    expect(p.type).toBe('sampled');
    expect(p.weights.reduce((a, b) => a + b, 0)).toBe(10);
    expect(p.samples.map((s) => s.map((i) => file.shared.frames[i]?.name).join(';'))).toEqual([
      'handler;hash',
      'handler;render',
    ]);
  });
});

describe('renderFlameGraph', () => {
  it('draws one frame per call-tree node, widths proportional to samples, self-contained', () => {
    const svg = renderFlameGraph(profileOf(6, 4), { title: 'a <b> & "c"', width: 1000 });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('a &#60;b&#62; &#38; &#34;c&#34;');
    const widths = [...svg.matchAll(/data-w="([\d.]+)" data-d="(\d)"><title>([^ ]+)/g)].map((m) => [
      m[3],
      Number(m[1]),
      Number(m[2]),
    ]);
    expect(widths).toEqual([
      ['handler', 1000, 0],
      ['hash', 600, 1],
      ['render', 400, 1],
    ]);
    // No external resources besides the SVG namespace.
    expect(svg.replace('http://www.w3.org/2000/svg', '')).not.toMatch(/https?:|href=/);
  });

  it('renders a self-contained HTML page with search and zoom', () => {
    const html = renderFlameGraph(profileOf(6, 4), { format: 'html', title: 'app' });
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<svg');
    expect(html).toContain('id="search"');
    expect(html.replace('http://www.w3.org/2000/svg', '')).not.toMatch(/src=|https?:/);
  });

  it('leaves out frames narrower than the minimum width', () => {
    const profile = profileOf(10_000, 1);
    expect(renderFlameGraph(profile, { width: 1000 })).not.toContain('render');
    expect(renderFlameGraph(profile, { width: 1000, minFrameWidth: 0 })).toContain('render');
  });
});

describe('renderDiffFlameGraph', () => {
  it('colours frames that got hotter red and cooler blue', () => {
    const base = profileOf(2, 8);
    const head = profileOf(8, 2, 25); // hash moved (other line) and got hotter
    const svg = renderDiffFlameGraph(base, head);
    const fill = (name: string) =>
      new RegExp(`<title>${name} [^<]*</title><rect [^>]*fill="([^"]+)"`).exec(svg)?.[1];
    expect(fill('hash')).toMatch(/^hsl\(0,85%/);
    expect(fill('render')).toMatch(/^hsl\(220,85%/);
    expect(fill('handler')).toBe('hsl(0,0%,92%)');
    expect(svg).toContain('self share 20.00% → 80.00%');
  });

  it('works on an empty base profile', () => {
    const empty = parseCpuProfile({ startTime: 0, endTime: 0, nodes: [], samples: [] });
    expect(renderDiffFlameGraph(empty, profileOf(1, 1))).toContain('</svg>');
  });
});
