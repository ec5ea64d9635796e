// Text for a terminal: widths in characters (not UTF-16 units), padding, cutting and wrapping to
// the terminal's columns, and text from the pull request made inert.
import { inert } from '../printable.js';

export const length = (text: string) => [...text].length;

export function pad(text: string, width: number, right = false): string {
  const n = length(text);
  if (n >= width) return text;
  return right ? ' '.repeat(width - n) + text : text + ' '.repeat(width - n);
}

/** Cut to `width` characters, with an ellipsis where cut. */
export function cut(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/** Words wrapped to `width`, continuation lines indented by `indent`. */
export function wrap(text: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (length(next) <= width || !line) line = next;
    else {
      lines.push(line);
      line = `${indent}${word}`;
    }
  }
  if (line) lines.push(line);
  return lines.flatMap((l) => (length(l) > width ? chunk(l, width) : [l]));
}

/** A word longer than the line: cut into lines of `width`. */
function chunk(text: string, width: number): string[] {
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += width) out.push(chars.slice(i, i + width).join(''));
  return out;
}

/**
 * Text from the pull request without control characters or bidi controls (no escape sequence
 * reaches the terminal, nothing reorders a line): see printable.ts.
 */
export const plain = inert;
