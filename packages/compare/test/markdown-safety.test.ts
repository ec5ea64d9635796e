import type { Profile } from '@hotpath/tick-parser';
import { describe, expect, it } from 'vitest';
import type { Measurements, Report, RoundResult } from '../src/model.js';
import { renderMarkdown } from '../src/render/markdown.js';
import { codeSpan, escapeText, sourceLink } from '../src/render/markdown-text.js';
import { render } from '../src/render/render.js';
import { report as makeReport } from '../src/report/report.js';
import { resolveSettings } from '../src/settings/schema.js';
import { expectSafeMarkdown, linksIn, markdownProblems, renderGfm } from './helpers/gfm.js';
import { shardOf } from './helpers/shards.js';

// Text a pull request controls (function and file names, server output, warnings, the runner's
// strings in a results file) reaching the comment and the job summary. Each must render as the
// text it is: no link, image, HTML, mention, reference or hidden mark.
const HOSTILE = [
  'src/x)(www.evil.example/login',
  '_www.evil.example/login',
  'a\\www.evil.example',
  '*www.evil.example*',
  '~www.evil.example~',
  '(www.evil.example)',
  'WWW.EVIL.EXAMPLE/x',
  'wwww.evil.example',
  'http://evil.example/a',
  'HTTPS://EVIL.EXAMPLE',
  'xhttps://evil.example',
  'ftp://evil.example',
  'mailto:a@evil.example',
  'xmpp:a@evil.example',
  'a@evil.example',
  'javascript:alert(1)',
  '<http://evil.example>',
  '<a href="http://evil.example">x</a>',
  '<img src=x onerror=alert(1)>',
  '![x](http://evil.example/p.png)',
  '[x](http://evil.example)',
  'x](http://evil.example)',
  '[x][r]\n\n[r]: http://evil.example',
  '&lt;script&gt;',
  '&#64;octocat &commat;octocat',
  '`code` ``` x ```',
  '@octocat and @org/team',
  '#123 GH-45 o/r#6',
  '::set-output name=x::y',
  'line\nbreak\r\n# heading\n---',
  '| a | b |',
  'abc\u202egnp.exe',
  'w\u200bw\u200bw.evil.example',
  '\u2066www\u2069.evil.example',
  '\ufeffhttp\u2060://evil.example',
  '<!-- x --> <details>',
  'trailing \\',
];

const REPO = 'https://github.com/o/r';
const LINKS = { repositoryUrl: REPO, sha: 'abc1234' };

/** A profile whose hottest function has the hostile name and file; `run` is native (no file). */
function profile(name: string, file: string, hot: number): Profile {
  const functions = [
    { name, file, line: 3, column: 1, kind: 'js' as const, self: hot, total: hot },
    { name: 'run', file: '', line: 0, column: 0, kind: 'builtin' as const, self: hot, total: hot },
    { name, file: '', line: 0, column: 0, kind: 'cpp' as const, self: 5, total: 5 },
    { name: 'idle', file: 'src/ok.js', line: 1, column: 1, kind: 'js' as const, self: 100, total: 100 },
  ];
  return {
    source: 'cpuprofile',
    totalTicks: 100 + 2 * hot + 5,
    functions,
    stacks: [
      { frames: [0], count: hot },
      { frames: [0, 1], count: hot },
      { frames: [0, 2], count: 5 },
      { frames: [3], count: 100 },
    ],
    warnings: [],
  };
}

function round(side: 'base' | 'head', n: number, scenarios: string[], text: string): RoundResult {
  const rps = side === 'base' ? 100 + n : 60 + n;
  return {
    side,
    round: n,
    scenarios: scenarios.map((scenario) => ({
      scenario,
      load: {
        duration: 1,
        requests: { total: rps, mean: rps, perSecond: [rps] },
        latency: { mean: 2, p50: 2, p90: 3, p99: 4, max: 5 },
        statusCodes: { '200': rps },
        non2xx: 0,
        errors: 0,
        errorsByKind: {},
      },
      profile: profile(text, text, side === 'base' ? 1 : 60),
      monitors: [],
      profilers: [text],
    })),
    pids: [1],
    serverNode: text,
    warnings: [text],
  };
}

/** A report from report() whose every PR-controlled string is `text`, on one or two scenarios. */
function hostileReport(text: string, scenarios: number): Report {
  const names = Array.from({ length: scenarios }, (_, i) => `GET /${i}`);
  const settings = resolveSettings({
    config: {
      start: 'node server.js',
      rounds: 3,
      scenarios: names.map((name, i) => ({ name, url: `/${i}` })),
    },
  });
  const measurements: Measurements = {
    base: [1, 2, 3].map((n) => round('base', n, names, text)),
    head: [1, 2, 3].map((n) => round('head', n, names, text)),
    order: ['base', 'head', 'base', 'head', 'base', 'head'],
    scenarios: names,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:00.000Z',
  };
  const shard = shardOf(measurements, settings, {
    base: { command: text, cwd: '/b', ref: text },
    head: { command: text, cwd: '/h', ref: text },
  });
  const made = makeReport(
    [{ ...shard, machine: { node: text, platform: text, cpus: 2, cpuModel: text, name: text } }],
    { links: LINKS, warnings: [text] },
  );
  // What no validation in report() lets through, render() must still show as text: the Report
  // is a public type, and a caller may build one.
  return {
    ...made,
    scenarios: made.scenarios.map((s) => ({
      ...s,
      name: text,
      target: text,
      diagnosis: {
        ...s.diagnosis,
        findings: [{ side: 'head', kind: 'blocked-loop', message: text, newInHead: true }],
      },
    })),
  };
}

describe('every comment and summary of hostile text renders only hotpath’s own links', () => {
  for (const text of HOSTILE) {
    it(`${JSON.stringify(text)}`, () => {
      for (const scenarios of [1, 2]) {
        const report = hostileReport(text, scenarios);
        const out = render(report, {
          markdown: { marker: true, commentKey: text, preamble: ['Compared base with head.'] },
        });
        expectSafeMarkdown(out.markdown, { repositoryUrl: REPO });
        expectSafeMarkdown(renderMarkdown(report, { maxLength: Number.POSITIVE_INFINITY }), {
          repositoryUrl: REPO,
        });
        expectSafeMarkdown(renderMarkdown(report, { marker: true, maxLength: 3000 }), {
          repositoryUrl: REPO,
        });
        // The hostile function is in the hot table, linked to its own file when that is a path.
        const links = linksIn(out.markdown);
        const link = sourceLink({ file: text, line: 3 }, LINKS);
        if (link) expect(links).toContain(link);
        for (const href of links) expect(href.startsWith(`${REPO}/blob/abc1234/`), href).toBe(true);
      }
    });
  }
});

describe('the two hostile names of issue #28', () => {
  it('percent-encodes a file name with parentheses so the link ends where hotpath ends it', () => {
    const link = sourceLink({ file: 'src/x)(www.evil.example/login', line: 12 }, LINKS);
    expect(link).toBe(`${REPO}/blob/abc1234/src/x%29%28www.evil.example/login#L12`);
    const md = `[${codeSpan('src/x)(www.evil.example/login:12')}](${link})`;
    expect(linksIn(md)).toEqual([link]);
    // encodeURIComponent alone left the parenthesis: GitHub closed the link there and autolinked the rest.
    const before = `[x](${REPO}/blob/abc1234/${'src/x)(www.evil.example/login'.split('/').map(encodeURIComponent).join('/')})`;
    expect(linksIn(before)).toContain('http://www.evil.example/login');
  });

  it('keeps only unreserved characters in a link target', () => {
    const link = sourceLink({ file: 'a b!\'()*~_-.é/[x]<y>{z}`q`"#?&=+$,;:@%.js', line: 1 }, LINKS) ?? '';
    expect(link.slice(`${REPO}/blob/abc1234/`.length)).toMatch(/^([A-Za-z0-9._~/-]|%[0-9A-F]{2})+#L1$/);
    expect(decodeURIComponent(link.slice(`${REPO}/blob/abc1234/`.length, -3))).toBe(
      'a b!\'()*~_-.é/[x]<y>{z}`q`"#?&=+$,;:@%.js',
    );
    // A lone surrogate cannot be encoded: no link rather than a crash.
    expect(sourceLink({ file: 'a\ud800.js', line: 1 }, LINKS)).toBeUndefined();
  });

  it('breaks www. after an underscore, and every other autolink trigger wherever it stands', () => {
    for (const text of HOSTILE) {
      const html = renderGfm(`- ${escapeText(text)}`);
      expect(html, text).not.toMatch(/<a |<img|<script|<details/);
      // The reader still sees the text (hotpath adds only zero-width spaces and escapes).
      const seen = html
        .replace(/<[^>]*>/g, '')
        .replace(/\u200b/g, '')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&')
        .trim();
      const expected = text
        .replace(
          /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/g,
          ' ',
        )
        .trim();
      expect(seen, text).toBe(expected);
    }
  });

  it('the checker itself finds what the old escaping let through', () => {
    // The renderer is real: these are the links GitHub made of the old output.
    expect(markdownProblems('a \\_www.evil.example/login b')).toEqual([
      'link: http://www.evil.example/login',
    ]);
    expect(
      markdownProblems('[`x`](https://github.com/o/r/blob/abc1234/src/x)(www.evil.example/login)', {
        repositoryUrl: REPO,
      }),
    ).toEqual(['link: http://www.evil.example/login']);
    expect(markdownProblems('hi @octocat, see #12 <img src=x>')).toEqual([
      'element: <img src=x>',
      'mention: @octocat',
      'reference: #12',
    ]);
    expect(markdownProblems('<!-- hotpath-report:k -->\n\nok \u202e')).toEqual(['hidden mark U+202e']);
  });
});

describe('the safety check itself: whose links count as hotpath’s own', () => {
  const fork = 'https://github.example/fork/r';
  const blob = `[server.js:2](${fork}/blob/f9852e57922e/server.js#L2)`;
  it("takes a fork PR's head repository for blob links only when told, and never for artifacts", () => {
    expect(markdownProblems(blob, { repositoryUrl: REPO })).toEqual([
      `link: ${fork}/blob/f9852e57922e/server.js#L2`,
    ]);
    expect(markdownProblems(blob, { repositoryUrl: REPO, headRepositoryUrl: fork })).toEqual([]);
    const artifact = `[results](${fork}/actions/runs/1/artifacts/2)`;
    expect(markdownProblems(artifact, { repositoryUrl: REPO, headRepositoryUrl: fork })).toEqual([
      `link: ${fork}/actions/runs/1/artifacts/2`,
    ]);
  });
});
