import { createRequire } from 'node:module';
import { type CpuSamplerOptions, type InProcessProfiler, startCpuSampler } from './cpu-sampler.js';
import { parseCpuProfile } from './cpuprofile.js';
import type { Profile } from './model.js';

export type { InProcessProfiler };

export type InProcessOptions = Omit<CpuSamplerOptions, 'loadV8ProfilerNext'>;

/** A running CPU profile of this process. */
export interface ProfilingSession {
  readonly profiler: InProcessProfiler;
  /** Stops sampling and returns the profile (`meta.profiler` says which profiler ran). */
  stop(): Promise<Profile>;
}

function withProfiler(profile: Profile, profiler: InProcessProfiler, warnings: string[]): Profile {
  profile.meta = { ...profile.meta, profiler };
  profile.warnings.push(...warnings);
  return profile;
}

/**
 * Starts a CPU profile of this process with v8-profiler-next (loaded lazily), or with node:inspector
 * when that cannot load or `options.profiler` is 'inspector'. `session.profiler` says which runs.
 */
export async function startProfiling(options: InProcessOptions = {}): Promise<ProfilingSession> {
  const sampler = await startCpuSampler({
    ...options,
    loadV8ProfilerNext: () => createRequire(import.meta.url)('v8-profiler-next'),
  });
  return {
    profiler: sampler.profiler,
    async stop() {
      const raw = await sampler.stop();
      return withProfiler(parseCpuProfile(raw), sampler.profiler, sampler.fallback ? [sampler.fallback] : []);
    },
  };
}

/** Stops a session from `startProfiling` and returns its profile. */
export function stopProfiling(session: ProfilingSession): Promise<Profile> {
  return session.stop();
}

/** Profiles `fn` (sync or async) and returns its result with the CPU profile of the call. */
export async function profileInProcess<T>(
  fn: () => T | Promise<T>,
  options: InProcessOptions = {},
): Promise<{ result: T; profile: Profile; profiler: InProcessProfiler }> {
  const session = await startProfiling(options);
  let result: T;
  try {
    result = await fn();
  } catch (error) {
    await session.stop().catch(() => undefined);
    throw error;
  }
  const profile = await session.stop();
  return { result, profile, profiler: session.profiler };
}
