import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { HotpathTicksError, profileInProcess, startProfiling, stopProfiling } from '../src/index.js';
import { defined } from './helpers/defined.js';

/** v8-profiler-next is an optional (native) dependency: where it did not install, the fallback runs. */
const nativeProfiler = (() => {
  try {
    createRequire(import.meta.url)('v8-profiler-next');
    return true;
  } catch {
    return false;
  }
})();

function spinHotLoop(ms: number): number {
  let x = 0;
  const until = Date.now() + ms;
  while (Date.now() < until) for (let i = 0; i < 1000; i++) x = (x + i * 7) % 1000003;
  return x;
}

describe('in-process profiling', () => {
  it('profileInProcess names the hot function, using v8-profiler-next when it loads', async () => {
    const { result, profile, profiler } = await profileInProcess(() => `spun: ${spinHotLoop(300) >= 0}`, {
      samplingIntervalMicros: 500,
    });
    expect(result).toBe('spun: true'); // the function's own result comes back
    const expected = nativeProfiler ? 'v8-profiler-next' : 'inspector';
    expect(profiler).toBe(expected);
    expect(profile.meta?.profiler).toBe(expected);
    const hot = profile.functions.find((f) => f.name === 'spinHotLoop');
    expect(hot?.kind).toBe('js');
    expect(hot?.file).toMatch(/in-process\.test\.ts$/);
    expect(defined(hot, 'spinHotLoop').total).toBeGreaterThan(profile.totalTicks * 0.3);
  });

  it('falls back to node:inspector (asked for here) and says so', async () => {
    const session = await startProfiling({ profiler: 'inspector', samplingIntervalMicros: 500 });
    expect(session.profiler).toBe('inspector');
    spinHotLoop(300);
    const profile = await stopProfiling(session);
    expect(profile.meta?.profiler).toBe('inspector');
    // The samples land in this file's code (the hot loop, possibly inlined into its caller by now).
    const here = profile.functions.filter((f) => f.kind === 'js' && f.file.endsWith('in-process.test.ts'));
    expect(Math.max(...here.map((f) => f.total))).toBeGreaterThan(profile.totalTicks * 0.3);
    await expect(session.stop()).rejects.toMatchObject({ code: 'HP_TICKS_PROFILER_STATE' });
  });

  it('profiles async functions and rethrows their errors after stopping', async () => {
    const { result } = await profileInProcess(async () => {
      await new Promise((r) => setTimeout(r, 20));
      return 'done';
    });
    expect(result).toBe('done');
    await expect(
      profileInProcess(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
  });

  it('rejects a bad sampling interval', async () => {
    const error = await startProfiling({ samplingIntervalMicros: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HotpathTicksError);
    expect((error as HotpathTicksError).code).toBe('HP_TICKS_BAD_OPTION');
  });
});
