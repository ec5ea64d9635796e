import { createHash } from 'node:crypto';

// Text as report.html carries it: escaped for HTML, or as JSON inside a script element.

/** A script's or style's hash as a Content-Security-Policy source: `'sha256-…'`. */
export const cspHash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Text as HTML text or attribute value: nothing in it can become markup. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A value as the body of a `<script type="application/json">`: JSON whose `<`, `>` and `&` are
 * escapes, so no text inside can close the element or open a comment; U+2028/9 escaped too.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** One column of a table: its title and how a row fills its cell (already HTML). */
export interface Column<T> {
  title: string;
  numeric?: boolean;
  cell: (row: T) => string;
}

/** A table of `rows`, each cell already HTML (the columns escape what they take from the report). */
export function table<T>(
  columns: readonly Column<T>[],
  rows: readonly T[],
  rowClass?: (row: T) => string,
): string {
  const th = columns.map((c) => `<th${c.numeric ? ' class="num"' : ''}>${escapeHtml(c.title)}</th>`).join('');
  const body = rows.map((row) => {
    const cls = rowClass?.(row);
    const cells = columns.map((c) => `<td${c.numeric ? ' class="num"' : ''}>${c.cell(row)}</td>`).join('');
    return `<tr${cls ? ` class="${escapeHtml(cls)}"` : ''}>${cells}</tr>`;
  });
  return `<table><thead><tr>${th}</tr></thead><tbody>${body.join('')}</tbody></table>`;
}
