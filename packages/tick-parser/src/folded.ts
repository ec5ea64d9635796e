import { functionLabel, UNKNOWN_FRAME } from './function-label.js';
import type { Profile } from './model.js';

/** A frame label safe for the folded format: no `;`, no line breaks. */
export function foldedFrameName(label: string): string {
  return label.replace(/;/g, ':').replace(/[\r\n\t]+/g, ' ');
}

/**
 * Folded stacks, one line per distinct stack, root first: `main;handle;pbkdf2 42\n`. The counts sum
 * to `profile.totalTicks`. This is the input of flamegraph.pl, speedscope and inferno.
 */
export function toFolded(profile: Profile): string {
  const names = profile.functions.map((fn) => foldedFrameName(functionLabel(fn)));
  const lines: string[] = [];
  for (const stack of profile.stacks) {
    let line = '';
    for (const [i, fn] of stack.frames.entries()) {
      if (i > 0) line += ';';
      line += names[fn] ?? UNKNOWN_FRAME.name;
    }
    lines.push(`${line} ${stack.count}\n`);
  }
  return lines.join('');
}
