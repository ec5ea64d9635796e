// The probe's full collection as V8 runs its own (bundled into probe.cjs with probe.ts): an
// incremental one, started by external-memory pressure and finished by V8's own task, instead
// of the atomic one `gc()` or the inspector's collectGarbage forces.
//
// Why: an atomic full collection, forced or not, frees objects that the optimized code embeds
// (V8 marks that code for deoptimization, "weak objects"), which V8's incremental collections
// keep: an HTTP server's ~20 functions were thrown away at every forced collection after a
// warm-up and none at an incremental one (Node 20 and 24 alike), and the code optimized again
// after it stayed slower for good — a JSON route's CPU per request +3.4 % [+1.3, +5.4] beside
// the same server without the collection, +4.4 % with 3 s between the collection and the window;
// with the incremental collection +1.3 % [−0.7, +3.2] and +0.1 % [−3.0, +3.3] (12 pairs each).
//
// How: an ArrayBuffer of EXTERNAL_NUDGE bytes, never touched (its pages are never resident),
// goes past V8's soft limit of external memory (64 MiB above the level after the last full
// collection), so V8 starts incremental marking, and lets go at once; the next major collection
// (a `gc` performance entry) is the one it started. Where V8's hard limit is near (half the old
// generation: a small heap limit) or no major collection comes, undefined: the caller forces one.
import v8 from 'node:v8';

/** Bytes of the untouched ArrayBuffer that starts the collection: past V8's 64 MiB soft limit. */
export const EXTERNAL_NUDGE = 80 * 1024 * 1024;
/** Heap limits below this leave V8's hard limit of external memory (which collects atomically) too near. */
const MIN_HEAP_LIMIT = 1024 * 1024 * 1024;
/** How long to wait for the major collection the nudge starts, and for its ArrayBuffer to be freed. */
const TIMEOUT_MS = 2000;

/**
 * One incremental full collection, started by external-memory pressure and waited for; true
 * when it ran and its ArrayBuffer was freed again, false where the caller must force one. Never throws.
 */
export async function incrementalCollection(): Promise<boolean> {
  try {
    if (v8.getHeapStatistics().heap_size_limit < MIN_HEAP_LIMIT) return false;
    const { PerformanceObserver, constants } = await import('node:perf_hooks');
    const before = process.memoryUsage().arrayBuffers;
    const collected = await new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const observer = new PerformanceObserver((list) => {
        const major = list
          .getEntries()
          .some(
            (e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR,
          );
        if (!major) return;
        observer.disconnect();
        clearTimeout(timer);
        resolve(true);
      });
      observer.observe({ entryTypes: ['gc'] });
      timer = setTimeout(() => {
        observer.disconnect();
        resolve(false);
      }, TIMEOUT_MS);
      nudge();
    });
    return collected && (await nudgeFreed(before));
  } catch {
    return false;
  }
}

/** The ArrayBuffer, made and let go (V8 counts its bytes as external memory when it is made). */
function nudge(): void {
  const buffer = new ArrayBuffer(EXTERNAL_NUDGE);
  if (buffer.byteLength !== EXTERNAL_NUDGE) throw new Error('no nudge');
}

/**
 * Waits until the nudge's bytes have left `arrayBuffers` (V8 frees a dead ArrayBuffer's memory
 * on a sweeper thread after the collection): the edges read it. False when they do not in time.
 */
async function nudgeFreed(before: number): Promise<boolean> {
  const deadline = Date.now() + TIMEOUT_MS;
  while (process.memoryUsage().arrayBuffers >= before + EXTERNAL_NUDGE / 2) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return true;
}
