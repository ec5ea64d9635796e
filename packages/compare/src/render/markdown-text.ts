// Text from the pull request as markdown that stays text: escaping, code spans, hotpath's own
// links (percent-encoded, only the repository's blob URLs) and the sticky comment's marker.
import type { HotFunction, SourceLinks } from '../model.js';

/** Hidden marker that identifies hotpath's sticky comment (`key` separates several workflows). */
export function commentMarker(key = ''): string {
  const safe = key.replace(/[^\w.-]/g, '_').slice(0, 100);
  return safe ? `<!-- hotpath-report:${safe} -->` : '<!-- hotpath-report -->';
}

/** The marker of the default key. */
export const COMMENT_MARKER = commentMarker();

/** GitHub's limit on a comment or job summary body. */
export const MAX_COMMENT_LENGTH = 65_536;

// Characters that could turn text into markup or hide what it says (controls, line and paragraph
// separators, zero-width and bidirectional marks): only ever shown as a space.
const CONTROL =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/g;

/** A zero-width space: put inside a trigger, it keeps the text as it reads and stops the trigger. */
const ZWSP = '\u200b';

/**
 * Breaks every trigger that GitHub would turn into a link, mention or reference, wherever it
 * stands (not only after a word boundary): GFM's extended autolinks (`www.`, `http:`, `https:`,
 * `ftp:`, `mailto:`, `xmpp:`, any `scheme://`, `user@host`), mentions (`@user`), issue references
 * (`#123`, `GH-123`). Runs on text whose markup characters are already escaped.
 */
function breakAutolinks(text: string): string {
  return text
    .replace(/@/g, `@${ZWSP}`)
    .replace(/:\/\//g, `:${ZWSP}//`)
    .replace(/(https?|ftp|mailto|xmpp):/gi, `$1${ZWSP}:`)
    .replace(/www\./gi, (w) => `${w.slice(0, 3)}${ZWSP}.`)
    .replace(/#(?=\d)/g, `#${ZWSP}`)
    .replace(/(gh)-(?=\d)/gi, `$1${ZWSP}-`);
}

/**
 * Text from the pull request (function and file names, commands, warnings) as plain markdown
 * text: one line, no control characters, every character that could start markup escaped
 * (so no HTML, link, image, heading, emphasis or table cell can come from it), and every
 * autolink, mention and reference trigger broken (see breakAutolinks).
 */
export function escapeText(text: string, max = 300): string {
  let t = text.replace(CONTROL, ' ');
  if (t.length > max) t = `${t.slice(0, max - 1)}…`;
  return breakAutolinks(t.replace(/[\\`*_[\]#!|<>~&$]/g, (c) => `\\${c}`));
}

/**
 * Text from the pull request as an inline code span: one line, no control characters, the
 * fence longer than any run of backticks inside; `|` escaped for table cells. Nothing inside a
 * code span is markup, a link or a mention.
 */
export function codeSpan(text: string, max = 200): string {
  let t = text.replace(CONTROL, ' ');
  if (t.length > max) t = `${t.slice(0, max - 1)}…`;
  const runs = t.match(/`+/g) ?? [];
  const fence = '`'.repeat(Math.max(0, ...runs.map((r) => r.length)) + 1);
  const pad = t.startsWith('`') || t.endsWith('`') || t === '' ? ' ' : '';
  return `${fence}${pad}${t.replace(/\|/g, '\\|')}${pad}${fence}`;
}

/**
 * A path segment as a URL part: every character but RFC 3986's unreserved ones (`A-Z a-z 0-9
 * - . _ ~`) percent-encoded, so no `(`, `)`, `*`, `!` or `'` can end or change the markdown link
 * around it. Undefined for a string that is not well-formed UTF-16 (a lone surrogate).
 */
function encodePathPart(part: string): string | undefined {
  try {
    return encodeURIComponent(part).replace(
      /[!'()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    );
  } catch {
    return undefined;
  }
}

/**
 * Link to head's source line for a function whose file is a path inside the repository (profile
 * paths are relative to the checkout root); none for dependencies, node's own modules and
 * anything else. Only the repository's own blob URLs, built from validated parts.
 */
export function sourceLink(fn: Pick<HotFunction, 'file' | 'line'>, links?: SourceLinks): string | undefined {
  if (!links || !fn.file) return undefined;
  const rel = fn.file;
  if (rel.startsWith('/') || /^[a-z][\w+.-]*:/i.test(rel)) return undefined;
  const parts = rel.split('/');
  if (parts.includes('node_modules') || parts.includes('..') || parts.includes('.')) return undefined;
  if (!/^https:\/\/[\w.-]+(:\d+)?\/[\w.-]+\/[\w.-]+$/.test(links.repositoryUrl)) return undefined;
  if (!/^[0-9a-f]{4,64}$/.test(links.sha)) return undefined;
  const encoded: string[] = [];
  for (const part of parts) {
    const e = encodePathPart(part);
    if (e === undefined) return undefined;
    encoded.push(e);
  }
  const anchor = Number.isSafeInteger(fn.line) && fn.line > 0 ? `#L${fn.line}` : '';
  return `${links.repositoryUrl}/blob/${links.sha}/${encoded.join('/')}${anchor}`;
}

/** A folded block (nothing when it has no lines). */
export function details(summary: string, lines: readonly string[]): string[] {
  return lines.length > 0
    ? [`<details><summary>${summary}</summary>`, '', ...lines, '', '</details>', '']
    : [];
}
