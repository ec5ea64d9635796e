// The probe's allocation profile (bundled into probe.cjs with probe.ts): V8's sampling heap
// profiler through the probe's inspector session, from the window's start (a settle period after
// its opening collection) to just before its closing collection, asked to keep the samples of objects collected in between —
// so the profile says where the window's bytes were allocated, not only where the survivors were.
// Never throws: a process where any part is missing writes no allocation profile.
// Also the survivors profile: the same profiler without those flags through a load outside the
// window (the first round's load after it, see survivorsPass) to a full collection, so that only
// the samples of objects still alive remain (V8 keeps no liveness per sample when collected ones
// are kept, and runs one sampling profiler per isolate: outside the window is when it can run).
import { writeFileSync } from 'node:fs';
import {
  type AllocationMeter,
  collect,
  memoryOn,
  post,
  retainMaps,
  startAllocationMeter,
} from './probe-memory.js';

/**
 * Mean bytes between two samples where the warm-up gave no rate of allocation to go by. Its cost,
 * as CPU time per iteration of a loop that builds and stringifies a 1.5 KB JSON body: +3.9–4.6 %
 * at 32 KiB, +0.3–1.3 % at 128 KiB (three runs each, Node 20).
 */
export const SAMPLING_INTERVAL = 131_072;

/**
 * Samples per second of the server's CPU time the window's profile aims at. A sample's cost is
 * about fixed (a stack walk and a record kept to the window's end): on a JSON route allocating
 * 10.6 KB per request, 128 KiB (about 1 200 samples per CPU second) cost ~4 % of CPU per request.
 */
export const SAMPLES_PER_CPU_SECOND = 150;
const MIN_INTERVAL = 16_384;
const MAX_INTERVAL = 16 * 1024 * 1024;

/**
 * The window's mean bytes between samples from the warm-up's rate of allocation (bytes per CPU
 * second): so many samples per CPU second whatever the route allocates, within 16 KiB and
 * 16 MiB, in whole KiB; SAMPLING_INTERVAL without a rate.
 */
export function windowSamplingInterval(bytesPerCpuSecond: number | undefined): number {
  if (bytesPerCpuSecond === undefined || !Number.isFinite(bytesPerCpuSecond) || bytesPerCpuSecond <= 0)
    return SAMPLING_INTERVAL;
  const interval = Math.round(bytesPerCpuSecond / SAMPLES_PER_CPU_SECOND / 1024) * 1024;
  return Math.min(MAX_INTERVAL, Math.max(MIN_INTERVAL, interval));
}

/**
 * Mean bytes between two samples of the warm-up's survivors profile: finer than the window's, as
 * survivors are far fewer bytes than allocations, and the warm-up's CPU time is never measured.
 */
export const SURVIVOR_SAMPLING_INTERVAL = 32_768;

/** Keep the samples of objects that collections free (V8 11 and later; older ones drop them). */
const KEEP_COLLECTED = { includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };

/** A running sampling heap profiler. */
export interface HeapSampling {
  samplingInterval: number;
  stopped: boolean;
}

/**
 * A warm-up under way: the meter of how fast it allocates (the window's sampling interval follows
 * it; absent where GCProfiler is) and, in the round that asks for it, its survivors profile.
 */
export interface WarmUp {
  meter?: AllocationMeter;
  survivors?: HeapSampling;
}

interface SampledNode {
  selfSize?: number;
  children?: SampledNode[];
}

/** Bytes a sampled profile's tree stands for (iterative: a deep stack must not overflow ours). */
function sampledBytes(head: SampledNode | undefined): number {
  let total = 0;
  const todo = head ? [head] : [];
  for (let node = todo.pop(); node; node = todo.pop()) {
    total += typeof node.selfSize === 'number' ? node.selfSize : 0;
    if (Array.isArray(node.children)) for (const child of node.children) todo.push(child);
  }
  return total;
}

let checked: Promise<string | undefined> | undefined;

/**
 * Whether this V8 keeps collected objects' samples when asked (an older one ignores the flags
 * and would report only the survivors): 256 KiB of garbage sampled every KiB, collected, and
 * looked for. Once per process, before the first window's opening collection. Undefined when
 * it does; else why there is no allocation profile.
 */
export function checkHeapSampling(): Promise<string | undefined> {
  checked ??= (async () => {
    try {
      await post('HeapProfiler.startSampling', { samplingInterval: 1024, ...KEEP_COLLECTED });
      let filled = 0;
      for (let i = 0; i < 64; i++) filled += new Array(512).fill(i).length;
      await collect();
      const { profile } = await post<{ profile?: { head?: SampledNode } }>('HeapProfiler.stopSampling');
      if (sampledBytes(profile?.head) >= (filled * 8) / 4) return undefined;
      return `this Node's V8 (${process.versions.v8}) keeps no samples of collected objects: no allocation profile`;
    } catch (err) {
      return `no sampling heap profiler: ${(err as Error).message}`;
    }
  })();
  return checked;
}

/**
 * Starts the sampling heap profiler (after checkHeapSampling said yes) at `samplingInterval`
 * bytes between samples on average; undefined where it cannot.
 */
export async function startHeapSampling(
  samplingInterval = SAMPLING_INTERVAL,
): Promise<HeapSampling | undefined> {
  try {
    await post('HeapProfiler.startSampling', { samplingInterval, ...KEEP_COLLECTED });
    return { samplingInterval, stopped: false };
  } catch {
    return undefined;
  }
}

/**
 * Starts the warm-up's survivors profile (after checkHeapSampling said yes, so that the profiler is
 * known to work): without the keep-collected flags, V8 drops a sample when its object is collected.
 * Undefined where it cannot.
 */
async function startSurvivorSampling(): Promise<HeapSampling | undefined> {
  try {
    await post('HeapProfiler.startSampling', { samplingInterval: SURVIVOR_SAMPLING_INTERVAL });
    return { samplingInterval: SURVIVOR_SAMPLING_INTERVAL, stopped: false };
  } catch {
    return undefined;
  }
}

/**
 * At the probe's activation, with memory on, before the server has served and optimized
 * anything: V8 told to keep hidden classes (retainMaps) and the sampler's one-time check run, so
 * that its forced collection (it stops the inspector's sampler, which forces one) comes before
 * the code is optimized. Never throws.
 */
export function prepareMemory(): void {
  retainMaps();
  void checkHeapSampling();
}

/**
 * Before a load (a scenario's warm-up, or the load after its window), with memory on and the
 * heap-sampling check passing: the meter of how fast it allocates starts and, with `survivors`,
 * the survivors profile (whose stop forces an atomic collection: the runner asks for it after a
 * window, in one round, see SURVIVORS_ROUND). Undefined where it does not.
 */
export async function startWarmUpProfile(survivors: boolean): Promise<WarmUp | undefined> {
  if (!memoryOn()) return undefined;
  if (await checkHeapSampling()) return undefined;
  const sampling = survivors ? await startSurvivorSampling() : undefined;
  return { meter: startAllocationMeter(), survivors: sampling };
}

/**
 * Ends the survivors profile: a full collection (what the warm-up let go is dropped from the
 * profile), then the profile written to `file`, and let go before the window's own opening
 * collection. Returns the file, or undefined where any step failed (no survivors profile).
 */
export async function writeSurvivors(
  sampling: HeapSampling | undefined,
  file: string,
): Promise<string | undefined> {
  if (!sampling || sampling.stopped) return undefined;
  try {
    await collect();
  } catch {
    // the profile is stopped below all the same; without the collection it is not one of survivors
    await stopHeapSampling(sampling);
    return undefined;
  }
  const profile = await stopHeapSampling(sampling);
  if (!profile) return undefined;
  try {
    writeFileSync(file, JSON.stringify(profile));
    return file;
  } catch {
    return undefined;
  }
}

/**
 * Stops the profiler and returns its profile as the `.heapprofile` file holds it (the sample tree
 * DevTools opens, without the per-sample list, and the interval); undefined where it cannot.
 * Stopping twice is stopping once.
 */
export async function stopHeapSampling(
  sampling: HeapSampling | undefined,
): Promise<{ head: unknown; samplingInterval: number } | undefined> {
  if (!sampling || sampling.stopped) return undefined;
  sampling.stopped = true;
  try {
    const { profile } = await post<{ profile?: { head?: unknown } }>('HeapProfiler.stopSampling');
    return profile?.head ? { head: profile.head, samplingInterval: sampling.samplingInterval } : undefined;
  } catch {
    return undefined;
  }
}
