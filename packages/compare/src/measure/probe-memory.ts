// The probe's memory edges (bundled into probe.cjs with probe.ts): at each edge of the measured
// window a full collection forced through an inspector session, outside the timed window, then the
// heap, external and array-buffer bytes still alive; during the window v8.GCProfiler's record of
// every collection, from which the bytes allocated and the time spent collecting follow. Never
// throws: a process where any part is missing reports no memory.
import type { Session } from 'node:inspector';
import v8 from 'node:v8';
import type { MemoryWindow } from '../model.js';

interface GcRecord {
  cost: number;
  beforeGC: { heapStatistics: { usedHeapSize: number } };
  afterGC: { heapStatistics: { usedHeapSize: number } };
}
interface GcProfiler {
  start(): void;
  stop(): { statistics: GcRecord[] } | undefined;
}

export interface MemoryEdge {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  profiler: GcProfiler;
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

/** A full collection (twice: objects freed by the first one's finalizers go in the second). */
export async function collect(): Promise<void> {
  for (let i = 0; i < 2; i++) await post('HeapProfiler.collectGarbage');
}

/** Collects, reads what is alive and starts recording collections; undefined where it cannot. */
export async function openMemory(): Promise<MemoryEdge | undefined> {
  try {
    const Profiler = (v8 as unknown as { GCProfiler?: new () => GcProfiler }).GCProfiler;
    if (typeof Profiler !== 'function') return undefined;
    await collect();
    const usage = process.memoryUsage();
    const profiler = new Profiler();
    profiler.start();
    return {
      heapUsed: usage.heapUsed,
      external: usage.external,
      arrayBuffers: usage.arrayBuffers,
      profiler,
    };
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

/**
 * Stops recording, collects, and returns the window's memory; undefined where it cannot.
 * `beforeCollect` runs between the end of the record and the closing collection (what it
 * allocates counts in neither).
 */
/** What the window's record of collections says when it ends: the collections and the heap then. */
export interface MemoryRecord {
  records: GcRecord[];
  endUsed: number;
}

/** Ends the record of collections and reads the heap (before anything else allocates). */
export function endMemoryRecord(edge: MemoryEdge | undefined): MemoryRecord | undefined {
  if (!edge) return undefined;
  try {
    const endUsed = v8.getHeapStatistics().used_heap_size;
    return { records: edge.profiler.stop()?.statistics ?? [], endUsed };
  } catch {
    return undefined;
  }
}

/** The closing collection and the window's memory from its record; undefined where it cannot. */
export async function closeMemory(
  edge: MemoryEdge | undefined,
  ending: MemoryRecord | undefined,
): Promise<MemoryWindow | undefined> {
  if (!edge || !ending) return undefined;
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
      allocatedBytes: allocatedBetween(edge.heapUsed, records, endUsed),
      gcMicros,
      gcMaxMicros,
      gcCount: records.length,
    };
  } catch {
    return undefined;
  }
}
