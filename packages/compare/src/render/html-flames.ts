// report.html's flame-graph sections: CPU time (samples), bytes allocated and time waited on
// downstream calls per request, each base, head and differential, drawn by the page's viewer from
// the JSON block's trees.
import type { FlameData } from './flame-data.js';
import { escapeHtml as e } from './html-text.js';

/** The section of the flame graphs at `index` of the page's JSON block. */
export function flameSection(index: number, data: FlameData): string {
  const words = FLAME_WORDS[data.unit];
  const graphs: [keyof FlameData & ('diff' | 'head' | 'base'), string, string][] = [
    ['diff', words.diff, words.diffNote],
    ['head', words.head, ''],
    ['base', words.base, ''],
  ];
  const present = graphs.filter(([key]) => data[key]);
  if (present.length === 0) return `<p class="dim">${e(words.none)}</p>`;
  const parts = [
    `<div class="flames" data-flames="${index}">`,
    '<div class="flame-tools"><input type="search" placeholder="highlight functions (substring)" aria-label="highlight functions"> <button type="button" class="reset">reset zoom</button></div>',
    '<div class="flame-details" aria-live="polite"></div>',
  ];
  for (const [key, title, note] of present)
    parts.push(
      `<h4>${e(title)}</h4>`,
      note ? `<p class="dim">${e(note)}</p>` : '',
      `<div class="flame" data-graph="${key}"></div>`,
    );
  const share = `${(data.minShare * 100).toFixed(2)} %`;
  const folded = data.folded ? ` (${data.folded} folded)` : '';
  parts.push(
    data.unit === 'samples'
      ? `<p class="dim">Click a frame to zoom, hover for samples. Frames under ${share} of the samples are folded into their caller${folded}; <code>(idle)</code> samples are left out (base ${data.idle.base}, head ${data.idle.head}).</p>`
      : `<p class="dim">${e(words.about)} Click a frame to zoom, hover for ${data.unit === 'bytes' ? 'bytes' : 'µs'}. Frames under ${share} of the ${data.unit === 'bytes' ? 'bytes' : 'waiting'} are folded into their caller${folded}.</p>`,
    '</div>',
  );
  return parts.join('\n');
}

/** Each kind of flame graph's titles and notes. */
const FLAME_WORDS: Record<
  FlameData['unit'],
  { diff: string; diffNote: string; head: string; base: string; none: string; about: string }
> = {
  samples: {
    diff: 'Differential flame graph: base → head',
    diffNote:
      "head's stacks; red: more self time in head than in base, blue: less (base scaled to head's samples); stacks only base has are in the base graph",
    head: 'Head',
    base: 'Base',
    none: 'No CPU profile, so no flame graph.',
    about: '',
  },
  bytes: {
    diff: 'Differential allocation flame graph: base → head',
    diffNote:
      "head's stacks; red: more bytes allocated per request in head than in base, blue: fewer; stacks only base has are in the base graph",
    head: 'Head allocations',
    base: 'Base allocations',
    none: 'No allocation profile, so no allocation flame graph.',
    about:
      "Bytes allocated per request by stack, from V8's sampling heap profiler, the mean over each side's rounds.",
  },
  micros: {
    diff: 'Differential waiting flame graph: base → head',
    diffNote:
      "head's stacks; red: more waiting per request in head than in base, blue: less; stacks only base has are in the base graph",
    head: 'Head waiting',
    base: 'Base waiting',
    none: 'No downstream stacks, so no waiting flame graph.',
    about:
      "Time waited on downstream calls per request, by the user's frames that issued them, each stack ending at the endpoint the calls went to; the mean over each side's rounds (a stack, held to 0.3 % of the main thread, stands for the calls since the last: estimates).",
  },
};
