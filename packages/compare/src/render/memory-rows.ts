// The memory block under a scenario's event-loop table (markdown, terminal, report.html): where
// the retained bytes are (JS heap or outside it), the collections' longest pause and count, and
// the peak resident set. The per-request totals are verdict metrics in the metrics table above.
import type { Diagnosis, SideHealth, SideMemory } from '../model.js';
import { formatBytes } from './format.js';

const signed = (bytes: number) => `${bytes < 0 ? '−' : bytes > 0 ? '+' : ''}${formatBytes(bytes)}`;

const ROWS: [string, (m: SideMemory) => string][] = [
  ['Retained per request, JS heap', (m) => signed(m.retainedHeapPerRequest)],
  [
    'Retained per request, outside the heap (Buffers)',
    (m) => `${signed(m.retainedExternalPerRequest)} (${signed(m.retainedArrayBuffersPerRequest)})`,
  ],
  ['GC pauses per 1 000 requests', (m) => m.gcPerThousandRequests.toFixed(1)],
  ['Longest GC pause', (m) => `${(m.gcMaxMicros / 1000).toFixed(1)} ms`],
];

/** The block's rows as [label, base, head] (— where a side has no value); none without memory edges. */
export function memoryRows(diagnosis: Pick<Diagnosis, 'base' | 'head'>): [string, string, string][] {
  const { base, head } = diagnosis;
  const cell = (h: SideHealth | undefined, pick: (m: SideMemory) => string) =>
    h?.memory ? pick(h.memory) : '—';
  const rows: [string, string, string][] = [];
  if (base?.memory || head?.memory)
    for (const [label, pick] of ROWS) rows.push([label, cell(base, pick), cell(head, pick)]);
  const rss = (h: SideHealth | undefined) => (h?.rssMax !== undefined ? formatBytes(h.rssMax) : '—');
  if (base?.rssMax !== undefined || head?.rssMax !== undefined) rows.push(['Peak RSS', rss(base), rss(head)]);
  return rows;
}

/**
 * What the event-loop block says when it found nothing. With memory edges, heap growth is judged
 * per request by the retained-bytes metric, and a leak far below the growth finding's 32 MB must
 * not read as "no memory growth".
 */
export function noFindingsText(diagnosis: Pick<Diagnosis, 'base' | 'head'>): string {
  return diagnosis.base?.memory || diagnosis.head?.memory
    ? 'No blocked event loop or saturation on either side (memory: see retained bytes per request).'
    : 'No blocked event loop, saturation or memory growth on either side.';
}
