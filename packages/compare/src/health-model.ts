// The event-loop and memory types of the model (model.ts re-exports them): one process's picture
// over a measured window as its probe wrote it, and one side's over its rounds as the report
// shows it, with what the diagnosis found.

import type { MonitorSummary, SideMemory } from './round-data.js';

/** A side of a comparison (model.ts's Side). */
type Side = 'base' | 'head';

/**
 * Event-loop and memory findings of one side over all its rounds: the fields of a
 * MonitorSummary, with heapStart/heapEnd/rssEnd as means over the rounds and heapSeries the
 * concatenated per-second readings of every round.
 */
export type SideHealth = Pick<
  MonitorSummary,
  'delayMean' | 'delayP99' | 'delayMax' | 'utilization' | 'heapStart' | 'heapEnd' | 'rssEnd' | 'heapSeries'
> & {
  /** The largest resident set size any process reached in a reading, bytes (absent from old shards). */
  rssMax?: number;
  /** The memory edges over all rounds (every process had them): where retained bytes are, GC pauses. */
  memory?: SideMemory;
};

export interface Finding {
  kind: 'blocked-loop' | 'busy-loop' | 'memory-growth' | 'capacity-below';
  side: Side;
  /** Only head shows it (a likely effect of the change). */
  newInHead: boolean;
  message: string;
}

export interface Diagnosis {
  base?: SideHealth;
  head?: SideHealth;
  findings: Finding[];
}
