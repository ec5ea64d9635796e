// The probe's memory edges (bundled into probe.cjs with probe.ts): at each edge of the measured
// window a full collection (V8's incremental one, see probe-collection.ts; else forced, see
// fullCollector), outside the timed window, then the
// heap, external and array-buffer bytes still alive; during the window v8.GCProfiler's record of
// every collection, from which the bytes allocated and the time spent collecting follow. The
// opening edge may come a settle period before the window starts (the runner sends `edge` within
// the warm-up): a full collection throws away much of V8's optimized code (an HTTP server on
// Node 20 re-optimized 50–80 functions in the second after one, at +30–50 % CPU per request in
// that second), which the window must not measure. Never throws: a process where any part is
// missing reports no memory.
import type { Session } from 'node:inspector';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { MemoryWindow } from '../model.js';
import { incrementalCollection } from './probe-collection.js';

interface GcRecord {
  cost: number;
  beforeGC: { heapStatistics: { usedHeapSize: number } };
  afterGC: { heapStatistics: { usedHeapSize: number } };
}
interface GcProfiler {
  start(): void;
  stop(): { statistics: GcRecord[] } | undefined;
}

/** What was alive after the opening collection (bytes): the heap, external memory, of it ArrayBuffers. */
export interface MemoryEdge {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** A window's record of collections, from its start (which may come a settle period after its edge). */
export interface MemoryRecording {
  edge: MemoryEdge;
  profiler: GcProfiler;
  /** Heap used when the record started (no collection then): the window's allocation counts from it. */
  startUsed: number;
}

/** Whether the runner asked for the memory probes (HOTPATH_PROBE_MEMORY, on unless `off`). */
export function memoryOn(): boolean {
  return process.env.HOTPATH_PROBE_MEMORY !== 'off';
}

let session: Session | undefined;

/** The process's one inspector session (the collections and the sampling heap profiler use it). */
export async function inspectorSession(): Promise<Session> {
  if (!session) {
    // Loaded here, not at the top: a Node built without the inspector must still load the probe.
    const inspector = await import('node:inspector');
    session = new inspector.Session();
    session.connect();
  }
  return session;
}

/** A command on the probe's inspector session, its result as a promise. */
export async function post<T = unknown>(method: string, params?: object): Promise<T> {
  const current = await inspectorSession();
  return new Promise<T>((resolve, reject) =>
    current.post(method, params, (err, result) => (err ? reject(err) : resolve(result as T))),
  );
}

/**
 * Full collections a hidden class (map) with no object alive survives in a process with memory
 * on; V8's default is 2. The probe collects in bursts (up to 8 full collections at a window's
 * opening edge: the survivors profile's, the sampler's check, the edge's own), and between them
 * no request is in flight: with the default, the maps of request-scoped objects (the tick queue's
 * among them) are freed, V8 throws away the optimized code that embeds them ("weak objects") and
 * optimizes it again, slower: a JSON route's `nextTick` went from 0.4 % to 4.2 % of its CPU time,
 * +20–25 % CPU per request, in every run with those bursts, none without. 32 outlasts the bursts;
 * a map kept is a few hundred bytes, and one with objects alive is kept whatever the setting.
 * Other objects an atomic full collection frees cost the code that embeds them whatever this
 * says, which is why the edges collect incrementally (probe-collection.ts).
 */
export const RETAIN_MAPS_FOR_GCS = 32;

/**
 * Sets V8's --retain-maps-for-n-gc to RETAIN_MAPS_FOR_GCS, once, unless the server set it itself
 * (see there). At activation, before the server's requests make their maps. Never throws.
 */
export function retainMaps(): void {
  if (process.execArgv.some((a) => a.includes('retain-maps-for-n-gc'))) return;
  if ((process.env.NODE_OPTIONS ?? '').includes('retain-maps-for-n-gc')) return;
  try {
    v8.setFlagsFromString(`--retain-maps-for-n-gc=${RETAIN_MAPS_FOR_GCS}`);
  } catch {
    // a V8 without the flag: its default it is
  }
}

let fullGc: (() => void) | null | undefined;

/**
 * The forced full collection where the incremental one cannot run (see collect): V8's own, the
 * one `--expose-gc` gives, without exposing it to the server's code:
 * the flag is set for as long as a new context is made (only that context gets `gc`), then unset
 * unless the server was started with it. The inspector's `HeapProfiler.collectGarbage` would do
 * too, but it collects to reduce memory: it shrinks the young generation to its least (32 MiB to
 * 1 MiB here), and the window after it runs with 2–3 times as many scavenges (+14–31 % CPU per
 * request on a JSON route allocating 10 KB a request). Null where it cannot (that fallback then).
 */
export function fullCollector(): (() => void) | null {
  if (fullGc !== undefined) return fullGc;
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return (fullGc = own as () => void);
  fullGc = null;
  try {
    v8.setFlagsFromString('--expose-gc');
    const made = runInNewContext('gc') as unknown;
    if (typeof made === 'function') fullGc = made as () => void;
  } catch {
    // no such flag or context: the inspector's collection it is
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  return fullGc;
}

/**
 * A full collection (twice: objects freed by the first one's finalizers go in the second): V8's
 * incremental one where it can (see probe-collection.ts), else forced.
 */
export async function collect(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    if (await incrementalCollection()) continue;
    const gc = fullCollector();
    if (gc) gc();
    else await post('HeapProfiler.collectGarbage');
  }
}

/** v8.GCProfiler where this Node has it (18.15 and later). */
function gcProfiler(): GcProfiler | undefined {
  const Profiler = (v8 as unknown as { GCProfiler?: new () => GcProfiler }).GCProfiler;
  return typeof Profiler === 'function' ? new Profiler() : undefined;
}

/** A warm-up's record of collections and CPU time, for its rate of allocation. */
export interface AllocationMeter {
  startUsed: number;
  cpu: NodeJS.CpuUsage;
  profiler: GcProfiler;
}

/** Starts measuring how fast the process allocates; undefined where it cannot. Never throws. */
export function startAllocationMeter(): AllocationMeter | undefined {
  try {
    const profiler = gcProfiler();
    if (!profiler) return undefined;
    profiler.start();
    return { startUsed: v8.getHeapStatistics().used_heap_size, cpu: process.cpuUsage(), profiler };
  } catch {
    return undefined;
  }
}

/**
 * Bytes the JS heap allocated per second of the process's CPU time since the meter started (so
 * that idle time and the share of the machine it got do not matter); undefined with under 50 ms
 * of CPU time to go by, or where it cannot tell. Stops the meter. Never throws.
 */
export function allocationRate(meter: AllocationMeter | undefined): number | undefined {
  if (!meter) return undefined;
  try {
    const endUsed = v8.getHeapStatistics().used_heap_size;
    const records = meter.profiler.stop()?.statistics ?? [];
    const cpu = process.cpuUsage(meter.cpu);
    const seconds = (cpu.user + cpu.system) / 1e6;
    return seconds < 0.05 ? undefined : allocatedBetween(meter.startUsed, records, endUsed) / seconds;
  } catch {
    return undefined;
  }
}

/**
 * The opening collection and what is alive after it; undefined where this Node cannot record the
 * window's collections (v8.GCProfiler) or any step fails.
 */
export async function openMemory(): Promise<MemoryEdge | undefined> {
  try {
    if (!gcProfiler()) return undefined;
    await collect();
    const usage = process.memoryUsage();
    return { heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers };
  } catch {
    return undefined;
  }
}

/**
 * Starts the window's record of collections (its allocated bytes and GC time count from here, not
 * from the edge); undefined without an edge or where it cannot.
 */
export function startMemoryRecord(edge: MemoryEdge | undefined): MemoryRecording | undefined {
  if (!edge) return undefined;
  try {
    const profiler = gcProfiler();
    if (!profiler) return undefined;
    const startUsed = v8.getHeapStatistics().used_heap_size;
    profiler.start();
    return { edge, profiler, startUsed };
  } catch {
    return undefined;
  }
}

/**
 * Bytes allocated between the window's start and `endUsed`: the heap only grows by allocation
 * between two collections, so each collection's heap before it, less the heap after the previous
 * one (the start's for the first), is what was allocated in between.
 */
export function allocatedBetween(startUsed: number, records: readonly GcRecord[], endUsed: number): number {
  let previous = startUsed;
  let allocated = 0;
  for (const r of records) {
    allocated += Math.max(0, r.beforeGC.heapStatistics.usedHeapSize - previous);
    previous = r.afterGC.heapStatistics.usedHeapSize;
  }
  return allocated + Math.max(0, endUsed - previous);
}

/** What the window's record of collections says when it ends: the collections and the heap then. */
export interface MemoryRecord {
  records: GcRecord[];
  endUsed: number;
}

/** Ends the record of collections and reads the heap (before anything else allocates). */
export function endMemoryRecord(recording: MemoryRecording | undefined): MemoryRecord | undefined {
  if (!recording) return undefined;
  try {
    const endUsed = v8.getHeapStatistics().used_heap_size;
    return { records: recording.profiler.stop()?.statistics ?? [], endUsed };
  } catch {
    return undefined;
  }
}

/** The closing collection and the window's memory from its record; undefined where it cannot. */
export async function closeMemory(
  recording: MemoryRecording | undefined,
  ending: MemoryRecord | undefined,
): Promise<MemoryWindow | undefined> {
  if (!recording || !ending) return undefined;
  const { edge } = recording;
  try {
    const { records, endUsed } = ending;
    await collect();
    const usage = process.memoryUsage();
    let gcMicros = 0;
    let gcMaxMicros = 0;
    for (const r of records) {
      gcMicros += r.cost;
      gcMaxMicros = Math.max(gcMaxMicros, r.cost);
    }
    return {
      heapStart: edge.heapUsed,
      heapEnd: usage.heapUsed,
      externalStart: edge.external,
      externalEnd: usage.external,
      arrayBuffersStart: edge.arrayBuffers,
      arrayBuffersEnd: usage.arrayBuffers,
      allocatedBytes: allocatedBetween(recording.startUsed, records, endUsed),
      gcMicros,
      gcMaxMicros,
      gcCount: records.length,
    };
  } catch {
    return undefined;
  }
}
