import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { expect } from 'vitest';

/**
 * Markdown rendered as GitHub renders a comment or a job summary: CommonMark with GFM (tables,
 * strikethrough, extended autolinks `www.`/`http(s)://`/`mailto:`/`xmpp:`/e-mail), raw HTML passed
 * through (GitHub keeps `<details>`, `<a>`, `<img>` …, so PR text that became HTML shows up here).
 */
export function renderGfm(markdown: string): string {
  return micromark(markdown, {
    allowDangerousHtml: true,
    extensions: [gfm()],
    htmlExtensions: [gfmHtml()],
  });
}

/** What hotpath itself may link to and reference. */
export interface OwnLinks {
  /** The repository's URL (`https://github.com/o/r`): its blob and artifact URLs are hotpath's. */
  repositoryUrl?: string;
  /**
   * A fork pull request's head repository (`https://github.com/fork/r`): hotpath links the
   * head's source files there (blob URLs only; artifacts stay the repository's).
   */
  headRepositoryUrl?: string;
  /** Text of hotpath's own that GitHub would make a reference of, e.g. `(PR #7)`. */
  ownText?: RegExp;
}

// What hotpath's markdown makes: headings, paragraphs, tables, lists, code, its own links and
// the <details> folds. Anything else in the HTML came from text that was not escaped.
const TAGS = new Set([
  'p',
  'h3',
  'h4',
  'h5',
  'a',
  'code',
  'pre',
  'strong',
  'em',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'ul',
  'li',
  'details',
  'summary',
]);

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function decodeEntities(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/**
 * Everything in `markdown` that GitHub would turn into something hotpath did not build: a link
 * (explicit or autolinked) other than the repository's own blob and artifact URLs, an image, an
 * HTML element or attribute hotpath does not write, an HTML comment other than its marker, a
 * mention, an issue reference, or a bidirectional/zero-width mark that hides what text says.
 * An empty list means the document is safe.
 */
export function markdownProblems(markdown: string, own: OwnLinks = {}): string[] {
  const html = renderGfm(markdown);
  const problems: string[] = [];
  const repo = own.repositoryUrl ? escapeRe(own.repositoryUrl) : undefined;
  const blobRepos = [own.repositoryUrl, own.headRepositoryUrl].flatMap((url) => (url ? [escapeRe(url)] : []));
  const ownHref = repo
    ? new RegExp(
        `^((${blobRepos.join('|')})/blob/[0-9a-f]{4,64}/([A-Za-z0-9._~/-]|%[0-9A-F]{2})+(#L\\d+)?|${repo}/actions/runs/\\d+/artifacts/\\d+)$`,
      )
    : undefined;
  for (const m of html.matchAll(/<!--([\s\S]*?)-->/g))
    if (!/^ hotpath-(report|bisect)(:[\w.-]+)? $/.test(m[1] ?? '')) problems.push(`HTML comment: ${m[0]}`);
  const withoutComments = html.replace(/<!--[\s\S]*?-->/g, '');
  for (const m of withoutComments.matchAll(/<\/?([a-zA-Z][\w-]*)([^>]*)>/g)) {
    const [tag, name = '', attributes = ''] = m;
    if (!TAGS.has(name.toLowerCase())) {
      problems.push(`element: ${tag}`);
      continue;
    }
    for (const a of attributes.matchAll(/\s([^\s=]+)(?:="([^"]*)")?/g)) {
      const [, attr = '', value = ''] = a;
      if (name === 'a' && attr === 'href') {
        const href = decodeEntities(value);
        if (!ownHref?.test(href)) problems.push(`link: ${href}`);
      } else if (
        !((name === 'td' || name === 'th') && attr === 'align') &&
        !(name === 'code' && attr === 'class')
      )
        problems.push(`attribute: ${attr}="${value}" on <${name}>`);
    }
  }
  // The text a reader sees outside code (GitHub makes no mention or reference inside code).
  let text = decodeEntities(
    withoutComments
      .replace(/<pre>[\s\S]*?<\/pre>/g, ' ')
      .replace(/<code>[\s\S]*?<\/code>/g, ' ')
      .replace(/<[^>]*>/g, ' '),
  );
  if (own.ownText)
    text = text.replace(new RegExp(own.ownText.source, `${own.ownText.flags.replace('g', '')}g`), ' ');
  for (const m of text.matchAll(/@[A-Za-z0-9_-]+/g)) problems.push(`mention: ${m[0]}`);
  for (const m of text.matchAll(/(\b[\w.-]+\/[\w.-]+)?#\d+|\bGH-\d+/gi)) problems.push(`reference: ${m[0]}`);
  for (const m of html.matchAll(/[\u061c\u200c-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g))
    problems.push(`hidden mark U+${(m[0].codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
  return problems;
}

/** Asserts that `markdown` renders nothing but hotpath's own links and markup (see markdownProblems). */
export function expectSafeMarkdown(markdown: string, own: OwnLinks = {}): void {
  expect(markdownProblems(markdown, own), markdown.slice(0, 2000)).toEqual([]);
}

/** The hrefs of every link in `markdown` as GitHub renders it. */
export function linksIn(markdown: string): string[] {
  return [...renderGfm(markdown).matchAll(/<a\s[^>]*href="([^"]*)"/g)].map((m) => decodeEntities(m[1] ?? ''));
}
