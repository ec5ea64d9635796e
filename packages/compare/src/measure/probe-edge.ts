// The probe's memory edges (bundled into probe.cjs with probe.ts), outside every clock: the
// warm-up's meter, a window's opening collection, and a survivors profile's end.
import { join } from 'node:path';
import {
  checkHeapSampling,
  startWarmUpProfile,
  stopHeapSampling,
  type WarmUp,
  windowSamplingInterval,
  writeSurvivors,
} from './probe-heap-sampling.js';
import { allocationRate, type MemoryEdge, memoryOn, openMemory } from './probe-memory.js';

/** What a window's opening edge did (see openEdge). */
export interface Edge {
  memory?: MemoryEdge;
  /** The window's heap-sampling interval, from how fast the warm-up allocated. */
  interval: number;
  /** Why there is no allocation profile, where there is none. */
  heapNote?: string;
}

/**
 * The end of a survivors profile that no window follows (the runner's load after a window, see
 * survivorsPass): its full collection, then the file; the warm-up's meter stopped. Never throws.
 */
export async function endSurvivors(
  id: number,
  dir: string,
  warming: WarmUp | undefined,
): Promise<string | undefined> {
  allocationRate(warming?.meter);
  return writeSurvivors(warming?.survivors, join(dir, `${process.pid}-${id}.survivors.heapprofile`));
}

/**
 * A window's opening edge, outside every clock: the warm-up's meter read, then, with memory on,
 * the opening collection and what is alive after it (a survivors profile is ended after a window
 * by `survive`; one still running here is dropped, so that the window's sampler can start). The
 * runner sends `edge` a settle period before `start` where the warm-up is long enough, so that the
 * window does not measure what a full collection costs after it; else `start` does it.
 */
export async function openEdge(warming: WarmUp | undefined): Promise<Edge> {
  // The sampler's one-time check: started at activation (prepareMemory), its answer cached; awaited
  // here, before the opening collection, so that its garbage is not counted either.
  const heapNote = memoryOn() ? await checkHeapSampling() : undefined;
  // How fast the warm-up allocated.
  const interval = windowSamplingInterval(allocationRate(warming?.meter));
  await stopHeapSampling(warming?.survivors);
  const memory = memoryOn() ? await openMemory() : undefined;
  return { memory, interval, heapNote };
}

/**
 * The probe's memory messages around its windows, for one process: `warm` (the meter, and the
 * survivors profile when asked), `edge` (the next window's opening edge, once), `survive` (after a
 * window: the survivors profile since `warm`, ended and written). `busy`: a window is open or
 * opening, when `warm` and `survive` do nothing. Each answers the runner, also when it fails.
 */
export function memoryEdges(dir: string, send: (message: object) => void, busy: () => boolean) {
  let warming: WarmUp | undefined;
  let edging: Promise<Edge> | undefined;
  /** The next window's edge, once: it ends the warm-up's meter. */
  const open = (): Promise<Edge> => {
    if (!edging) {
      const ended = warming;
      warming = undefined;
      edging = openEdge(ended);
    }
    return edging;
  };
  const answers = {
    warm: async (_id: number, survivors: boolean) => {
      if (!busy() && !warming && !edging) warming = await startWarmUpProfile(survivors);
      return { type: 'warming', survivors: warming?.survivors !== undefined };
    },
    edge: async () => {
      const done = busy() ? undefined : await open();
      return { type: 'edged', memory: done?.memory !== undefined };
    },
    survive: async (id: number) => {
      const ended = busy() || edging ? undefined : warming;
      if (ended) warming = undefined;
      return { type: 'survived', file: await endSurvivors(id, dir, ended) };
    },
  };
  const failed = {
    warm: { type: 'warming', survivors: false },
    edge: { type: 'edged', memory: false },
    survive: { type: 'survived' },
  };
  return {
    /** The window's edge (its start calls it: taken now unless `edge` took it), then forgotten. */
    open: async (): Promise<Edge> => {
      const edge = await open();
      edging = undefined;
      return edge;
    },
    answer: async (type: keyof typeof answers, id: number, survivors: boolean): Promise<void> => {
      const reply = await answers[type](id, survivors).catch(() => failed[type]);
      send({ ...reply, pid: process.pid });
    },
  };
}
