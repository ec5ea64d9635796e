// report.html's flame-graph sections: CPU time (samples) and bytes allocated per request, each
// base, head and differential, drawn by the page's viewer from the JSON block's trees.
import type { FlameData } from './flame-data.js';
import { escapeHtml as e } from './html-text.js';

/** The section of the flame graphs at `index` of the page's JSON block. */
export function flameSection(index: number, data: FlameData): string {
  const bytes = data.unit === 'bytes';
  const graphs: [keyof FlameData & ('diff' | 'head' | 'base'), string, string][] = [
    [
      'diff',
      bytes ? 'Differential allocation flame graph: base → head' : 'Differential flame graph: base → head',
      bytes
        ? "head's stacks; red: more bytes allocated per request in head than in base, blue: fewer; stacks only base has are in the base graph"
        : "head's stacks; red: more self time in head than in base, blue: less (base scaled to head's samples); stacks only base has are in the base graph",
    ],
    ['head', bytes ? 'Head allocations' : 'Head', ''],
    ['base', bytes ? 'Base allocations' : 'Base', ''],
  ];
  const present = graphs.filter(([key]) => data[key]);
  if (present.length === 0)
    return bytes
      ? '<p class="dim">No allocation profile, so no allocation flame graph.</p>'
      : '<p class="dim">No CPU profile, so no flame graph.</p>';
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
    bytes
      ? `<p class="dim">Bytes allocated per request by stack, from V8's sampling heap profiler, the mean over each side's rounds. Click a frame to zoom, hover for bytes. Frames under ${share} of the bytes are folded into their caller${folded}.</p>`
      : `<p class="dim">Click a frame to zoom, hover for samples. Frames under ${share} of the samples are folded into their caller${folded}; <code>(idle)</code> samples are left out (base ${data.idle.base}, head ${data.idle.head}).</p>`,
    '</div>',
  );
  return parts.join('\n');
}
