// Text as report.html carries it: escaped for HTML, or as JSON inside a script element.

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
