/** What a tick log reader counted: read, skipped, unresolved. */
export interface LogCounts {
  lines: number;
  ticks: number;
  gcTicks: number;
  unaccounted: number;
  badLines: number;
  oversizedLines: number;
  badFrames: number;
  droppedFrames: number;
  unknownMoves: number;
  unknownDeletes: number;
  hugeCode: number;
  /** The first few malformed lines, for the report. */
  firstBadLines: string[];
  /** Lines of unknown kinds, by kind (bounded number of kinds). */
  unknownKinds: Map<string, number>;
}

export function newLogCounts(): LogCounts {
  return {
    lines: 0,
    ticks: 0,
    gcTicks: 0,
    unaccounted: 0,
    badLines: 0,
    oversizedLines: 0,
    badFrames: 0,
    droppedFrames: 0,
    unknownMoves: 0,
    unknownDeletes: 0,
    hugeCode: 0,
    firstBadLines: [],
    unknownKinds: new Map(),
  };
}

/** One warning per thing that was skipped or is doubtful, so nothing is dropped silently. */
export function describeSkipped(c: LogCounts, droppedRegions: number, truncatedStacks: number): string[] {
  const out: string[] = [];
  if (c.lines === 0) out.push('the log is empty');
  else if (c.ticks === 0) out.push('the log has no tick lines: was it written with --prof?');
  if (c.badLines > 0) out.push(`${c.badLines} malformed lines skipped`);
  if (c.oversizedLines > 0) out.push(`${c.oversizedLines} lines over the line limit skipped`);
  for (const detail of c.firstBadLines) out.push(`  ${detail}`);
  if (c.hugeCode > 0) out.push(`${c.hugeCode} code-creation events with implausible sizes ignored`);
  if (c.badFrames > 0) out.push(`${c.badFrames} stack frames with bad addresses skipped`);
  if (c.droppedFrames > 0) out.push(`${c.droppedFrames} stack overflow markers skipped`);
  if (c.unknownMoves > 0)
    out.push(`${c.unknownMoves} code-move events for code never created (ignored, as V8 does)`);
  if (c.unknownDeletes > 0)
    out.push(`${c.unknownDeletes} code-delete events for code never created (ignored)`);
  if (droppedRegions > 0) out.push(`${droppedRegions} shared-library events over the limit ignored`);
  if (c.unknownKinds.size > 0) {
    const list = [...c.unknownKinds].map(([kind, count]) => `${kind} (${count})`).join(', ');
    out.push(`lines of unknown kinds skipped: ${list}`);
  }
  if (truncatedStacks > 0)
    out.push(`call tree over its size limit: ${truncatedStacks} ticks kept only their top frame`);
  if (c.ticks > 0 && c.unaccounted / c.ticks > 0.05) {
    const pct = ((100 * c.unaccounted) / c.ticks).toFixed(1);
    out.push(
      `${c.unaccounted} of ${c.ticks} ticks (${pct}%) are at addresses no code event or library covers`,
    );
  }
  return out;
}
