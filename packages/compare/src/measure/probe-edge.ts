// The probe's memory edges (bundled into probe.cjs with probe.ts), outside every clock: the
// warm-up's meter, a window's opening collection, and a survivors profile's end.
import { join } from 'node:path';
import {
  checkHeapSampling,
  startWarmUpProfile,
  type WarmUp,
  windowSamplingInterval,
  writeSurvivors,
} from './probe-heap-sampling.js';
import { allocationRate, type MemoryEdge, memoryOn, openMemory } from './probe-memory.js';

/** What a window's opening edge did (see openEdge). */
export interface Edge {
  memory?: MemoryEdge;
  survivors?: string;
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
 * A window's opening edge, outside every clock: a survivors profile the warm-up ran, if asked,
 * ended and written (its own full collection, and the inspector's forced one), then, with memory
 * on, the opening collection and what is alive after it. The runner sends `edge` a settle period
 * before `start` where the warm-up is long enough, so that the window does not measure what a
 * full collection costs after it; else `start` does it.
 */
export async function openEdge(id: number, dir: string, warming: WarmUp | undefined): Promise<Edge> {
  // Loaded on activation only, so processes that never serve do not pay for it; before the
  // opening collection, so that loading it is counted neither as allocated nor as retained.
  await import('@hotpath/overload-guard');
  // The sampler's one-time check: started at activation (prepareMemory), its answer cached; awaited
  // here, before the opening collection, so that its garbage is not counted either.
  const heapNote = memoryOn() ? await checkHeapSampling() : undefined;
  // How fast the warm-up allocated, read before the survivors' collection (which it must not count).
  const interval = windowSamplingInterval(allocationRate(warming?.meter));
  // Its own full collection, then the file written and let go before the opening collection.
  const survivors = await writeSurvivors(
    warming?.survivors,
    join(dir, `${process.pid}-${id}.survivors.heapprofile`),
  );
  const memory = memoryOn() ? await openMemory() : undefined;
  return { memory, survivors, interval, heapNote };
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
  /** The next window's edge, once: the survivors profile it ends is the warm-up's so far. */
  const open = (id: number): Promise<Edge> => {
    if (!edging) {
      const survivors = warming;
      warming = undefined;
      edging = openEdge(id, dir, survivors);
    }
    return edging;
  };
  const answers = {
    warm: async (_id: number, survivors: boolean) => {
      if (!busy() && !warming && !edging) warming = await startWarmUpProfile(survivors);
      return { type: 'warming', survivors: warming?.survivors !== undefined };
    },
    edge: async (id: number) => {
      const done = busy() ? undefined : await open(id);
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
    open: async (id: number): Promise<Edge> => {
      const edge = await open(id);
      edging = undefined;
      return edge;
    },
    answer: async (type: keyof typeof answers, id: number, survivors: boolean): Promise<void> => {
      const reply = await answers[type](id, survivors).catch(() => failed[type]);
      send({ ...reply, pid: process.pid });
    },
  };
}
