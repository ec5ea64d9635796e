// A measured window's opening edge in the probe (bundled into probe.cjs with probe.ts): the end of
// the warm-up's survivors profile and the window's opening collection, outside every clock.
import { join } from 'node:path';
import {
  checkHeapSampling,
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
 * A window's opening edge, outside every clock: the warm-up's survivors profile, where it ran,
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
